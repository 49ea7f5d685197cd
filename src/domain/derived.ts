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

const WINDOW_MS = 90 * 24 * 60 * 60 * 1000;
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
      if (other.time < time - WINDOW_MS) break;
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
