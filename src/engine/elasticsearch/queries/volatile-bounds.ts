import type { Client, estypes } from '@elastic/elasticsearch';
import {
  ACCOUNT_ONLY_AUTHOR_FIELDS,
  bucketEnd,
  coarse,
  inBounds,
  rangeBuckets,
  VOLATILE_AUTHOR_FIELDS,
  type NumericBounds,
} from '../../../domain/volatile-facts.ts';
import type { ExistsNode, FilterNode, RangeNode } from '../../../query/ast.ts';
import { engineCall } from '../errors.ts';
import { firstNumber, firstString } from '../response-values.ts';

/**
 * Exact author filters over coarse copies. Posts keep their author's volatile facts (counters,
 * derived metrics) as the lower edge of a bucket (src/domain/volatile-facts.ts), so that an
 * account observation rewrites its posts only when a bucket changes. A range over such a fact
 * stays exact: the buckets strictly inside it are read on the posts' copies, and the accounts whose
 * value lies in the bucket of a bound are asked of the accounts index (exact, current) and named
 * by ID. A bound on an edge in the direction that includes its bucket (`gte 10000`, `lt 50000`)
 * needs no accounts at all.
 *
 * The account metrics are not in posts at all: a range or `exists` over one is answered by the
 * accounts index alone, every matching account named by ID (the lookup grows with the match:
 * docs/capacity.md, "Write amplification").
 */

/** A range leaf over a volatile author fact: `author.followers_count`, `author.engagement_rate_90d`, … */
export function isVolatileAuthorRange(node: FilterNode): node is RangeNode {
  return (
    node.kind === 'range' &&
    node.field.startsWith('author.') &&
    VOLATILE_AUTHOR_FIELDS.has(node.field.slice('author.'.length))
  );
}

/** A range or `exists` leaf over an author fact posts do not keep (an account metric). */
export function isAccountOnlyAuthorLeaf(node: FilterNode): boolean {
  return (
    (node.kind === 'range' || node.kind === 'exists') &&
    node.field.startsWith('author.') &&
    ACCOUNT_ONLY_AUTHOR_FIELDS.has(node.field.slice('author.'.length))
  );
}

/** The numeric bounds of a range leaf (volatile facts are numbers, never timestamps). */
export function boundsOf(node: RangeNode): NumericBounds {
  const out: NumericBounds = {};
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = node[op];
    if (typeof value === 'number') out[op] = value;
  }
  return out;
}

/** Every leaf of the tree that needs the accounts index (volatile ranges, account-only facts), in order. */
export function volatileLeaves(node: FilterNode): Array<RangeNode | ExistsNode> {
  if (node.kind === 'range' || node.kind === 'exists')
    return isVolatileAuthorRange(node) || isAccountOnlyAuthorLeaf(node) ? [node] : [];
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.children.flatMap(volatileLeaves);
    case 'not':
      return volatileLeaves(node.child);
    default:
      return [];
  }
}

/** The engine's limit of values in one `terms` query (`index.max_terms_count`). */
const MAX_TERMS = 65_536;

/** Posts by any of `ids`: one `terms` leaf, an OR of several past the engine's limit, nothing when empty. */
function byAuthors(ids: readonly string[]): FilterNode {
  const chunks: FilterNode[] = [];
  for (let i = 0; i < ids.length; i += MAX_TERMS)
    chunks.push({ kind: 'terms', field: 'author.id', values: ids.slice(i, i + MAX_TERMS) });
  return chunks.length === 1 ? chunks[0]! : { kind: 'or', children: chunks };
}

/**
 * The tree with each volatile author range leaf replaced by its exact reading on the coarse
 * copies: the interior range, or (when the bounds' buckets hold matching accounts) an OR of it
 * and the posts of those accounts. `boundary` gives each leaf's matching accounts of its bounds'
 * buckets; a leaf absent from it has none.
 */
export function rewriteVolatile(node: FilterNode, boundary: ReadonlyMap<FilterNode, readonly string[]>): FilterNode {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map((child) => rewriteVolatile(child, boundary)) };
    case 'not':
      return { kind: 'not', child: rewriteVolatile(node.child, boundary) };
    default: {
      // Posts do not hold the fact: exactly the posts of the accounts that satisfy it.
      if (isAccountOnlyAuthorLeaf(node)) return byAuthors(boundary.get(node) ?? []);
      if (!isVolatileAuthorRange(node)) return node;
      const interior: RangeNode = { kind: 'range', field: node.field, ...rangeBuckets(boundsOf(node)).interior };
      const ids = boundary.get(node) ?? [];
      if (ids.length === 0) return interior;
      return { kind: 'or', children: [interior, byAuthors(ids)] };
    }
  }
}

/** Accounts read per page of a boundary lookup (the engine's default result window). */
const PAGE = 10_000;

/** Resolves filter trees against the accounts index (see the module comment). */
export function createVolatileBounds(deps: { client: Client; accountsIndex: string }) {
  const { client } = deps;

  /**
   * The IDs of the accounts whose value of `name` lies in one of the `boundary` buckets (given by
   * their lower edges) and within `bounds`. The engine narrows by value; the bucket is then checked
   * here with the same function that coarsened the posts' copies, so both sides agree to the bit.
   */
  function boundaryAccounts(name: string, boundary: number[], bounds: NumericBounds): Promise<string[]> {
    const query: estypes.QueryDslQueryContainer = {
      bool: {
        filter: [
          { range: { [name]: bounds } },
          {
            bool: {
              should: boundary.map((edge) => {
                const end = bucketEnd(edge);
                return { range: { [name]: Number.isFinite(end) ? { gte: edge, lt: end } : { gte: edge } } };
              }),
              minimum_should_match: 1,
            },
          },
        ],
      },
    };
    return accountIds(query, name, (value) => boundary.includes(coarse(value)) && inBounds(value, bounds));
  }

  /** The IDs of the accounts `query` matches whose value of `name` passes `keep`, every page of them. */
  async function accountIds(
    query: estypes.QueryDslQueryContainer,
    name: string,
    keep: (value: number) => boolean,
  ): Promise<string[]> {
    const ids: string[] = [];
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await engineCall(() =>
        client.search<unknown>({
          index: deps.accountsIndex,
          query,
          size: PAGE,
          // Doc values only: neither the stored record nor `_id` is read for each of a bucket's accounts.
          _source: false,
          stored_fields: ['_none_'],
          docvalue_fields: ['id', name],
          sort: [{ id: 'asc' }],
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = response.hits.hits;
      for (const hit of hits) {
        const id = firstString(hit, 'id');
        const value = firstNumber(hit, name);
        if (id !== undefined && value !== undefined && keep(value)) ids.push(id);
      }
      if (hits.length < PAGE) return ids;
      after = hits[hits.length - 1]!.sort;
    }
  }

  return {
    /**
     * `filter` with every volatile author range read exactly on the posts' coarse copies; the
     * same tree (the same object) when it has none. One accounts lookup per leaf with a boundary.
     */
    async resolve(filter: FilterNode): Promise<FilterNode> {
      const leaves = volatileLeaves(filter);
      if (leaves.length === 0) return filter;
      const boundary = new Map<FilterNode, string[]>();
      await Promise.all(
        leaves.map(async (leaf) => {
          const name = leaf.field.slice('author.'.length);
          if (isAccountOnlyAuthorLeaf(leaf)) {
            // Exists, or a range (over numbers: the metrics are numbers).
            const query = leaf.kind === 'exists' ? { exists: { field: name } } : { range: { [name]: boundsOf(leaf) } };
            boundary.set(leaf, await accountIds(query, name, () => true));
            return;
          }
          if (leaf.kind !== 'range') return;
          const bounds = boundsOf(leaf);
          const buckets = rangeBuckets(bounds).boundary;
          if (buckets.length === 0) return;
          boundary.set(leaf, await boundaryAccounts(name, buckets, bounds));
        }),
      );
      return rewriteVolatile(filter, boundary);
    },
  };
}

/** Resolves volatile author ranges of post-index filter trees. */
export type VolatileBounds = ReturnType<typeof createVolatileBounds>;
