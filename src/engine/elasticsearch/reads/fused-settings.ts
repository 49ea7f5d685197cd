import type { VectorFeedback } from './vector-feedback.ts';

/**
 * How many hits each retriever contributes to the fused ranking: 2.5 default pages. A wider window
 * costs BM25 its top-k pruning (at 1M posts, 100 instead of 50 adds ~10 ms to every hybrid
 * search) for no measurable quality (SciFact nDCG@10 0.7192 at 100, 0.7173 at 50;
 * bench/relevance.md, "Fusion: why min–max convex combination at equal weights"). Results past it
 * continue in BM25 order.
 */
export const FUSION_WINDOW = 50;
/** HNSW candidates per shard: twice the window, for recall with the int8 index. */
export const KNN_CANDIDATES = 100;

/**
 * How a deployment fuses: its relevance floors, vector feedback and reading of the query's words.
 * Searches, facets and counts take the same settings, so that they count what a search returns.
 */
export interface FusedSettings {
  /** The relevance floor: the least cosine similarity of a post only the vectors found (null: none). */
  similarityFloor: number | null;
  /** The relevance floor for a query none of whose words any post carries (hybrid-windows.ts); absent: similarityFloor. */
  unmatchedFloor?: number | null;
  /** The similarity floor instead for a question's vector read as a sentence (model-floors.ts); absent: similarityFloor. */
  sentenceFloor?: number | null;
  /** The least cosine of a post related to a query's strong word matches by its vector (related-posts.ts); absent or null: none is. */
  relatedFloor?: number | null;
  /** Which hybrid first pages move the query vector toward their first fused results (vector-feedback.ts); absent: off. */
  vectorFeedback?: VectorFeedback;
  /** Whether hybrid first pages read the index's statistics of the query's words (query-terms.ts); absent: off. */
  queryTerms?: boolean;
}
