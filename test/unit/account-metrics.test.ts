import { describe, expect, it } from 'vitest';
import {
  accountMetrics,
  accountPostMetrics,
  followersGrowth,
  NO_ACCOUNT_METRICS,
  type AccountPostFacts,
} from '../../src/domain/derived.ts';
import { withAccountMetrics } from '../../src/domain/merge.ts';
import { emptyAccount, snapshotOf, isNewerVersion } from '../../src/domain/records.ts';

const T = '2026-06-30T12:00:00.000Z';
const daysBefore = (days: number, base = T) => new Date(Date.parse(base) - days * 86_400_000).toISOString();
const latest = { at: T, followers: 10_500 };

describe('followersGrowth', () => {
  it('compares with the observation closest to N days before the latest, within ±2 days', () => {
    const history = [
      { at: daysBefore(9.5), followers: 1 }, // outside the window: ignored
      { at: daysBefore(8.5), followers: 9_000 },
      { at: daysBefore(6.75), followers: 10_000 }, // 0.25 d from the target: the closest
      { at: daysBefore(5.5), followers: 9_500 },
    ];
    expect(followersGrowth(latest, history, 7)).toBeCloseTo(0.05, 12);
  });

  it('is null without an observation within ±2 days of the target, or when it counted 0 followers', () => {
    expect(followersGrowth(latest, [{ at: daysBefore(9.01), followers: 100 }], 7)).toBeNull();
    expect(followersGrowth(latest, [{ at: daysBefore(4.99), followers: 100 }], 7)).toBeNull();
    expect(followersGrowth(latest, [], 30)).toBeNull();
    expect(followersGrowth(latest, [{ at: daysBefore(30), followers: 0 }], 30)).toBeNull();
  });

  it('takes the later of two equally close observations, whatever their order', () => {
    const pair = [
      { at: daysBefore(31), followers: 8_000 },
      { at: daysBefore(29), followers: 10_000 },
    ];
    expect(followersGrowth(latest, pair, 30)).toBeCloseTo(0.05, 12);
    expect(followersGrowth(latest, [...pair].reverse(), 30)).toBeCloseTo(0.05, 12);
  });

  it('answers a decline as a negative fraction', () => {
    expect(followersGrowth({ at: T, followers: 900 }, [{ at: daysBefore(30), followers: 1000 }], 30)).toBeCloseTo(
      -0.1,
      12,
    );
  });
});

describe('accountPostMetrics', () => {
  const post = (days: number, views: number | null, likes = 0, comments = 0): AccountPostFacts => ({
    postedAt: daysBefore(days),
    views,
    likes,
    comments,
  });

  it('takes the medians over the posts with views of the 90 days before observed_at', () => {
    const posts = [
      post(1, 100, 10, 0), // rate 0.1
      post(10, 300, 15, 15), // 0.1
      post(20, 200, 50, 0), // 0.25
      post(89.9, 1000, 10, 0), // 0.01
      post(30, null, 500, 50), // no views: counted per week, not in the medians
      post(90.1, 1_000_000, 0, 0), // too old
      post(-1, 1_000_000, 0, 0), // posted after observed_at
    ];
    const m = accountPostMetrics(T, posts);
    expect(m.median_views_90d).toBe(250); // 100, 200, 300, 1000
    expect(m.engagement_rate_90d).toBeCloseTo(0.1, 12); // 0.01, 0.1, 0.1, 0.25
    expect(m.posts_per_week_90d).toBeCloseTo(5 / (90 / 7), 12);
  });

  it('is null for the medians with fewer than 3 posts with views, and 0 posts a week without posts', () => {
    const m = accountPostMetrics(T, [post(1, 100), post(2, 200), post(3, null)]);
    expect(m.median_views_90d).toBeNull();
    expect(m.engagement_rate_90d).toBeNull();
    expect(accountPostMetrics(T, []).posts_per_week_90d).toBe(0);
  });

  it('leaves posts with 0 views out of the engagement median (their rate is null)', () => {
    const m = accountPostMetrics(T, [post(1, 0, 5), post(2, 100, 10), post(3, 100, 20), post(4, 100, 30)]);
    expect(m.median_views_90d).toBe(100);
    expect(m.engagement_rate_90d).toBeCloseTo(0.2, 12);
  });
});

describe('accountMetrics', () => {
  it('is all null for a private account and for one never observed active', () => {
    const inputs = { followers: [{ at: daysBefore(7), followers: 1 }], posts: [] };
    expect(accountMetrics({ ...inputs, latest, isPrivate: true })).toEqual(NO_ACCOUNT_METRICS);
    expect(accountMetrics({ ...inputs, latest: null, isPrivate: false })).toEqual(NO_ACCOUNT_METRICS);
  });
});

describe('withAccountMetrics', () => {
  const metrics = { ...NO_ACCOUNT_METRICS, posts_per_week_90d: 1 };

  it('keeps the same record when the metrics are unchanged', () => {
    const once = withAccountMetrics(emptyAccount('a', 'p'), metrics, new Date(T));
    expect(withAccountMetrics(once, { ...metrics }, new Date(T))).toBe(once);
  });

  it('moves the account version forward on every change, even when the clock goes back', () => {
    const first = withAccountMetrics(emptyAccount('a', 'p'), metrics, new Date(T));
    const second = withAccountMetrics(first, { ...metrics, posts_per_week_90d: 2 }, new Date(daysBefore(1)));
    expect(second.metrics!.t > first.metrics!.t).toBe(true);
    expect(isNewerVersion(snapshotOf(second).version, snapshotOf(first).version)).toBe(true);
    // Posts do not keep the metrics (src/domain/volatile-facts.ts): the account's version still moves.
    expect(snapshotOf(second)).not.toHaveProperty('metrics');
    expect(second.metrics!.v).toEqual({ ...metrics, posts_per_week_90d: 2 });
  });
});
