import type { Client, estypes } from '@elastic/elasticsearch';
import type { SearchPage, SimilarRanking, SimilarState } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { dequantizeVector, quantizeVector } from '../vectors.ts';
import { nearestQuery } from '../queries/nearest-query.ts';
import { firstPage, nextPage } from './paged-search.ts';
import { SEARCH_SOURCE } from '../queries/post-query.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

/**
 * How many of a reference's nearest neighbours a `similar_to` search can show: five default
 * pages. Every page searches this same window again (same snapshot, same quantized vector), so
 * pages never repeat or skip; a wider one costs every page its latency (bench/search.md,
 * "Lookalikes: latency").
 */
export const SIMILAR_WINDOW = 100;
/** HNSW candidates per shard: twice the window, for recall with the int8 index. */
export const SIMILAR_CANDIDATES = 200;

/**
 * The window of a `similar_to` search on a snapshot: up to {@link SIMILAR_WINDOW} nearest
 * neighbours of the quantized `vector` among those matching `filter`, the reference left out, in
 * order of similarity (kNN scores). Facets count exactly these.
 */
export async function similarWindow<T = unknown>(
  client: Client,
  options: {
    pit: string;
    keepAlive: string;
    field: string;
    filter: estypes.QueryDslQueryContainer[];
    vector: string;
    exclude: string;
    /** A slice of the window, with the records' sources (a page); absent: the whole window, ids only. */
    slice?: { from: number; size: number; source: estypes.SearchSourceConfig };
  },
): Promise<estypes.SearchHit<T>[]> {
  const response = await client.search<T>({
    ...COMPLETE_RESULTS,
    pit: { id: options.pit, keep_alive: options.keepAlive },
    ...nearestQuery({
      field: options.field,
      vector: dequantizeVector(options.vector),
      k: SIMILAR_WINDOW,
      candidates: SIMILAR_CANDIDATES,
      filter: { bool: { filter: options.filter, must_not: [{ ids: { values: [options.exclude] } }] } },
    }),
    // The k nearest are found first; from and size page within them, so a slice is exactly that
    // part of the whole window.
    ...(options.slice
      ? { from: options.slice.from, size: options.slice.size, _source: options.slice.source }
      : { size: SIMILAR_WINDOW, _source: false }),
    track_total_hits: false,
  });
  return response.hits.hits;
}

/**
 * One page of the records most like a reference vector: the nearest neighbours on `field` among
 * those matching `filter` (and `refine`, computed on the page's snapshot), the reference left out,
 * in order of similarity within {@link SIMILAR_WINDOW}.
 */
export async function similarSearch<R>(deps: {
  client: Client;
  snapshots: SnapshotPool;
  visibility: VisibilityEpoch;
  index: string | string[];
  field: string;
  filter: estypes.QueryDslQueryContainer[];
  refine?: (pit: string) => Promise<estypes.QueryDslQueryContainer[]>;
  /**
   * Where the vectors are apart from the records (posts: reads/nearest-posts.ts): the whole window
   * on the page's snapshot, then the records of the page's slice of it. Absent: the window is
   * searched on `field` with `filter`, and a page's slice brings its records along.
   */
  apart?: {
    window(pit: string, vector: string, exclude: string): Promise<estypes.SearchHit<unknown>[]>;
    records(pit: string, ids: string[]): Promise<Map<string, R>>;
  };
  page: { limit: number; keepAliveSeconds: number } & (
    { state: null; ranking: SimilarRanking } | { state: SimilarState }
  );
}): Promise<SearchPage<R, SimilarState>> {
  const { client, page } = deps;
  const keepAlive = `${page.keepAliveSeconds}s`;
  const vector = page.state === null ? quantizeVector(page.ranking.vector) : page.state.vector;
  const exclude = page.state === null ? page.ranking.exclude : page.state.exclude;
  const offset = page.state?.offset ?? 0;
  const want = page.limit + 1;

  const run = async (pit: string) => {
    if (deps.apart) {
      const whole = await deps.apart.window(pit, vector, exclude);
      const window = whole.slice(offset, offset + want);
      const shown = window.slice(0, page.limit);
      const read = await deps.apart.records(
        pit,
        shown.map((h) => h._id!),
      );
      return {
        records: shown.map((h) => read.get(h._id!)).filter((r): r is R => r !== undefined),
        shown: shown.length,
        hasMore: window.length > page.limit,
        similarity: new Map(window.map((h) => [h._id!, 2 * (h._score ?? 0.5) - 1])),
      };
    }
    const refined = deps.refine ? await deps.refine(pit) : [];
    // One request: the page's slice of the window with its records; a second request for the
    // records is slower (bench/search.md, "Lookalikes: latency").
    const size = Math.max(0, Math.min(want, SIMILAR_WINDOW - offset));
    const window =
      size === 0
        ? []
        : await similarWindow<{ record: R }>(client, {
            pit,
            keepAlive,
            field: deps.field,
            filter: [...deps.filter, ...refined],
            vector,
            exclude,
            slice: { from: offset, size, source: SEARCH_SOURCE },
          });
    const shown = window.slice(0, page.limit);
    return {
      records: shown.map((h) => h._source?.record).filter((r): r is R => r !== undefined),
      shown: shown.length,
      hasMore: window.length > page.limit,
      // A cosine kNN score is (1 + cosine) / 2.
      similarity: new Map(window.map((h) => [h._id!, 2 * (h._score ?? 0.5) - 1])),
    };
  };

  const { pit, shared, response } =
    page.state === null
      ? await firstPage(deps, deps.index, page.keepAliveSeconds, run)
      : await nextPage(deps.snapshots, deps.index, page.state, page.keepAliveSeconds, run);
  if (!response.hasMore && !shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
  return {
    records: response.records,
    hasMore: response.hasMore,
    similarity: response.similarity,
    state: response.hasMore
      ? { kind: 'similar', snapshot: pit, shared, vector, exclude, offset: offset + response.shown }
      : null,
  };
}
