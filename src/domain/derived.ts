/**
 * Metrics the service derives itself (operations contract §4). Pure functions, unit-tested.
 */

/** (likes + comments) / views; null when views is null or 0. */
export function engagementRateByViews(likes: number, comments: number, views: number | null): number | null {
  if (views === null || views === 0) return null;
  return (likes + comments) / views;
}

/** The facts of one post that the baseline of its author's posts depends on. */
export interface BaselineInput {
  id: string;
  postedAt: string;
  views: number | null;
}

/** How far back a post's baseline reads its author's other posts: 90 days (contract §4). */
export const BASELINE_WINDOW_MS = 90 * 24 * 60 * 60 * 1000;
const MIN_POSTS = 3;

function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * `view_ratio_to_account_baseline` for every post of one author: views divided by the median views
 * of the author's other posts that have views and were posted in the 90 days before this post
 * (`[posted_at − 90 d, posted_at)`); null with fewer than 3 such posts, when the post has no
 * views, or when that median is 0.
 *
 * `posts` are the author's tracked, available posts. O(n · w log w) for n posts and windows of w.
 */
export function viewRatiosToBaseline(posts: readonly BaselineInput[]): Map<string, number | null> {
  const withViews = posts
    .filter((p): p is BaselineInput & { views: number } => p.views !== null)
    .map((p) => ({ ...p, time: Date.parse(p.postedAt) }))
    .sort((a, b) => a.time - b.time);
  const result = new Map<string, number | null>();
  for (const post of posts) {
    if (post.views === null) {
      result.set(post.id, null);
      continue;
    }
    const time = Date.parse(post.postedAt);
    const window: number[] = [];
    // withViews is sorted by time: find the window by scanning back from this post's time.
    for (let i = upperBound(withViews, time - 1) - 1; i >= 0; i--) {
      const other = withViews[i]!;
      if (other.time < time - BASELINE_WINDOW_MS) break;
      if (other.id !== post.id) window.push(other.views);
    }
    if (window.length < MIN_POSTS) {
      result.set(post.id, null);
      continue;
    }
    const base = median(window.sort((a, b) => a - b));
    result.set(post.id, base === 0 ? null : post.views / base);
  }
  return result;
}

/** Index of the first element with time > t. */
function upperBound(items: readonly { time: number }[], t: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid]!.time <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The metrics the service derives for an account (additive Account fields, after the spec's).
 * Each is null when it cannot be computed, and every one is null for a private account.
 */
export interface AccountMetrics {
  followers_growth_7d: number | null;
  followers_growth_30d: number | null;
  median_views_90d: number | null;
  engagement_rate_90d: number | null;
  posts_per_week_90d: number | null;
}

/** The account metrics' names, in the order the Account renders them. */
export const ACCOUNT_METRIC_FIELDS = [
  'followers_growth_7d',
  'followers_growth_30d',
  'median_views_90d',
  'engagement_rate_90d',
  'posts_per_week_90d',
] as const satisfies ReadonlyArray<keyof AccountMetrics>;

/** Every account metric null: a private account, or one never observed active. */
export const NO_ACCOUNT_METRICS: Readonly<AccountMetrics> = Object.freeze({
  followers_growth_7d: null,
  followers_growth_30d: null,
  median_views_90d: null,
  engagement_rate_90d: null,
  posts_per_week_90d: null,
});

/** An observed `followers_count`. */
export interface FollowersPoint {
  at: string;
  followers: number;
}

const DAY = 24 * 60 * 60 * 1000;
/** How far from "N days before" the earlier observation may be. */
const GROWTH_TOLERANCE_MS = 2 * DAY;

/**
 * Relative change of `followers_count` between the latest observation and the one observed
 * closest to `days` days before it, within ±2 days (the later one on a tie): (latest − then) / then.
 * Null without such an observation, or when it counted 0 followers.
 */
export function followersGrowth(
  latest: FollowersPoint,
  history: readonly FollowersPoint[],
  days: number,
): number | null {
  const target = Date.parse(latest.at) - days * DAY;
  let best: { point: FollowersPoint; distance: number; time: number } | null = null;
  for (const point of history) {
    const time = Date.parse(point.at);
    const distance = Math.abs(time - target);
    if (distance > GROWTH_TOLERANCE_MS) continue;
    if (!best || distance < best.distance || (distance === best.distance && time > best.time)) {
      best = { point, distance, time };
    }
  }
  if (!best || best.point.followers === 0) return null;
  return (latest.followers - best.point.followers) / best.point.followers;
}

/** The facts of one of an account's tracked posts that its metrics depend on. */
export interface AccountPostFacts {
  postedAt: string;
  views: number | null;
  likes: number;
  comments: number;
}

const METRIC_WINDOW_MS = 90 * DAY;

/**
 * The post-derived account metrics over the posts posted in the 90 days before the account's
 * `observed_at` (`[observed_at − 90 d, observed_at]`): the median `views` of those with views and
 * the median `engagement_rate_by_views` of the same posts (each null with fewer than 3 values),
 * and how many were posted per week.
 */
export function accountPostMetrics(
  observedAt: string,
  posts: readonly AccountPostFacts[],
): Pick<AccountMetrics, 'median_views_90d' | 'engagement_rate_90d' | 'posts_per_week_90d'> {
  const end = Date.parse(observedAt);
  const inWindow = posts.filter((p) => {
    const t = Date.parse(p.postedAt);
    return t >= end - METRIC_WINDOW_MS && t <= end;
  });
  const views: number[] = [];
  const rates: number[] = [];
  for (const post of inWindow) {
    if (post.views === null) continue;
    views.push(post.views);
    const rate = engagementRateByViews(post.likes, post.comments, post.views);
    if (rate !== null) rates.push(rate);
  }
  return {
    median_views_90d: views.length >= MIN_POSTS ? median(views.sort((a, b) => a - b)) : null,
    engagement_rate_90d: rates.length >= MIN_POSTS ? median(rates.sort((a, b) => a - b)) : null,
    posts_per_week_90d: inWindow.length / (METRIC_WINDOW_MS / (7 * DAY)),
  };
}

/** Everything an account's metrics are computed from. */
export interface AccountMetricInputs {
  /** The latest active observation's time and `followers_count`; null when never observed active. */
  latest: FollowersPoint | null;
  isPrivate: boolean;
  /** Earlier observations of `followers_count` (at least those from 32 to 5 days before `latest`). */
  followers: readonly FollowersPoint[];
  /** The account's tracked posts. */
  posts: readonly AccountPostFacts[];
}

/** An account's derived metrics (see {@link AccountMetrics}). */
export function accountMetrics(inputs: AccountMetricInputs): AccountMetrics {
  const { latest } = inputs;
  if (!latest || inputs.isPrivate) return { ...NO_ACCOUNT_METRICS };
  return {
    followers_growth_7d: followersGrowth(latest, inputs.followers, 7),
    followers_growth_30d: followersGrowth(latest, inputs.followers, 30),
    ...accountPostMetrics(latest.at, inputs.posts),
  };
}
