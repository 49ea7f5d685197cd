import { describe, expect, it } from 'vitest';
import {
  bucketStarts,
  bucketStartText,
  canonicalTimeZone,
  countWindow,
  nextBucketStart,
  postedAtBounds,
} from '../../src/query/count-window.ts';
import { postCountsRequestSchema } from '../../src/query/counts-request.ts';

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

describe('post counts: time zones and calendar buckets', () => {
  it('spell IANA names canonically and refuse offsets and unknown names', () => {
    expect(canonicalTimeZone('europe/paris')).toBe('Europe/Paris');
    expect(canonicalTimeZone('US/Eastern')).toBe('America/New_York');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    for (const bad of ['+02:00', 'Mars/Olympus', '', 'Europe/Paris; DROP', 'x'.repeat(80)])
      expect(canonicalTimeZone(bad), bad).toBeNull();
  });

  it('cut Paris days of 23 and 25 hours, Monday weeks and calendar months', () => {
    const paris = { interval: 'day' as const, timeZone: 'Europe/Paris' };
    const march = bucketStarts({ ...paris, from: at('2026-03-28T12:00:00Z'), to: at('2026-03-30T12:00:00Z') });
    expect(march.map((s) => bucketStartText(s, 'Europe/Paris'))).toEqual([
      '2026-03-28T00:00:00+01:00',
      '2026-03-29T00:00:00+01:00',
      '2026-03-30T00:00:00+02:00',
    ]);
    expect((march[2]! - march[1]!) / HOUR).toBe(23);
    const october = bucketStarts({ ...paris, from: at('2026-10-25T00:00:00Z'), to: at('2026-10-26T12:00:00Z') });
    expect((october[1]! - october[0]!) / HOUR).toBe(25);
    const weeks = bucketStarts({
      interval: 'week',
      timeZone: 'UTC',
      from: at('2026-03-01T12:00:00Z'),
      to: at('2026-03-03T00:00:00Z'),
    });
    // Sunday 1 March belongs to the week of Monday 23 February.
    expect(weeks.map((s) => bucketStartText(s, 'UTC'))).toEqual([
      '2026-02-23T00:00:00+00:00',
      '2026-03-02T00:00:00+00:00',
    ]);
    const month = { interval: 'month' as const, timeZone: 'Asia/Kolkata' };
    expect(bucketStartText(nextBucketStart(at('2026-01-31T20:00:00Z'), month), 'Asia/Kolkata')).toBe(
      '2026-03-01T00:00:00+05:30',
    );
  });

  it('take the window from the top-level posted_at bounds, else the last 30 days, and stop past the limit', () => {
    const request = postCountsRequestSchema.parse({
      post: {
        filters: { posted_at: { gt: '2026-01-01T00:00:00Z', lte: '2026-01-02T00:00:00Z' }, views: { gte: 1 } },
        author: { filters: { followers_count: { gte: 10 } } },
      },
      interval: 'hour',
    });
    expect(postedAtBounds(request.search.filter)).toEqual({
      from: at('2026-01-01T00:00:00Z'),
      to: at('2026-01-02T00:00:00Z') + 1,
    });
    const window = countWindow(request.search.filter, { interval: 'hour', timeZone: 'UTC', now: 0 });
    expect(bucketStarts(window)).toHaveLength(25);
    // A bound inside `any_of` bounds nothing: the window is the last 30 days.
    const nested = postCountsRequestSchema.parse({
      post: { filters: { any_of: [{ posted_at: { gte: '2026-01-01T00:00:00Z' } }, { views: { gte: 1 } }] } },
      interval: 'day',
    });
    const now = at('2026-11-29T10:00:00Z');
    const last30 = countWindow(nested.search.filter, { interval: 'day', timeZone: 'UTC', now });
    expect(last30).toEqual({ from: now - 30 * 24 * HOUR, to: now, interval: 'day', timeZone: 'UTC' });
    expect(bucketStarts(last30)).toHaveLength(31);
    expect(bucketStarts({ ...last30, interval: 'hour', from: 0 }, 1000)).toHaveLength(1001);
  });
});
