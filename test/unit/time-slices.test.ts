import { describe, expect, it } from 'vitest';
import { createLane, yieldAfter } from '../../src/internal/time-slices.ts';

/** Sliced work that logs each of its steps, yielding after every one. */
async function steps(name: string, n: number, log: string[]): Promise<string> {
  let slice = performance.now();
  for (let i = 0; i < n; i++) {
    log.push(`${name}${i}`);
    slice = await yieldAfter(slice, 0);
  }
  return name;
}

describe('createLane', () => {
  it('runs sliced work one piece at a time, in the order asked', async () => {
    const log: string[] = [];
    const lane = createLane();
    const results = await Promise.all([lane(() => steps('a', 3, log)), lane(() => steps('b', 3, log))]);
    expect(results).toEqual(['a', 'b']);
    expect(log).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
  });

  it('goes on after a piece that failed, and hands the failure to its caller only', async () => {
    const lane = createLane();
    const failed = lane(async () => {
      throw new Error('broken request');
    });
    const next = lane(async () => 'next');
    await expect(failed).rejects.toThrow('broken request');
    await expect(next).resolves.toBe('next');
  });

  it('lets the event loop turn between slices but not within one', async () => {
    const log: string[] = [];
    setImmediate(() => log.push('turn'));
    await steps('a', 2, log);
    expect(log.indexOf('turn')).toBeGreaterThan(0);
    const quiet: string[] = [];
    setImmediate(() => quiet.push('turn'));
    quiet.push('x');
    await yieldAfter(performance.now(), 60_000);
    expect(quiet).toEqual(['x']);
  });
});
