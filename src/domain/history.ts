/**
 * Metric history: every counter an observation carries, kept as a point per (record, observed_at).
 * Points come from the observations themselves, never from re-reading a record, so a late
 * observation adds its point without changing the record, and a repeated one adds nothing (its
 * point has the same identity).
 */
import { mintId } from '../contract/ids.ts';
import type { HistoryInterval } from '../contract/api.ts';
import { ACCOUNT_COUNTERS, POST_COUNTERS, type Observation } from '../contract/observations.ts';
import type { EntityKind } from './records.ts';

export type AccountCounter = (typeof ACCOUNT_COUNTERS)[number];
export type PostCounter = (typeof POST_COUNTERS)[number];
export type Counter = AccountCounter | PostCounter;

/** The counters of an entity kind. */
export const COUNTERS: Readonly<Record<EntityKind, readonly Counter[]>> = {
  account: ACCOUNT_COUNTERS,
  post: POST_COUNTERS,
};

/** One observation's counters. A counter the observation did not carry (a null `views`) is absent. */
export interface MetricPoint {
  entity: EntityKind;
  /** The record's service ID. */
  id: string;
  /** The observation's `observed_at` (normalized ISO 8601 UTC). */
  at: string;
  counters: Partial<Record<Counter, number>>;
}

/** The points of a batch: one per active account observation and per available post observation. */
export function metricPointsOf(observations: readonly Observation[]): MetricPoint[] {
  const points: MetricPoint[] = [];
  for (const o of observations) {
    if (o.kind === 'account' && o.status === 'active') {
      points.push({
        entity: 'account',
        id: mintId('account', o.platform_id),
        at: o.observed_at,
        counters: {
          followers_count: o.followers_count,
          following_count: o.following_count,
          posts_count: o.posts_count,
        },
      });
    } else if (o.kind === 'post' && o.status === 'available') {
      points.push({
        entity: 'post',
        id: mintId('post', o.platform_id),
        at: o.observed_at,
        counters: { ...(o.views === null ? {} : { views: o.views }), likes: o.likes, comments: o.comments },
      });
    }
  }
  return points;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The start of the UTC day or ISO week (Monday 00:00 UTC) holding `time`. */
function bucketStart(time: number, interval: 'day' | 'week'): number {
  const day = Math.floor(time / DAY_MS) * DAY_MS;
  if (interval === 'day') return day;
  // 1970-01-01 was a Thursday: days since the epoch + 3, mod 7, is days since Monday.
  const sinceMonday = (Math.floor(day / DAY_MS) + 3) % 7;
  return day - sinceMonday * DAY_MS;
}

/**
 * Points in time order, bucketed: `raw` keeps every point; `day` and `week` keep one point per
 * bucket, at the time of the bucket's last point, with each counter's last value observed in the
 * bucket (a counter no point of the bucket carried stays absent).
 *
 * @param points sorted by `at` ascending.
 */
export function bucketHistory(points: readonly MetricPoint[], interval: HistoryInterval): MetricPoint[] {
  if (interval === 'raw') return [...points];
  const out: MetricPoint[] = [];
  let start = Number.NaN;
  for (const point of points) {
    const s = bucketStart(Date.parse(point.at), interval);
    const last = out.at(-1);
    if (last && s === start) {
      out[out.length - 1] = { ...last, at: point.at, counters: { ...last.counters, ...point.counters } };
    } else {
      out.push({ ...point, counters: { ...point.counters } });
      start = s;
    }
  }
  return out;
}
