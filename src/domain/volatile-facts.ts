import { ACCOUNT_COUNTERS } from '../contract/observations.ts';
import { ACCOUNT_METRIC_FIELDS } from './derived.ts';

/**
 * Account facts that move with nearly every observation: the counters a pipeline re-observes daily
 * and the metrics derived from them and from the account's posts. Posts keep a copy of their
 * author's facts (for author filters and facets), and copying these exactly would rewrite every
 * post of an account at each of its observations: at 10 posts per account, ten post writes per
 * account observation (docs/capacity.md, "Write amplification").
 *
 * So a post keeps each counter *coarsened* (and the metrics not at all, see
 * {@link ACCOUNT_ONLY_AUTHOR_FIELDS}): the lower edge of the value's bucket in a fixed table
 * of about ten buckets per decade ({@link coarse}). An account's observation rewrites its posts only
 * when a bucket changes (a 1 %-a-day grower crosses an edge every few weeks), and what a post search
 * needs exactly comes from the accounts index at read time: the rendered `followers_count`, and the
 * accounts whose value lies in the bucket of a filter's bound (see {@link rangeBuckets}).
 */

/** The profile counters a post keeps coarsened: every counter an account observation carries. */
export const VOLATILE_PROFILE_FIELDS = ACCOUNT_COUNTERS;

/** Every author fact a post keeps coarsened: the profile counters. */
export const VOLATILE_AUTHOR_FIELDS: ReadonlySet<string> = new Set<string>(VOLATILE_PROFILE_FIELDS);

/**
 * Author facts posts do not keep at all: the account metrics. Derived from the account's posts and
 * history, they jump daily (`posts_per_week_90d` by a whole post, a growth rate with its reference
 * observation): even buckets a decade wide changed for 30 % of accounts a day
 * (bench/steady-state.md, "What still fans out"). Author filters on them ask the accounts index.
 */
export const ACCOUNT_ONLY_AUTHOR_FIELDS: ReadonlySet<string> = new Set<string>(ACCOUNT_METRIC_FIELDS);

/**
 * A post's own facts that move with nearly every re-observation: its counters and the rates derived
 * from them. The posts index keeps them exact; a post's vector document (which costs its graph
 * insertion at every write) keeps them coarse, so that a re-observation rewrites it only when a
 * bucket changes: 34 % of a day's re-observed posts against all of them (bench/steady-state.md,
 * "The halfway design, counted").
 */
export const VOLATILE_POST_FIELDS = [
  'views',
  'likes',
  'comments',
  'engagement_rate_by_views',
  'view_ratio_to_account_baseline',
] as const;

/**
 * Bucket edges per decade. The 1-2-5 bounds people type (1,000, 5,000, 10,000, 50,000) are edges,
 * so a filter `gte` or `lt` such a bound is exact on the coarse copies alone; a ratio of at most
 * 1.33 between neighbours keeps a bucket's accounts a small share of all.
 */
const MANTISSAS = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8] as const;
/** Decades covered: rates from 10⁻⁶ up to counters of 10¹⁵; beyond them the outermost bucket holds. */
const MIN_DECADE = -6;
const MAX_DECADE = 15;

/** Every edge of `mantissas`' grid, ascending: the negative mirror, zero, the positive edges. */
function edgesOf(mantissas: readonly number[]): readonly number[] {
  const positive: number[] = [];
  for (let d = MIN_DECADE; d <= MAX_DECADE; d++) {
    // toPrecision: 1.2e-5 as the literal it reads as, so that equal bounds compare equal.
    for (const m of mantissas) positive.push(Number((m * 10 ** d).toPrecision(6)));
  }
  return Object.freeze([...positive.map((e) => -e).reverse(), 0, ...positive]);
}

const EDGES = edgesOf(MANTISSAS);

/**
 * A wider grid, nested in the first (1, 2 and 5 are among its mantissas, so every wide edge is an
 * edge): three buckets a decade, for the author counters a post's vector document keeps
 * ({@link wide}). The bounds people type stay edges of it.
 */
const WIDE_EDGES = edgesOf([1, 2, 5]);

/** Index in `edges` of the bucket holding `x`: the last edge ≤ x (the first bucket also holds anything below it). */
function bucketIndex(x: number, edges: readonly number[] = EDGES): number {
  let lo = 0;
  let hi = edges.length - 1;
  if (x < edges[0]!) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (edges[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The lower edge of `x`'s bucket on the wide grid (1-2-5 a decade). Monotone, x itself when x is a
 * wide edge, and wide(coarse(x)) = wide(x): a coarse copy widens to the same value as the exact one.
 */
export function wide(x: number): number {
  return WIDE_EDGES[bucketIndex(x, WIDE_EDGES)]!;
}

/** The upper end (exclusive) of the wide bucket whose lower edge is `edge`; Infinity for the last. */
export function wideEnd(edge: number): number {
  return WIDE_EDGES[bucketIndex(edge, WIDE_EDGES) + 1] ?? Infinity;
}

/**
 * The coarse copy of `x`: the lower edge of its bucket. Monotone (x ≤ y ⇒ coarse(x) ≤ coarse(y)),
 * and x itself when x is an edge.
 */
export function coarse(x: number): number {
  return EDGES[bucketIndex(x)]!;
}

/** The upper end (exclusive) of the bucket whose lower edge is `edge`; Infinity for the last. */
export function bucketEnd(edge: number): number {
  return EDGES[bucketIndex(edge) + 1] ?? Infinity;
}

/** True when `x` is an edge, i.e. its own coarse copy. */
export function isEdge(x: number): boolean {
  return coarse(x) === x;
}

/** A numeric range over one fact: any of the four bounds. */
export interface NumericBounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/**
 * How a range over a volatile fact reads on the coarse copies. With c = {@link coarse}, monotone:
 * c(x) > c(b) implies x > b, and c(x) < c(b) implies x < b; only values in the bucket of a bound
 * need their exact value. So `x ∈ range` exactly when c(x) lies in `interior`, or x lies in one of
 * the `boundary` buckets (given by their lower edges) and in the range itself. A bound that is an
 * edge needs no boundary when it includes its edge from above (`gte e`) or excludes it from below
 * (`lt e`): c(x) ≥ e ⇔ x ≥ e for an edge e.
 */
export function rangeBuckets(range: NumericBounds): { interior: NumericBounds; boundary: number[] } {
  const interior: NumericBounds = {};
  const boundary: number[] = [];
  const lower = range.gte ?? range.gt;
  if (lower !== undefined) {
    const edge = coarse(lower);
    if (range.gte !== undefined && edge === lower) interior.gte = edge;
    else {
      interior.gt = edge;
      boundary.push(edge);
    }
  }
  const upper = range.lte ?? range.lt;
  if (upper !== undefined) {
    const edge = coarse(upper);
    if (range.lt !== undefined && edge === upper) interior.lt = edge;
    else {
      interior.lt = edge;
      if (!boundary.includes(edge)) boundary.push(edge);
    }
  }
  return { interior, boundary };
}

/** True when `x` satisfies `range`. */
export function inBounds(x: number, range: NumericBounds): boolean {
  return (
    (range.gt === undefined || x > range.gt) &&
    (range.gte === undefined || x >= range.gte) &&
    (range.lt === undefined || x < range.lt) &&
    (range.lte === undefined || x <= range.lte)
  );
}

/** The profile as posts keep it: its counters coarsened. */
export function coarseProfile<P extends Record<(typeof VOLATILE_PROFILE_FIELDS)[number], number>>(profile: P): P {
  const out = { ...profile };
  for (const field of VOLATILE_PROFILE_FIELDS) out[field] = coarse(profile[field]);
  return out;
}
