import type { Client, estypes } from '@elastic/elasticsearch';
import type { FacetBucket } from '../../contract/search-extras.ts';
import { InternalError } from '../../internal/errors.ts';
import type { FacetSpec } from '../../query/facet-request.ts';
import type { PostsScope } from '../../query/search-request.ts';
import type { FacetCounts, FacetEngine } from '../facets.ts';
import type { VisibilityEpoch } from '../visibility.ts';
import { accountSearchFilter, accountSearchQuery, narrowedScope } from './account-query.ts';
import { compileFilter, esPath } from './filter-compiler.ts';
import { dequantizeVector, FUSION_WINDOW, KNN_CANDIDATES, quantizeVector } from './fused-search.ts';
import { hybridWindows } from './hybrid-windows.ts';
import { COMPLETE_RESULTS, engineCall } from './errors.ts';
import { nearestPostsQuery } from './nearest-query.ts';
import { usesVectorFeedback, vectorFromFeedback, type VectorFeedback } from './vector-feedback.ts';
import { firstPage } from './paged-search.ts';
import { analyzeQuery } from '../../text/languages.ts';
import { postSearchFilter, postSearchQuery } from './post-query.ts';
import type { SnapshotPool } from './snapshot-pool.ts';
import { similarWindow } from './similar-search.ts';
import type { SimilarRanking } from '../search.ts';
import type { FilterNode, RangeNode } from '../../query/ast.ts';
import { createVolatileBounds, isAccountOnlyAuthorLeaf, isVolatileAuthorRange } from './volatile-bounds.ts';

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
export function approximateFacets(facets: FacetSpec[], aggregations: Record<string, unknown> | undefined): string[] {
  return facets.flatMap((facet, i) => {
    const agg = aggregations?.[`f${i}`] as { buckets?: TermBucket[]; doc_count_error_upper_bound?: number } | undefined;
    const off =
      facet.kind === 'terms' &&
      ((agg?.doc_count_error_upper_bound ?? 0) > 0 ||
        (agg?.buckets ?? []).some((b) => (b.doc_count_error_upper_bound ?? 0) > 0));
    return off ? [`f${i}`] : [];
  });
}

interface TermBucket {
  key: string | number;
  key_as_string?: string;
  doc_count: number;
  doc_count_error_upper_bound?: number;
}

/** The buckets of each facet, values as the API spells them; null last (only when some results lack a value). */
export function readFacets(
  facets: FacetSpec[],
  aggregations: Record<string, unknown> | undefined,
): Record<string, FacetBucket[]> {
  const out: Record<string, FacetBucket[]> = {};
  for (const [i, facet] of facets.entries()) {
    const agg = aggregations?.[`f${i}`] as { buckets?: TermBucket[]; doc_count_error_upper_bound?: number } | undefined;
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
    const missing = (aggregations?.[`m${i}`] as { doc_count?: number } | undefined)?.doc_count ?? 0;
    if (missing > 0) values.push({ value: null, count: missing });
    out[facet.name] = values;
  }
  return out;
}

/**
 * Facets on Elasticsearch: one `size: 0` search with exact hit counting and the facets'
 * aggregations, over the same query and on the same kind of snapshot as a first page of the
 * matching search (the node's shared point in time, re-run on a fresh one when the visibility
 * epoch moved; see firstPage).
 */
export function createFacetEngine(deps: {
  client: Client;
  snapshots: SnapshotPool;
  visibility: VisibilityEpoch;
  qualifying: (pit: string, scope: PostsScope) => Promise<Query>;
  postsIndex: string;
  accountsIndex: string;
  /** The fused searches' relevance floor: facets count the neighbours a search can show. */
  similarityFloor: number | null;
  /** The fused searches' vector feedback (vector-feedback.ts): facets count the window it gives; absent: off. */
  vectorFeedback?: VectorFeedback;
}): FacetEngine {
  const { client } = deps;
  const bounds = createVolatileBounds({ client, accountsIndex: deps.accountsIndex });

  async function count(
    index: string | string[],
    facets: FacetSpec[],
    keepAliveSeconds: number,
    queryOn: (pit: string) => Promise<Query>,
    rangeFilters?: ReadonlyMap<number, ResolvedRanges>,
  ): Promise<FacetCounts> {
    const run = async (pit: string) =>
      client.search({
        ...COMPLETE_RESULTS,
        pit: { id: pit, keep_alive: `${keepAliveSeconds}s` },
        query: await queryOn(pit),
        size: 0,
        track_total_hits: true,
        aggs: facetAggregations(facets, undefined, rangeFilters),
      });
    const { pit, shared, response } = await firstPage(deps, index, keepAliveSeconds, run);
    let aggregations = response.aggregations as Record<string, unknown> | undefined;
    try {
      const again = new Set(approximateFacets(facets, aggregations));
      if (again.size > 0) {
        // Several shards, and a value some shard did not list: count those facets again on the
        // same snapshot, each shard listing far more values.
        const aggs = Object.fromEntries(
          Object.entries(facetAggregations(facets, EXACT_SHARD_SIZE)).filter(([key]) => again.has(key)),
        );
        const exact = await engineCall(async () =>
          client.search({
            ...COMPLETE_RESULTS,
            pit: { id: pit, keep_alive: `${keepAliveSeconds}s` },
            query: await queryOn(pit),
            size: 0,
            track_total_hits: false,
            aggs,
          }),
        );
        aggregations = { ...aggregations, ...(exact.aggregations as Record<string, unknown>) };
      }
    } finally {
      if (!shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
    }
    const total = response.hits.total;
    return { total: typeof total === 'number' ? total : (total?.value ?? 0), facets: readFacets(facets, aggregations) };
  }

  /** The filter and exactly the window a `similar_to` search shows (same kNN, same quantized vector). */
  async function similarOnly(
    pit: string,
    keepAliveSeconds: number,
    field: string,
    filter: Query[],
    ranking: SimilarRanking,
  ): Promise<Query> {
    const hits = await similarWindow(client, {
      pit,
      keepAlive: `${keepAliveSeconds}s`,
      field,
      filter,
      vector: quantizeVector(ranking.vector),
      exclude: ranking.exclude,
    });
    return { bool: { filter: [...filter, { ids: { values: hits.map((h) => h._id!) } }] } };
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
    async postFacets(asked, facets, { ranking, keepAliveSeconds }) {
      // Author ranges over counters and metrics, read exactly on the posts' coarse copies.
      const [resolvedFilter, rangeFilters] = await Promise.all([
        bounds.resolve(asked.filter),
        volatileRangeFilters(facets),
      ]);
      const search = { ...asked, filter: resolvedFilter };
      if (ranking.kind === 'similar') {
        const filter = postSearchFilter(search);
        return count(
          deps.postsIndex,
          facets,
          keepAliveSeconds,
          (pit) => similarOnly(pit, keepAliveSeconds, 'embedding', filter, ranking),
          rangeFilters,
        );
      }
      if (ranking.kind === 'lexical' || search.query === null) {
        const query = postSearchQuery(search);
        return count(deps.postsIndex, facets, keepAliveSeconds, async () => query, rangeFilters);
      }
      const filter = postSearchFilter(search);
      const lexical = postSearchQuery(search);
      // The same semantic window as the search: its kNN, with the same quantized vector, on the same snapshot.
      const vector = Promise.resolve(ranking.vector).then((v) => dequantizeVector(quantizeVector(v)));
      vector.catch(() => undefined);
      return count(
        deps.postsIndex,
        facets,
        keepAliveSeconds,
        async (pit) => {
          const queryVector = await vector;
          // A query the model cannot read (an empty vector) has no neighbours, as in the search.
          if (queryVector.length === 0) return ranking.mode === 'semantic' ? { match_none: {} } : lexical;
          const keepAlive = `${keepAliveSeconds}s`;
          const neighbours = async (v: number[]) =>
            (
              await client.search({
                ...COMPLETE_RESULTS,
                pit: { id: pit, keep_alive: keepAlive },
                ...nearestPostsQuery({ vector: v, k: FUSION_WINDOW, candidates: KNN_CANDIDATES, filter }),
                size: FUSION_WINDOW,
                _source: false,
                track_total_hits: false,
              })
            ).hits.hits;
          const semanticReadable = search.query === null || analyzeQuery(search.query).semanticReadable;
          const windows = hybridWindows({
            mode: ranking.mode,
            window: FUSION_WINDOW,
            similarityFloor: deps.similarityFloor,
            semanticReadable,
          });
          let knn = await neighbours(queryVector);
          // The search's vector feedback (vector-feedback.ts), so that the window is the search's own.
          if (
            search.query !== null &&
            usesVectorFeedback(search.query, ranking.mode, semanticReadable, deps.vectorFeedback)
          ) {
            // Ranked as the search ranks it: a question's words at their weights (question-weights.ts).
            const weights = (await ranking.termWeights) ?? null;
            const lexicalWindow = await client.search({
              ...COMPLETE_RESULTS,
              pit: { id: pit, keep_alive: keepAlive },
              query: weights ? postSearchQuery(search, weights) : lexical,
              sort: [{ _score: { order: 'desc' } }, { id: 'asc' }],
              size: FUSION_WINDOW + 1,
              _source: false,
              track_total_hits: false,
            });
            const fused = windows.fuse(lexicalWindow.hits.hits, knn);
            const moved = await vectorFromFeedback({ client, pit, keepAlive, query: queryVector, fused });
            if (moved) knn = await neighbours(dequantizeVector(quantizeVector(moved)));
          }
          // Exactly the neighbours the search shows: above the relevance floor, and none when the
          // model cannot read the query's language (hybrid-windows.ts).
          const shown = windows.shownNeighbours(knn);
          const window: Query = { bool: { filter: [...filter, { ids: { values: shown } }] } };
          return ranking.mode === 'semantic'
            ? window
            : { bool: { should: [lexical, window], minimum_should_match: 1 } };
        },
        rangeFilters,
      );
    },

    accountFacets(search, facets, { keepAliveSeconds, ranking }) {
      const query = accountSearchQuery(search);
      const scope = search.posts;
      // As account search: with a posts scope one point in time spans both indices.
      const index = scope ? [deps.accountsIndex, deps.postsIndex] : deps.accountsIndex;
      return count(index, facets, keepAliveSeconds, async (pit) => {
        const qualifying = scope ? [await deps.qualifying(pit, narrowedScope(scope, search.filter))] : [];
        if (ranking?.kind === 'similar') {
          const filter = [...accountSearchFilter(search), ...qualifying];
          return similarOnly(pit, keepAliveSeconds, 'lookalike_embedding', filter, ranking);
        }
        return qualifying.length > 0 ? { bool: { filter: [query, ...qualifying] } } : query;
      });
    },
  };
}
