import { describe, expect, it } from 'vitest';
import { createSavedSearchSchema } from '../../src/query/alert-request.ts';
import { liveWindowStarts, median, volumeWindowOf } from '../../src/services/alerts/volume.ts';

describe('volume windows', () => {
  it('are calendar hours and days of the rule’s zone, DST days of 23 and 25 hours included', () => {
    const paris = { interval: 'day' as const, time_zone: 'Europe/Paris' };
    // 2026-03-29: clocks go forward in Paris, a day of 23 hours.
    const spring = volumeWindowOf(Date.parse('2026-03-29T12:00:00Z'), paris);
    expect(new Date(spring.start).toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(spring.end - spring.start).toBe(23 * 3_600_000);
    // 2026-10-25: back, 25 hours.
    const autumn = volumeWindowOf(Date.parse('2026-10-25T12:00:00Z'), paris);
    expect(autumn.end - autumn.start).toBe(25 * 3_600_000);
    const hour = volumeWindowOf(Date.parse('2026-12-01T10:59:59.999Z'), { interval: 'hour', time_zone: 'UTC' });
    expect([new Date(hour.start).toISOString(), new Date(hour.end).toISOString()]).toEqual([
      '2026-12-01T10:00:00.000Z',
      '2026-12-01T11:00:00.000Z',
    ]);
    // The windows a deleted search may still hold: the current one and the one before it.
    expect(liveWindowStarts(paris, Date.parse('2026-03-30T12:00:00Z')).map((ms) => new Date(ms).toISOString())).toEqual(
      ['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    );
  });

  it('judge a spike by the median: one earlier spike in the baseline does not hide the next', () => {
    expect(median([1, 1, 1, 50, 1, 1, 1])).toBe(1);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([0, 0, 0, 0, 0, 0, 0])).toBe(0);
  });
});

describe('a saved search’s events', () => {
  const base = { name: 'n', post: { query: 'q' } };
  const parse = (extra: Record<string, unknown>) => createSavedSearchSchema.safeParse({ ...base, ...extra });

  it('default to posts alone, and posts and volume with a rule, in a fixed order without repeats', () => {
    expect(parse({}).data?.events).toEqual(['posts']);
    expect(parse({ volume: { interval: 'hour', above: 5 } }).data?.events).toEqual(['posts', 'volume']);
    expect(
      parse({ volume: { interval: 'hour', above: 5 }, events: ['volume', 'posts', 'volume'] }).data?.events,
    ).toEqual(['posts', 'volume']);
    expect(parse({ volume: { interval: 'day', above: 5 } }).data?.volume).toEqual({
      interval: 'day',
      time_zone: 'UTC',
      above: 5,
    });
  });
});
