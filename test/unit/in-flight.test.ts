import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { eachInFlight } from '../../src/internal/in-flight.ts';

describe('eachInFlight', () => {
  it('runs every item, never more than the limit at once, starting them in order', async () => {
    const started: number[] = [];
    let running = 0;
    let most = 0;
    await eachInFlight([...Array(7).keys()], 2, async (n) => {
      started.push(n);
      most = Math.max(most, ++running);
      await sleep(n % 3);
      running--;
    });
    expect(started).toEqual([...Array(7).keys()]);
    expect(most).toBe(2);
  });

  it('after a failure starts nothing more, lets the running item finish, then throws the first failure', async () => {
    const finished: number[] = [];
    const run = eachInFlight([0, 1, 2, 3, 4], 2, async (n) => {
      if (n === 0) throw new Error('first');
      await sleep(20);
      if (n === 1) throw new Error('second');
      finished.push(n);
    });
    await expect(run).rejects.toThrow('first');
    // Item 1 was running when 0 failed: it ran to its end (and failed too); 2–4 never started.
    expect(finished).toEqual([]);
  });

  it('does nothing for no items', async () => {
    await expect(eachInFlight([], 2, () => Promise.reject(new Error('never')))).resolves.toBeUndefined();
  });
});
