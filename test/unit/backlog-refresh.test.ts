import { describe, expect, it } from 'vitest';
import { CAUGHT_UP_MS, createBacklogController, durationMs } from '../../src/internal/backlog-refresh.ts';

const waiting = (ms: number | null, paused = false) => ({ oldestWaitingMs: ms, paused });

describe('backlog refresh (the intake behind its queue)', () => {
  it('stays steady while batches wait less than the backlog interval', () => {
    const controller = createBacklogController({ behindAfterMs: 10_000 });
    for (const ms of [null, 0, 400, 3_000, 9_999, null]) expect(controller.observe(waiting(ms))).toBeNull();
    expect(controller.behind()).toBe(false);
  });

  it('is behind once the oldest batch has waited the interval, until the queue has caught up', () => {
    const controller = createBacklogController({ behindAfterMs: 10_000 });
    expect(controller.observe(waiting(10_000))).toBe('behind');
    // Still behind while the wait shrinks but stays over what a steady refresh adds.
    expect(controller.observe(waiting(40_000))).toBeNull();
    expect(controller.observe(waiting(CAUGHT_UP_MS))).toBeNull();
    expect(controller.behind()).toBe(true);
    expect(controller.observe(waiting(CAUGHT_UP_MS - 1))).toBe('caught-up');
    expect(controller.behind()).toBe(false);
    expect(controller.observe(waiting(12_000))).toBe('behind');
    expect(controller.observe(waiting(null))).toBe('caught-up');
  });

  it('sizes nothing for a paused queue: a rebuild holds its jobs, and they are not behind', () => {
    const controller = createBacklogController({ behindAfterMs: 10_000 });
    expect(controller.observe(waiting(60_000, true))).toBeNull();
    expect(controller.observe(waiting(60_000))).toBe('behind');
    expect(controller.observe(waiting(60_000, true))).toBe('caught-up');
  });

  it("reads the engine's durations, and takes -1 and anything unreadable for never", () => {
    expect(durationMs('500ms')).toBe(500);
    expect(durationMs('1s')).toBe(1000);
    expect(durationMs('30s')).toBe(30_000);
    expect(durationMs('2m')).toBe(120_000);
    expect(durationMs('1h')).toBe(3_600_000);
    expect(durationMs('-1')).toBe(Number.POSITIVE_INFINITY);
    expect(durationMs('1.5s')).toBe(Number.POSITIVE_INFINITY);
  });
});
