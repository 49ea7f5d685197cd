import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRefusalPause } from '../../src/http/plugins/refusal-pause.ts';
import { createFairShare } from '../../src/http/plugins/fair-share.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Holds `count` refusals of `id` and records when each is released. */
function holdMany(pause: ReturnType<typeof createRefusalPause>, id: string, count: number, ms: number) {
  const released: boolean[] = Array(count).fill(false);
  const all = Array.from({ length: count }, (_, i) => pause.hold(id, ms).then(() => (released[i] = true)));
  return { released, all: Promise.all(all) };
}

describe('the pause before a refusal already given', () => {
  it('holds a refusal for the shorter of the pause and the time asked, never longer', async () => {
    const pause = createRefusalPause({ pauseMs: 1000, perSubject: 4, total: 10 });
    const long = holdMany(pause, 'key-a', 1, 60_000);
    const short = holdMany(pause, 'key-b', 1, 300);
    await vi.advanceTimersByTimeAsync(299);
    expect([long.released[0], short.released[0]]).toEqual([false, false]);
    await vi.advanceTimersByTimeAsync(1);
    expect(short.released[0]).toBe(true);
    await vi.advanceTimersByTimeAsync(699);
    expect(long.released[0]).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(long.released[0]).toBe(true);
  });

  it("answers a subject's refusals past its bound at once, and every subject's past the node's, and frees both after", async () => {
    const pause = createRefusalPause({ pauseMs: 1000, perSubject: 3, total: 5 });
    const a = holdMany(pause, 'key-a', 5, 1000);
    await vi.advanceTimersByTimeAsync(0);
    // key-a holds 3; its 4th and 5th go at once.
    expect(a.released).toEqual([false, false, false, true, true]);
    expect(pause.stats()).toEqual({ held: 3, paused: 3, overBound: 2 });
    const b = holdMany(pause, 'key-b', 3, 1000);
    await vi.advanceTimersByTimeAsync(0);
    // The node holds 5: key-b's third goes at once though key-b holds only 2.
    expect(b.released).toEqual([false, false, true]);
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all([a.all, b.all]);
    // Released, the bounds hold again from zero.
    const again = holdMany(pause, 'key-a', 4, 1000);
    await vi.advanceTimersByTimeAsync(0);
    expect(again.released).toEqual([false, false, false, true]);
    await vi.advanceTimersByTimeAsync(1000);
    await again.all;
  });

  it('with a pause of 0, holds nothing', async () => {
    const pause = createRefusalPause({ pauseMs: 0, perSubject: 3, total: 5 });
    const a = holdMany(pause, 'key-a', 2, 1000);
    await vi.advanceTimersByTimeAsync(0);
    expect(a.released).toEqual([true, true]);
  });

  it("pauses the refusal of a key whose share's queue is full, and only that", async () => {
    const pause = createRefusalPause({ pauseMs: 500, perSubject: 8, total: 8 });
    const share = createFairShare({
      running: 1,
      waiting: 0,
      refuse: () => new Error('full'),
      pause: (id) => pause.hold(id, 1000),
    });
    let end!: () => void;
    const running = share.run('key-a', () => new Promise<void>((resolve) => (end = resolve)));
    let refusedAt: number | undefined;
    const refused = share
      .run('key-a', async () => undefined)
      .catch((error: Error) => {
        refusedAt = Date.now();
        return error.message;
      });
    const startedAt = Date.now();
    await vi.advanceTimersByTimeAsync(499);
    expect(refusedAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await refused).toBe('full');
    expect(refusedAt! - startedAt).toBe(500);
    end();
    await running;
  });
});
