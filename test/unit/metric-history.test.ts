import { describe, expect, it } from 'vitest';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { mintId } from '../../src/contract/ids.ts';
import { bucketHistory, metricPointsOf, type MetricPoint } from '../../src/domain/history.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';

function obs(value: Record<string, unknown>): Observation {
  const parsed = parseObservation(value);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
}

const point = (at: string, counters: MetricPoint['counters']): MetricPoint => ({
  entity: 'post',
  id: 'p',
  at,
  counters,
});

describe('metricPointsOf', () => {
  it('makes one point per active account and available post observation, with the counters it carries', () => {
    const points = metricPointsOf([
      obs(accountObs({ platform_id: 'a1', followers_count: 5, following_count: 6, posts_count: 7 })),
      obs({ kind: 'account', platform_id: 'a2', status: 'deleted', observed_at: '2026-06-01T00:00:00Z' }),
      obs(postObs('a1', { platform_id: 'p1', views: null, likes: 3, comments: 1, format: 'carousel' })),
      obs({ kind: 'post', platform_id: 'p2', status: 'unavailable', observed_at: '2026-06-01T00:00:00Z' }),
    ]);
    expect(points).toEqual([
      {
        entity: 'account',
        id: mintId('account', 'a1'),
        at: '2026-06-01T10:00:00.000Z',
        counters: { followers_count: 5, following_count: 6, posts_count: 7 },
      },
      { entity: 'post', id: mintId('post', 'p1'), at: '2026-06-01T10:00:00.000Z', counters: { likes: 3, comments: 1 } },
    ]);
  });
});

describe('bucketHistory', () => {
  const points = [
    point('2026-06-01T08:00:00.000Z', { views: 10, likes: 1 }),
    point('2026-06-01T20:00:00.000Z', { likes: 2 }), // no views observed
    point('2026-06-02T01:00:00.000Z', { views: 30, likes: 3 }),
    point('2026-06-07T23:59:59.000Z', { views: 40, likes: 4 }), // Sunday: still the week of Monday 06-01
    point('2026-06-08T00:00:00.000Z', { views: 50, likes: 5 }), // Monday: a new ISO week
  ];

  it('keeps every point for raw', () => {
    expect(bucketHistory(points, 'raw')).toEqual(points);
  });

  it('keeps the last point of each UTC day, each counter at its last value observed that day', () => {
    expect(bucketHistory(points, 'day').map((p) => ({ at: p.at, ...p.counters }))).toEqual([
      { at: '2026-06-01T20:00:00.000Z', views: 10, likes: 2 },
      { at: '2026-06-02T01:00:00.000Z', views: 30, likes: 3 },
      { at: '2026-06-07T23:59:59.000Z', views: 40, likes: 4 },
      { at: '2026-06-08T00:00:00.000Z', views: 50, likes: 5 },
    ]);
  });

  it('buckets ISO weeks from Monday 00:00 UTC, and leaves out a counter no point of a bucket carried', () => {
    expect(bucketHistory(points, 'week').map((p) => ({ at: p.at, ...p.counters }))).toEqual([
      { at: '2026-06-07T23:59:59.000Z', views: 40, likes: 4 },
      { at: '2026-06-08T00:00:00.000Z', views: 50, likes: 5 },
    ]);
    expect(bucketHistory([point('2026-06-03T00:00:00.000Z', { likes: 1 })], 'week')[0]!.counters).toEqual({
      likes: 1,
    });
  });
});
