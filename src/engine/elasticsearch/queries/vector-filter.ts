import {
  bucketEnd,
  coarse,
  isEdge,
  rangeBuckets,
  VOLATILE_POST_FIELDS,
  VOLATILE_PROFILE_FIELDS,
  wide,
  wideEnd,
  type NumericBounds,
} from '../../../domain/volatile-facts.ts';
import type { FilterNode } from '../../../query/ast.ts';
import type { FieldKey } from '../../../query/fields.ts';
import { FIELDS_NOT_ON_VECTORS } from '../vectors.ts';
import { boundsOf } from './volatile-bounds.ts';

/**
 * A post filter as the vector documents can answer it (documents/vector-projection.ts). They
 * hold every filter fact but `post.observed_at`, the post's own counters coarse (the lower edge
 * of their bucket, src/domain/volatile-facts.ts) and the author's counters wider still (three
 * buckets a decade: `wide`). A range over a counter whose bounds are edges of its grid (the 1-2-5
 * bounds people type) reads exactly on the copy; any other leaf over a fact they hold is exact as
 * it is. Author ranges arrive resolved (volatile-bounds.ts: bounds on the posts' coarse values,
 * the boundary accounts by ID), so theirs are read as bounds on a coarse value.
 *
 * Where the documents cannot answer exactly, the filter is widened: the kNN then finds the
 * nearest among a superset, and each of those is checked against the whole filter on the posts
 * (`checked`). Widening is by polarity: under an odd number of negations a leaf must shrink
 * instead (`not` of a subset is a superset): a range to the buckets wholly inside it, a fact
 * they do not hold to nothing.
 */
export function vectorFilter(node: FilterNode): { node: FilterNode; checked: boolean } {
  let checked = false;
  const walk = (n: FilterNode, positive: boolean): FilterNode => {
    switch (n.kind) {
      case 'and':
      case 'or':
        return { kind: n.kind, children: n.children.map((child) => walk(child, positive)) };
      case 'not':
        return { kind: 'not', child: walk(n.child, !positive) };
      default: {
        if (FIELDS_NOT_ON_VECTORS.has(n.field)) {
          checked = true;
          return positive ? ALL : NONE;
        }
        if (n.kind === 'range' && AUTHOR_KEYS.has(n.field)) {
          const read = authorRange(boundsOf(n), positive);
          if (!read.exact) checked = true;
          return { kind: 'range', field: n.field, ...read.bounds };
        }
        if (n.kind !== 'range' || !COARSE_KEYS.has(n.field)) return n;
        const bounds = boundsOf(n);
        const { interior, boundary } = rangeBuckets(bounds);
        if (boundary.length === 0) return { kind: 'range', field: n.field, ...interior };
        checked = true;
        return positive
          ? { kind: 'range', field: n.field, ...covering(bounds) }
          : { ...interior, kind: 'range', field: n.field };
      }
    }
  };
  const out = walk(node, true);
  return { node: out, checked };
}

/** An AND of nothing matches everything; an OR of nothing, nothing (the filter compiler's reading). */
const ALL: FilterNode = { kind: 'and', children: [] };
const NONE: FilterNode = { kind: 'or', children: [] };

/** The filter keys of the post counters vector documents keep coarse. */
const COARSE_KEYS: ReadonlySet<FieldKey> = new Set(VOLATILE_POST_FIELDS.map((name): FieldKey => `post.${name}`));

/** The filter keys of the author counters vector documents keep on the wide grid. */
const AUTHOR_KEYS: ReadonlySet<FieldKey> = new Set(VOLATILE_PROFILE_FIELDS.map((name): FieldKey => `author.${name}`));

/**
 * A range over an author counter's coarse value v (an edge, as posts hold it) read on w = wide(v):
 * first as L ≤ v < U with L and U edges, then on the wide grid: exact when L and U are wide edges,
 * else widened (`positive`: w ≥ wide(L), w < U) or narrowed to the wide buckets wholly inside
 * (w ≥ the first wide edge ≥ L, w < wide(U)). Each also holds of v itself, so a vector document
 * written before the wide grid is read right too (until its post's next write widens it).
 */
function authorRange(bounds: NumericBounds, positive: boolean): { bounds: NumericBounds; exact: boolean } {
  const from = lowestAdmitted(bounds);
  const to = firstExcludedAbove(bounds);
  const out: NumericBounds = {};
  let exact = true;
  if (from !== undefined) {
    if (wide(from) === from) out.gte = from;
    else {
      exact = false;
      out.gte = positive ? wide(from) : wideEnd(wide(from));
    }
  }
  if (to !== undefined && Number.isFinite(to)) {
    if (wide(to) === to) out.lt = to;
    else {
      exact = false;
      // w < U admits the same wide values as w ≤ wide(U), and stays a widening on a vector document
      // written before the wide grid (its author counters on the posts' grid).
      out.lt = positive ? to : wide(to);
    }
  }
  return { bounds: out, exact };
}

/** The edge after b's bucket: the least edge above b. */
const nextEdge = (b: number) => bucketEnd(coarse(b));

/** The least edge a lower bound admits (v ≥ it ⇔ v within the bound, for an edge v); none without one. */
function lowestAdmitted(bounds: NumericBounds): number | undefined {
  if (bounds.gte !== undefined) return isEdge(bounds.gte) ? bounds.gte : nextEdge(bounds.gte);
  return bounds.gt === undefined ? undefined : nextEdge(bounds.gt);
}

/** The least edge above an upper bound's admitted ones (v < it ⇔ v within the bound, for an edge v). */
function firstExcludedAbove(bounds: NumericBounds): number | undefined {
  if (bounds.lt !== undefined) return isEdge(bounds.lt) ? bounds.lt : nextEdge(bounds.lt);
  return bounds.lte === undefined ? undefined : nextEdge(bounds.lte);
}

/**
 * The coarse values of every value in `bounds`: coarse is monotone, so x ≥ b implies
 * coarse(x) ≥ coarse(b), and x ≤ u implies coarse(x) ≤ coarse(u).
 */
function covering(bounds: NumericBounds): NumericBounds {
  const out: NumericBounds = {};
  const lower = bounds.gte ?? bounds.gt;
  const upper = bounds.lte ?? bounds.lt;
  if (lower !== undefined) out.gte = coarse(lower);
  if (upper !== undefined) out.lte = coarse(upper);
  return out;
}
