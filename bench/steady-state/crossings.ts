/**
 * Which of an account's facts change bucket in the simulated day (bench/steady-state.md, "What
 * still fans out"): offline, with the service's own `accountMetrics` and `coarse`, on the seed with
 * its re-observations and the day of day-load.ts. An account whose coarse facts change in the day
 * is one whose posts the day rewrites, had posts kept those facts.
 *
 *   npx tsx bench/steady-state/crossings.ts [--posts 20000] [--mantissas 1,1.2,1.5,2,2.5,3,4,5,6,8]
 *
 * `--mantissas` sets the metrics' bucket edges per decade (the counters keep the service's), to see
 * whether coarser buckets would settle the metrics.
 *
 * It also counts, for the posts the day observes again, which of a post's own volatile facts (its
 * counters, coarse as `coarse` makes them, and its two derived rates in `metricBucket`) change
 * bucket: the share of those re-observations that would still rewrite a document keeping them
 * coarse (bench/steady-state.md, "What a vector costs a re-observation": vectors in documents of
 * their own).
 */
import {
  accountMetrics,
  engagementRateByViews,
  viewRatiosToBaseline,
  type AccountPostFacts,
  type FollowersPoint,
} from '../../src/domain/derived.ts';
import { coarse } from '../../src/domain/volatile-facts.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { generateDay } from './day-load.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 20000, min: 1 },
    mantissas: { type: 'string', default: '1,1.2,1.5,2,2.5,3,4,5,6,8' },
  },
});
const POSTS = args.posts;
const options = { posts: POSTS, accounts: Math.max(1, Math.round(POSTS / 10)), seed: 1 };

/** The metrics' edges: the given mantissas in every decade the service covers, mirrored, and zero. */
const EDGES: number[] = (() => {
  const mantissas = args.mantissas.split(',').map(Number);
  const positive: number[] = [];
  for (let d = -6; d <= 15; d++) for (const m of mantissas) positive.push(Number((m * 10 ** d).toPrecision(6)));
  return [...positive.map((e) => -e).reverse(), 0, ...positive];
})();
function metricBucket(x: number): number {
  let edge = EDGES[0]!;
  for (const e of EDGES) if (e <= x) edge = e;
  return edge;
}

interface Account {
  latest: { at: string; followers: number; posts_count: number; following_count: number } | null;
  points: FollowersPoint[];
  isPrivate: boolean;
}
interface Post extends AccountPostFacts {
  id: string;
  author: string;
  at: string;
}
const accounts = new Map<string, Account>();
const posts = new Map<string, Post>();

/** The posts held, by author. */
function postsByAuthor(): Map<string, Post[]> {
  const out = new Map<string, Post[]>();
  for (const p of posts.values()) {
    const own = out.get(p.author);
    if (own) own.push(p);
    else out.set(p.author, [p]);
  }
  return out;
}

/** Applies an observation as the merge would: the latest observation of each record wins. */
function apply(o: Record<string, unknown>): void {
  const at = o['observed_at'] as string;
  if (o['kind'] === 'account' && o['status'] === 'active') {
    const id = o['platform_id'] as string;
    const a = accounts.get(id) ?? { latest: null, points: [], isPrivate: false };
    a.points.push({ at, followers: o['followers_count'] as number });
    if (!a.latest || at > a.latest.at) {
      a.latest = {
        at,
        followers: o['followers_count'] as number,
        posts_count: o['posts_count'] as number,
        following_count: o['following_count'] as number,
      };
      a.isPrivate = o['is_private'] as boolean;
    }
    accounts.set(id, a);
  } else if (o['kind'] === 'post' && o['status'] === 'available') {
    const id = o['platform_id'] as string;
    const held = posts.get(id);
    if (held && held.at >= at) return;
    posts.set(id, {
      id,
      author: o['author_platform_id'] as string,
      at,
      postedAt: o['posted_at'] as string,
      views: o['views'] as number | null,
      likes: o['likes'] as number,
      comments: o['comments'] as number,
    });
  }
}

/** Every account's facts as posts would keep them: counters coarse, metrics in `metricBucket`. */
function coarseFacts(): Map<string, Record<string, number | null>> {
  const byAuthor = postsByAuthor();
  const out = new Map<string, Record<string, number | null>>();
  for (const [id, a] of accounts) {
    if (!a.latest) continue;
    const metrics = accountMetrics({
      latest: { at: a.latest.at, followers: a.latest.followers },
      isPrivate: a.isPrivate,
      followers: a.points,
      posts: byAuthor.get(id) ?? [],
    });
    const facts: Record<string, number | null> = {
      followers_count: coarse(a.latest.followers),
      following_count: coarse(a.latest.following_count),
      posts_count: coarse(a.latest.posts_count),
    };
    for (const [k, v] of Object.entries(metrics)) facts[k] = v === null ? null : metricBucket(v);
    out.set(id, facts);
  }
  return out;
}

for (const o of generateObservations({ ...options, history: true })) apply(o);
const before = coarseFacts();
const postsBefore = coarsePostFacts();
const observedAgain = new Set<string>();
for (const o of generateDay(options).observations()) {
  if (o['kind'] === 'post' && o['status'] === 'available' && posts.has(o['platform_id'] as string))
    observedAgain.add(o['platform_id'] as string);
  apply(o);
}
const after = coarseFacts();
const postsAfter = coarsePostFacts();
const changed: Record<string, number> = {};
let any = 0;
for (const [id, facts] of before) {
  const next = after.get(id)!;
  const moved = Object.keys(facts).filter((k) => facts[k] !== next[k]);
  for (const k of moved) changed[k] = (changed[k] ?? 0) + 1;
  if (moved.length > 0) any++;
}
console.log(JSON.stringify({ accounts: before.size, any, changed }, null, 2));

/** Every post's own volatile facts as a document keeping them coarse would: counters by `coarse`, rates by `metricBucket`. */
function coarsePostFacts(): Map<string, Record<string, number | null>> {
  const byAuthor = postsByAuthor();
  const out = new Map<string, Record<string, number | null>>();
  for (const own of byAuthor.values()) {
    const ratios = viewRatiosToBaseline(own);
    for (const p of own) {
      const rate = engagementRateByViews(p.likes, p.comments, p.views);
      const ratio = ratios.get(p.id) ?? null;
      out.set(p.id, {
        views: p.views === null ? null : coarse(p.views),
        likes: coarse(p.likes),
        comments: coarse(p.comments),
        engagement_rate_by_views: rate === null ? null : metricBucket(rate),
        view_ratio_to_account_baseline: ratio === null ? null : metricBucket(ratio),
      });
    }
  }
  return out;
}

const postChanged: Record<string, number> = {};
let counters = 0;
let anyPost = 0;
let rewrittenByBaseline = 0;
for (const [id, facts] of postsBefore) {
  const next = postsAfter.get(id)!;
  const moved = Object.keys(facts).filter((k) => facts[k] !== next[k]);
  if (!observedAgain.has(id)) {
    // Not observed in the day, yet its ratio may move with its author's other posts.
    if (moved.length > 0) rewrittenByBaseline++;
    continue;
  }
  for (const k of moved) postChanged[k] = (postChanged[k] ?? 0) + 1;
  if (moved.some((k) => k === 'views' || k === 'likes' || k === 'comments')) counters++;
  if (moved.length > 0) anyPost++;
}
console.log(
  JSON.stringify(
    {
      posts: postsBefore.size,
      observed_again: observedAgain.size,
      any_coarse_fact_moved: anyPost,
      a_coarse_counter_moved: counters,
      changed: postChanged,
      not_observed_but_moved: rewrittenByBaseline,
    },
    null,
    2,
  ),
);
