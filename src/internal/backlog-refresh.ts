import { everyInterval } from './advisory-loop.ts';

/**
 * Refreshes sized for a backlog: while the intake is behind, its writes become visible less often.
 *
 * Each refresh of an index being written turns the writes since the last one into a segment, and
 * merges later rewrite those segments into bigger ones. While observations wait in the queue, a
 * write's visibility is already late by that wait, and refreshing every second buys little
 * freshness for much engine work. So once the oldest waiting batch has waited the backlog
 * interval, the worker sets that interval on the indices the intake writes (where theirs is
 * shorter), and the batched follow-ups (fan-out, baselines, account metrics) gather that long
 * too; when the queue has caught up, both go back. A write is then visible at most one backlog
 * interval later than the queue alone would make it, an interval the queue's wait already
 * exceeded. Writes a caller waits on (`?wait=true`) are made visible on return whatever the
 * interval. Measured (bench/intake.md, "Refreshes sized for a backlog"): 102,282 observations
 * sent at once cost the engine 48–54 CPU-s instead of 56–58 (2.07–2.27× a raw bulk of the same
 * end state instead of 2.41–2.51×); their derived fields settled ~20 s after the last
 * observation instead of ~4 s.
 */

/** What the monitor reads of the observations queue each interval. */
export interface BacklogSample {
  /** How long the oldest waiting observations job has waited, ms; null when none waits. */
  oldestWaitingMs: number | null;
  /** The queue is paused (an index rebuild): nothing is processed, so there is no backlog to size for. */
  paused: boolean;
}

/** A change the controller asks for. */
export type BacklogChange = 'behind' | 'caught-up';

/** Under this wait of its oldest job the queue has caught up (the steady refresh's order). */
export const CAUGHT_UP_MS = 2000;

/** The mode's decisions from the queue's samples (pure: no timer, no engine), for tests. */
export interface BacklogController {
  /** The change this sample brings, if any. */
  observe(sample: BacklogSample): BacklogChange | null;
  behind(): boolean;
}

/** Creates the controller: behind once the oldest job waited `behindAfterMs`; caught up under {@link CAUGHT_UP_MS}. */
export function createBacklogController(options: { behindAfterMs: number }): BacklogController {
  let behind = false;
  return {
    observe(sample) {
      const wait = sample.paused ? null : sample.oldestWaitingMs;
      if (!behind && wait !== null && wait >= options.behindAfterMs) {
        behind = true;
        return 'behind';
      }
      if (behind && (wait === null || wait < CAUGHT_UP_MS)) {
        behind = false;
        return 'caught-up';
      }
      return null;
    },
    behind: () => behind,
  };
}

/**
 * An engine duration (`500ms`, `1s`, `2m`, `-1`) in ms; `-1` (never on its own) is infinite, as is
 * anything unreadable (so it is never taken for a shorter one).
 */
export function durationMs(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value.trim());
  const unit = match ? UNIT_MS.get(match[2]!) : undefined;
  return match && unit ? Number(match[1]) * unit : Number.POSITIVE_INFINITY;
}

/** Milliseconds in each unit of the engine's durations. */
const UNIT_MS = new Map([
  ['ms', 1],
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
]);

/** What the worker's other parts ask of the mode. */
export interface BacklogRefresh {
  /** How long a follow-up run gathers work before it starts: `steadyMs`, or the backlog interval while behind. */
  followUpDelayMs(steadyMs: number): number;
  close(): void;
}

/** Re-applies the backlog interval every this many samples while behind (a rebuild's swap or `indices apply` may have reset it). */
const REASSERT_EVERY = 10;

/**
 * Samples the queue every `intervalMs` (default 1,000) and, on each change, sets the indices'
 * refresh interval: `apply(interval)` raises them to `interval` where shorter, `apply(null)` sets
 * the configured one back. A failed sample or apply changes nothing (the next sample retries the
 * apply); the mode is advisory, so it never fails the worker.
 */
export function startBacklogRefresh(options: {
  interval: string;
  sample: () => Promise<BacklogSample>;
  apply: (interval: string | null) => Promise<unknown>;
  onChange?: (change: BacklogChange, sample: BacklogSample) => void;
  intervalMs?: number;
  controller?: BacklogController;
}): BacklogRefresh {
  const backlogMs = durationMs(options.interval);
  const controller = options.controller ?? createBacklogController({ behindAfterMs: backlogMs });
  // Whether the engine holds what the mode asks (false: apply at the next sample). False at start:
  // a worker stopped while behind left the interval raised, and the first sample sets it right.
  let applied = false;
  let samples = 0;
  const tick = async () => {
    const sample = await options.sample();
    const change = controller.observe(sample);
    if (change) {
      applied = false;
      options.onChange?.(change, sample);
    }
    samples++;
    if (controller.behind() && samples % REASSERT_EVERY === 0) applied = false;
    if (applied) return;
    await options.apply(controller.behind() ? options.interval : null);
    applied = true;
  };
  const stop = everyInterval(options.intervalMs ?? 1000, tick);
  return {
    followUpDelayMs: (steadyMs) => (controller.behind() ? Math.max(steadyMs, backlogMs) : steadyMs),
    close: stop,
  };
}
