import type { estypes } from '@elastic/elasticsearch';
import { InternalError } from '../../../internal/errors.ts';
import { nextBucketStart, type CountWindow } from '../../../query/count-window.ts';
import type { FacetSpec } from '../../../query/facet-request.ts';
import type { FieldDef } from '../../../query/fields.ts';
import type { CountBucket, CountEngine } from '../../counts.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { exactAggregations, facetAggregations, readFacets, type FacetAggregations } from './facet-search.ts';
import { esPath } from '../queries/filter-compiler.ts';
import { firstPage } from './paged-search.ts';
import { postSnapshotIndices } from './nearest-posts.ts';
import { createPostResults, type PostResultsDeps } from './post-results.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

type Query = estypes.QueryDslQueryContainer;
type Aggs = Record<string, estypes.AggregationsAggregationContainer>;

/** The field posts are counted over time by. */
const POSTED_AT = 'posted_at';

/** The posts of `results` posted in the window `[from, to)`. */
export function windowQuery(results: Query, window: Pick<CountWindow, 'from' | 'to'>): Query {
  const posted = { range: { [POSTED_AT]: { gte: window.from, lt: window.to, format: 'epoch_millis' } } };
  return { bool: { filter: [results, posted] } };
}

/**
 * The date histogram of a window: calendar buckets of its interval in its time zone, every bucket
 * from the first start to the last present (`extended_bounds`, empty ones with 0) and none
 * outside (`hard_bounds`); with `values`, each bucket's count of each value (a `terms`
 * sub-aggregation that lists exactly them, so its counts are exact on any number of shards) and
 * of the posts carrying none of them.
 */
export function histogramAggregations(
  window: CountWindow,
  starts: readonly number[],
  breakdown?: { field: FieldDef; values: string[] },
): Aggs {
  // extended_bounds takes the last bucket's start; hard_bounds an end it rounds down to its
  // bucket's start and excludes: the next bucket's.
  const first = starts[0]!;
  const last = starts.at(-1)!;
  const end = nextBucketStart(last, window);
  const sub: Aggs | undefined =
    breakdown && breakdown.values.length > 0
      ? {
          v: {
            terms: { field: esPath(breakdown.field.field), size: breakdown.values.length, include: breakdown.values },
          },
          o: { filter: { bool: { must_not: [{ terms: { [esPath(breakdown.field.field)]: breakdown.values } }] } } },
        }
      : undefined;
  return {
    h: {
      date_histogram: {
        field: POSTED_AT,
        calendar_interval: window.interval,
        time_zone: window.timeZone,
        min_doc_count: 0,
        extended_bounds: { min: first, max: last },
        hard_bounds: { min: first, max: end },
      },
      ...(sub && { aggs: sub }),
    },
  };
}

interface HistogramBucket {
  key: number;
  doc_count: number;
  v?: { buckets: Array<{ key: string | number; doc_count: number }> };
  o?: { doc_count: number };
}

/** What the engine answers for {@link histogramAggregations} (the searches' generic types it). */
interface HistogramAggregations {
  h?: { buckets?: HistogramBucket[] };
}

/**
 * The buckets of a histogram response, checked against the service's own calendar (`starts`):
 * a bucket the service would not cut (time-zone rules that differ between the engine's data and
 * the service's) is refused, never answered.
 */
export function readHistogram(
  aggregations: HistogramAggregations | undefined,
  starts: readonly number[],
  values?: string[],
): CountBucket[] {
  const buckets = aggregations?.h?.buckets ?? [];
  const keys = buckets.map((b) => b.key);
  if (keys.length !== starts.length || keys.some((key, i) => key !== starts[i])) {
    throw new InternalError(
      `the engine cut ${keys.length} buckets where the service's calendar has ${starts.length}: their time-zone data differ`,
    );
  }
  return buckets.map((b) => {
    if (!values) return { start: b.key, count: b.doc_count };
    const byValue = new Map((b.v?.buckets ?? []).map((v) => [String(v.key), v.doc_count]));
    return {
      start: b.key,
      count: b.doc_count,
      breakdown: values.map((value) => ({ value, count: byValue.get(value) ?? 0 })),
      other: values.length > 0 ? (b.o?.doc_count ?? 0) : b.doc_count,
    };
  });
}

/**
 * Post counts on Elasticsearch: the results of the search (post-results.ts, as facets count
 * them) within the window, on the node's shared point in time as a first page reads it (re-run on
 * a fresh one when the visibility epoch moved). Without a breakdown one `size: 0` search with
 * exact hit counting and the date histogram; with one, that search first counts the field's top
 * values over the window (a terms facet, exact as facets are), and a second one on the same
 * snapshot counts them per bucket.
 */
export function createCountEngine(
  deps: PostResultsDeps & {
    snapshots: SnapshotPool;
    visibility: VisibilityEpoch;
  },
): CountEngine {
  const { client } = deps;
  const results = createPostResults(deps);

  return {
    async postCounts(search, window, { ranking, keepAliveSeconds, breakdown, starts }) {
      const resultsOn = await results.resultsOf(search, ranking, keepAliveSeconds);
      const keepAlive = `${keepAliveSeconds}s`;
      // The query is built once per snapshot: a fused one searches its kNN window there.
      const queries = new Map<string, Promise<Query>>();
      const queryOn = (pit: string) => {
        let query = queries.get(pit);
        if (!query) queries.set(pit, (query = resultsOn(pit).then((q) => windowQuery(q, window))));
        return query;
      };
      const top: FacetSpec | null = breakdown
        ? { kind: 'terms', name: 'top', field: breakdown.field.field, type: breakdown.field.type, size: breakdown.size }
        : null;
      // Answers the facet's aggregations or the histogram's, as `aggs` asks.
      const search0 = async (pit: string, aggs: Aggs, totals: boolean) =>
        client.search<unknown, FacetAggregations & HistogramAggregations>({
          ...COMPLETE_RESULTS,
          pit: { id: pit, keep_alive: keepAlive },
          query: await queryOn(pit),
          size: 0,
          track_total_hits: totals,
          aggs,
        });
      // Every search of the count is one unit on one snapshot: a node that leaves between two
      // of them makes firstPage run them all again on a fresh snapshot, not answer 503.
      const run = async (pit: string) => {
        const response = await search0(
          pit,
          top ? facetAggregations([top]) : histogramAggregations(window, starts),
          true,
        );
        const total = response.hits.total;
        const count = typeof total === 'number' ? total : (total?.value ?? 0);
        if (!top) return { total: count, buckets: readHistogram(response.aggregations, starts) };
        const exact = await exactAggregations([top], response.aggregations, (aggs) => search0(pit, aggs, false));
        // A terms facet's values are strings (the breakdown fields are keywords); its null bucket is not a value.
        const values = readFacets([top], exact).top!.flatMap((b) => (typeof b.value === 'string' ? [b.value] : []));
        const perBucket = await search0(
          pit,
          histogramAggregations(window, starts, { field: breakdown!.field, values }),
          false,
        );
        return { total: count, buckets: readHistogram(perBucket.aggregations, starts, values) };
      };
      const { pit, shared, response } = await firstPage(deps, postSnapshotIndices(deps.layout), keepAliveSeconds, run);
      if (!shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
      return response;
    },
  };
}
