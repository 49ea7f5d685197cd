import type { estypes } from '@elastic/elasticsearch';
import type { FacetBucket } from '../../../contract/search-extras.ts';
import { InternalError } from '../../../internal/errors.ts';
import type { FacetSpec } from '../../../query/facet-request.ts';
import type { PostsScope } from '../../../query/search-codec.ts';
import type { FacetCounts, FacetEngine } from '../../facets.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { accountSearchFilter, accountSearchQuery, narrowedScope } from '../queries/account-query.ts';
import { compileFilter, esPath } from '../queries/filter-compiler.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { firstPage } from './paged-search.ts';
import { postSnapshotIndices } from './nearest-posts.ts';
import { createPostResults, similarOnly, type PostResultsDeps } from './post-results.ts';
import {
  accountNeighbours,
  accountVectorAsSearched,
  anyAccount,
  correctedAccountQuery,
} from './fused-account-search.ts';
import { quantizeVector } from '../vectors.ts';
import { holdsEnglishWord } from '../../../text/english-words.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import type { SnapshotPool } from './snapshot-pool.ts';
import type { FilterNode, RangeNode } from '../../../query/ast.ts';
import { isAccountOnlyAuthorLeaf, isVolatileAuthorRange } from '../queries/volatile-bounds.ts';

type Query = estypes.QueryDslQueryContainer;
type Aggs = Record<string, estypes.AggregationsAggregationContainer>;

/** A range facet counted by filters: one per range, and the posts without a value when the field cannot say. */
interface ResolvedRanges {
  ranges: Query[];
  missing?: Query;
}

/**
 * How many values each shard lists for a terms facet counted again for exactness (see
 * {@link approximateFacets}); the default is 1.5 × size + 10.
 */
export const EXACT_SHARD_SIZE = 10_000;

/**
 * The aggregations of the facets: per facet `f<i>` (a `terms` or `range` aggregation) and
 * `m<i>`, the results without a value (the grammar's `exists: false`). Terms are ordered by count,
 * then value, so equal counts come in a stable order.
 *
 * Exactness: on one shard (the default, INDEX_SHARDS=1) a terms aggregation's top values and
 * their counts are exact. Over several, a count is exact only when every shard listed the value
 * among its top `shard_size`: {@link approximateFacets} finds the facets where the engine says it
 * may not be, they are counted again with `shardSize`, and {@link readFacets} refuses to answer
 * counts that are still approximate.
 */
export function facetAggregations(
  facets: FacetSpec[],
  shardSize?: number,
  rangeFilters?: ReadonlyMap<number, ResolvedRanges>,
): Aggs {
  const aggs: Aggs = {};
  for (const [i, facet] of facets.entries()) {
    const field = esPath(facet.field);
    const resolved = rangeFilters?.get(i);
    aggs[`m${i}`] = resolved?.missing ? { filter: resolved.missing } : { missing: { field } };
    aggs[`f${i}`] = resolved
      ? // One filter per range, keyed as the range aggregation's buckets are (readFacets reads both).
        { filters: { keyed: false, filters: Object.fromEntries(resolved.ranges.map((q, j) => [`r${j}`, q])) } }
      : facet.kind === 'terms'
        ? {
            terms: {
              field,
              size: facet.size,
              ...(shardSize ? { shard_size: Math.max(shardSize, facet.size) } : {}),
              order: [{ _count: 'desc' }, { _key: 'asc' }],
              show_term_doc_count_error: true,
            },
          }
        : {
            range: {
              field,
              keyed: false,
              ranges: facet.ranges.map((r, j) => ({
                key: `r${j}`,
                ...(r.from !== null && { from: r.from }),
                ...(r.to !== null && { to: r.to }),
              })),
            },
          };
  }
  return aggs;
}

/** The aggregation keys (`f<i>`) of the terms facets whose counts the engine says may be off. */
export function approximateFacets(facets: FacetSpec[], aggregations: FacetAggregations | undefined): string[] {
  return facets.flatMap((facet, i) => {
    const agg = aggregations?.[`f${i}`];
    const off =
      facet.kind === 'terms' &&
      ((agg?.doc_count_error_upper_bound ?? 0) > 0 ||
        (agg?.buckets ?? []).some((b) => (b.doc_count_error_upper_bound ?? 0) > 0));
    return off ? [`f${i}`] : [];
  });
}

/**
 * The facets' aggregations, exact: the terms facets the engine says may be off (several shards,
 * and a value some shard did not list among its top `shard_size`) are counted again by `search`
 * on the same snapshot, each shard listing up to {@link EXACT_SHARD_SIZE} values.
 */
export async function exactAggregations(
  facets: FacetSpec[],
  aggregations: FacetAggregations | undefined,
  search: (aggs: Aggs) => Promise<{ aggregations?: FacetAggregations | undefined }>,
): Promise<FacetAggregations | undefined> {
  const again = new Set(approximateFacets(facets, aggregations));
  if (again.size === 0) return aggregations;
  const aggs = Object.fromEntries(
    Object.entries(facetAggregations(facets, EXACT_SHARD_SIZE)).filter(([key]) => again.has(key)),
  );
  return { ...aggregations, ...(await search(aggs)).aggregations };
}

interface TermBucket {
  key: string | number;
  key_as_string?: string;
  doc_count: number;
  doc_count_error_upper_bound?: number;
}

/**
 * What the engine answers for the aggregations {@link facetAggregations} asks: per facet `f<i>`
 * its buckets (terms or keyed ranges), and `m<i>` its missing count. The searches asking them
 * type their answer with it (the client's generic), as the client cannot tell from the request.
 */
export type FacetAggregations = Record<
  string,
  { buckets?: TermBucket[]; doc_count_error_upper_bound?: number; doc_count?: number }
>;

/** The buckets of each facet, values as the API spells them; null last (only when some results lack a value). */
export function readFacets(
  facets: FacetSpec[],
  aggregations: FacetAggregations | undefined,
): Record<string, FacetBucket[]> {
  const out: Record<string, FacetBucket[]> = {};
  for (const [i, facet] of facets.entries()) {
    const agg = aggregations?.[`f${i}`];
    const buckets = agg?.buckets ?? [];
    let values: FacetBucket[];
    if (facet.kind === 'terms') {
      if (
        (agg?.doc_count_error_upper_bound ?? 0) > 0 ||
        buckets.some((b) => (b.doc_count_error_upper_bound ?? 0) > 0)
      ) {
        throw new InternalError(`facet ${facet.name}: the engine answered approximate counts`);
      }
      values = buckets.map((b) => ({
        value: facet.type === 'boolean' ? b.key_as_string === 'true' : String(b.key),
        count: b.doc_count,
      }));
    } else {
      // The engine orders range buckets by bound, not as requested: match them by key.
      const byKey = new Map(buckets.map((b) => [String(b.key), b.doc_count]));
      values = facet.ranges.map((range, j) => ({ value: range, count: byKey.get(`r${j}`) ?? 0 }));
    }
    const missing = aggregations?.[`m${i}`]?.doc_count ?? 0;
    if (missing > 0) values.push({ value: null, count: missing });
    out[facet.name] = values;
  }
  return out;
}

/**
 * Facets on Elasticsearch: one `size: 0` search with exact hit counting and the facets'
 * aggregations, over the same query and on the same kind of snapshot as a first page of the
 * matching search (the node's shared point in time, re-run on a fresh one when the visibility
 * epoch moved; see firstPage). Facets count what the search returns: the results' settings ({@link PostResultsDeps}).
 */
export function createFacetEngine(
  deps: PostResultsDeps & {
    snapshots: SnapshotPool;
    visibility: VisibilityEpoch;
    qualifying: (pit: string, scope: PostsScope) => Promise<Query>;
  },
): FacetEngine {
  const { client } = deps;
  const results = createPostResults(deps);
  const { bounds } = results;

  async function count(
    index: string | string[],
    facets: FacetSpec[],
    keepAliveSeconds: number,
    queryOn: (pit: string) => Promise<Query>,
    rangeFilters?: ReadonlyMap<number, ResolvedRanges>,
  ): Promise<FacetCounts> {
    const search = async (pit: string, aggs: Aggs, totals: boolean) =>
      client.search<unknown, FacetAggregations>({
        ...COMPLETE_RESULTS,
        pit: { id: pit, keep_alive: `${keepAliveSeconds}s` },
        query: await queryOn(pit),
        size: 0,
        track_total_hits: totals,
        aggs,
      });
    // The first count and its exact re-count are one unit on one snapshot: a node that leaves
    // between the two makes firstPage run both again on a fresh snapshot, not answer 503.
    const run = async (pit: string) => {
      const response = await search(pit, facetAggregations(facets, undefined, rangeFilters), true);
      const aggregations = await exactAggregations(facets, response.aggregations, (aggs) => search(pit, aggs, false));
      return { total: response.hits.total, aggregations };
    };
    const { pit, shared, response } = await firstPage(deps, index, keepAliveSeconds, run);
    if (!shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
    const { total, aggregations } = response;
    return { total: typeof total === 'number' ? total : (total?.value ?? 0), facets: readFacets(facets, aggregations) };
  }

  /**
   * Range facets over author facts posts keep coarse (counters) or not at all (metrics), as one
   * exact filter per range: each range read like a filter of the same bounds (volatile-bounds.ts).
   */
  async function volatileRangeFilters(facets: FacetSpec[]): Promise<Map<number, ResolvedRanges>> {
    const out = new Map<number, ResolvedRanges>();
    await Promise.all(
      facets.map(async (facet, i) => {
        if (facet.kind !== 'ranges') return;
        const exists: FilterNode = { kind: 'exists', field: facet.field };
        const leaves: RangeNode[] = facet.ranges.map((r) => ({
          kind: 'range',
          field: facet.field,
          ...(r.from !== null && { gte: r.from }),
          ...(r.to !== null && { lt: r.to }),
        }));
        if (!leaves.some((leaf) => isVolatileAuthorRange(leaf) || isAccountOnlyAuthorLeaf(leaf))) return;
        // An unbounded range ({from: null, to: null}) counts every post with a value.
        const resolved = await Promise.all(
          leaves.map((leaf) => bounds.resolve(leaf.gte === undefined && leaf.lt === undefined ? exists : leaf)),
        );
        // Posts without a value: for a fact posts do not keep, those whose author lacks it.
        const missing = isAccountOnlyAuthorLeaf(exists)
          ? compileFilter({ kind: 'not', child: await bounds.resolve(exists) }, 'post')
          : undefined;
        out.set(i, { ranges: resolved.map((node) => compileFilter(node, 'post')), ...(missing && { missing }) });
      }),
    );
    return out;
  }

  return {
    async postFacets(search, facets, { ranking, keepAliveSeconds }) {
      // Author ranges over counters and metrics, read exactly on the posts' coarse copies.
      const [queryOn, rangeFilters] = await Promise.all([
        results.resultsOf(search, ranking, keepAliveSeconds),
        volatileRangeFilters(facets),
      ]);
      return count(postSnapshotIndices(deps.layout), facets, keepAliveSeconds, queryOn, rangeFilters);
    },

    accountFacets(search, facets, { keepAliveSeconds, ranking }) {
      const scope = search.posts;
      // As account search: with a posts scope one point in time spans both indices.
      const index = scope ? [deps.accountsIndex, deps.layout.posts] : deps.accountsIndex;
      // Words no account carries, corrected as the search corrects them (its lexical side).
      const lexicalSide = ranking.kind === 'lexical' || (ranking.kind === 'fused' && ranking.mode === 'hybrid');
      const where = { accounts: deps.accountsIndex, posts: deps.layout.posts };
      const corrected =
        deps.queryTerms && lexicalSide && search.query !== null
          ? correctedAccountQuery(client, where, search.query)
          : Promise.resolve(null);
      return count(index, facets, keepAliveSeconds, async (pit) => {
        const qualifying = scope ? [await deps.qualifying(pit, narrowedScope(scope, search.filter))] : [];
        const filter = [...accountSearchFilter(search), ...qualifying];
        if (ranking.kind === 'similar')
          return similarOnly(client, { pit, keepAliveSeconds, field: 'lookalike_embedding', filter, ranking });
        const words = await corrected;
        const query = words === null ? accountSearchQuery(search) : accountSearchQuery(search, words);
        // The model reads what the lexical side searched (the search's first page does the same).
        const vector = ranking.kind === 'fused' ? await accountVectorAsSearched(ranking, words) : [];
        if (ranking.kind === 'fused' && vector.length > 0) {
          // As the search shows them: every BM25 match (hybrid) and the neighbours at or above the floor.
          // Under the floor the search applies: the unmatched one when no account here states a word of it.
          const stated =
            ranking.mode !== 'hybrid' ||
            holdsEnglishWord(analyzeQuery(words ?? search.query ?? '').content) ||
            (await anyAccount(client, pit, [query, ...qualifying]));
          const neighbours = await accountNeighbours(client, {
            pit,
            keepAlive: `${keepAliveSeconds}s`,
            filter,
            vector: quantizeVector(vector),
            floor: stated || deps.unmatchedFloor === undefined ? deps.similarityFloor : deps.unmatchedFloor,
          });
          const near = { ids: { values: neighbours.map((n) => n.id) } };
          const shown = ranking.mode === 'hybrid' ? { bool: { should: [query, near], minimum_should_match: 1 } } : near;
          return { bool: { filter: [shown, ...filter] } };
        }
        return qualifying.length > 0 ? { bool: { filter: [query, ...qualifying] } } : query;
      });
    },
  };
}
