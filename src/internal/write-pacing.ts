import { everyInterval } from './advisory-loop.ts';

/**
 * Searches first: a worker's engine requests leave the engine gaps while its searches run slow.
 *
 * The signal is the engine's own: the mean time of the searches it ran (query phase, all nodes)
 * over each second, against the fastest such second of the last ten minutes (the engine's
 * uncontended time, as a round-trip-time filter keeps the least RTT). While the ratio is over
 * {@link SLOW}, the pause after each bulk request grows (a multiple of the request's own time, up
 * to `maxFactor`); under {@link FAST} it shrinks; with no searches to yield to, there is none.
 * Measured (bench/steady-state.md, "Searches first"): on a steady day at 20k posts, searches during
 * the day at p50 1.53× idle instead of 1.92×, for a day 1.37× as long; the p99 did not move (it is
 * set by stalls of a whole process that hit every search in flight at once). One job and one bulk
 * at a time instead of a pause spared the searches less (p50 1.67×).
 */

/** The engine's search totals since it started: searches (per shard) and their summed time, ms. */
export interface SearchTimes {
  queries: number;
  millis: number;
}

/** What a process's writes ask before their next request. */
export interface WritePacing {
  /** The pause owed after a bulk request that took `ms` (0 while searches run at their usual pace). */
  pauseAfter(ms: number): number;
}

/**
 * Runs one engine request, then waits the pause `pacing` asks for the time it took (none without
 * pacing, or when the request fails).
 */
export async function paced<T>(pacing: WritePacing | undefined, request: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await request();
  const pause = pacing?.pauseAfter(performance.now() - started) ?? 0;
  if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  return result;
}

/** Over this many times the fastest recent interval, searches are slow: pauses grow. */
export const SLOW = 2;
/** Under this, pauses shrink. */
export const FAST = 1.5;

/** The pacing's decisions from the engine's totals, read each interval ({@link startWritePacing}). */
export interface PacingController extends WritePacing {
  /** The current pause factor: the pause as a multiple of the request's time. */
  factor(): number;
  /** The engine's totals at `at` (ms, any monotonic clock). */
  observe(at: number, totals: SearchTimes): void;
}

/** The controller alone (pure: no timer, no engine), for {@link startWritePacing} and tests. */
export function createPacingController(
  options: {
    /** How far back the fastest interval is remembered, ms (default 10 minutes). */
    windowMs?: number;
    /** An interval with fewer searches says nothing about them (default 10). */
    minQueries?: number;
    /** The longest pause, as a multiple of the request's time (default 2: the engine writes a third of the time). */
    maxFactor?: number;
  } = {},
): PacingController {
  const windowMs = options.windowMs ?? 10 * 60_000;
  const minQueries = options.minQueries ?? 10;
  const maxFactor = options.maxFactor ?? 2;
  let factor = 0;
  let last: { at: number; totals: SearchTimes } | null = null;
  /** Each interval's mean search time, oldest first (the window's least is the baseline). */
  const means: Array<{ at: number; mean: number }> = [];

  return {
    observe(at, totals) {
      const previous = last;
      last = { at, totals };
      if (!previous) return;
      const queries = totals.queries - previous.totals.queries;
      // Too few searches (or totals that went back: a node restarted): nothing to yield to.
      if (queries < minQueries) {
        factor = 0;
        return;
      }
      const mean = (totals.millis - previous.totals.millis) / queries;
      means.push({ at, mean });
      while (means[0]!.at < at - windowMs) means.shift();
      // The engine reports whole milliseconds: a baseline under one is a tenth of one at least.
      const baseline = Math.max(0.1, Math.min(...means.map((m) => m.mean)));
      const ratio = mean / baseline;
      if (ratio > SLOW) factor = Math.min(maxFactor, factor === 0 ? 0.5 : factor * 2);
      else if (ratio < FAST) factor = factor <= 0.25 ? 0 : factor / 2;
    },
    pauseAfter: (ms) => ms * factor,
    factor: () => factor,
  };
}

/**
 * Reads the engine's totals every `intervalMs` (default 1,000; a worker's lifetime, from before
 * its first write, so the baseline is the engine without them) and paces by them. `sample` errors
 * leave the pace as last decided: the signal is advisory. `close` stops the timer.
 */
export function startWritePacing(options: {
  sample: () => Promise<SearchTimes>;
  intervalMs?: number;
  controller?: PacingController;
}): WritePacing & { close(): void } {
  const controller = options.controller ?? createPacingController();
  const stop = everyInterval(options.intervalMs ?? 1000, async () => {
    const totals = await options.sample();
    controller.observe(performance.now(), totals);
  });
  return {
    pauseAfter: (ms) => controller.pauseAfter(ms),
    close: stop,
  };
}
