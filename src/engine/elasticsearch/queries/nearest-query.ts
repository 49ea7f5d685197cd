import type { estypes } from '@elastic/elasticsearch';
import { queryVector } from '../vectors.ts';

/**
 * A nearest-neighbour search as a `knn` *query*, not the search request's top-level `knn`
 * section. The section runs as a search phase of its own before the query phase (the engine's
 * DFS round), the query runs inside the query phase. Same hits: each shard's `k` nearest, and the
 * global top `k` by score is always within the union of the shards' (so `from`/`size` within `k`
 * page the same window), and faster at 1M posts (`bench/search/knn-shape.ts`; bench/search.md).
 */
export function nearestQuery(options: {
  field: string;
  vector: number[];
  /** Neighbours per shard. */
  k: number;
  /** HNSW candidates per shard. */
  candidates: number;
  filter?: estypes.QueryDslQueryContainer | estypes.QueryDslQueryContainer[];
}): { query: estypes.QueryDslQueryContainer } {
  return { query: { knn: knnClause(options) } };
}

function knnClause(options: Parameters<typeof nearestQuery>[0]): estypes.KnnQuery {
  return {
    field: options.field,
    // Base64 of big-endian float32: the same floats, a quarter of the bytes (../vectors.ts).
    query_vector: queryVector(options.vector),
    k: options.k,
    num_candidates: options.candidates,
    ...(options.filter === undefined ? {} : { filter: options.filter }),
  };
}

/**
 * A query's neighbours among posts: the posts nearest by their head (`embedding`) or by their best
 * passage (`passages.vector`, captions longer than one passage: src/text/embedding-text.ts), each
 * scored by the nearer of the two. Both sides take the same `k` and filter (a nested kNN applies a
 * filter on the post's own fields to the post), and `dis_max` keeps each post's best score, on the
 * same scale as one kNN's, so the window is the `k` best posts of the union and the similarity
 * floor reads it unchanged. On SciFact (bench/relevance.md, "Passages in the service"): hybrid
 * nDCG@10 0.7192 → 0.7331, for 1.23× the head-only kNN's time (1.09× when no post is long).
 */
export function nearestPostsQuery(options: {
  vector: number[];
  k: number;
  candidates: number;
  filter?: estypes.QueryDslQueryContainer | estypes.QueryDslQueryContainer[];
}): { query: estypes.QueryDslQueryContainer } {
  const head = knnClause({ field: 'embedding', ...options });
  // The same for the passages, the query vector encoded once.
  const passage = { ...head, field: 'passages.vector' };
  return {
    query: {
      dis_max: {
        queries: [
          { knn: head },
          // Unmapped in the posts' own documents, which a snapshot of both indices also spans.
          { nested: { path: 'passages', score_mode: 'max', ignore_unmapped: true, query: { knn: passage } } },
        ],
      },
    },
  };
}
