/**
 * Pseudo-relevance feedback on the query's vector (Rocchio, 1971, as dense retrievers use it: Li
 * et al., "Pseudo Relevance Feedback with Deep Language Models and Dense Retrievers: Successes and
 * Pitfalls", TOIS 2023; ANCE-PRF, Yu et al. 2021): the best few documents of the fused ranking
 * are taken as relevant, and the query's vector moves toward theirs before the nearest neighbours
 * are asked again. A question's function and generic words ("how can I get better at … without
 * expensive stuff") pull its embedding toward posts phrased alike; the documents both retrievers
 * agree on pull it back toward what it is about. Measured in bench/relevance.md,
 * "Pseudo-relevance feedback on the query vector".
 */

/**
 * Feedback documents: the fused ranking's top 3, the depth of ANCE-PRF and of Li et al.'s
 * Rocchio runs. From the literature, not fitted (1, 5 and 10 were measured as sensitivity). The
 * cut after them is a band, not a rank ({@link feedbackShares}).
 */
export const FEEDBACK_DOCUMENTS = 3;
/** Rocchio's β with α = 1: SMART's classic relevant-document weight (0.5 and 1 measured as sensitivity). */
export const FEEDBACK_WEIGHT = 0.75;

/** A feedback document: its vector, and how relevant the first ranking takes it to be. */
export interface FeedbackDocument {
  vector: readonly number[];
  /** Its fused score (any scale; only the ratios between documents count); absent: 1. */
  weight?: number;
}

/**
 * The width, in fused score, of the band around the cut between the {@link FEEDBACK_DOCUMENTS}th
 * and the next fused result over which a document's feedback share fades from whole to none
 * (see {@link feedbackShares}). Twice what separates two CPUs' fused scores at the 95th percentile
 * (bench/embeddings.md, "Kernel noise"), so a near tie at the cut moves the vector by a little,
 * never by a whole document.
 */
export const FEEDBACK_BAND = 0.1;

/**
 * Each fused result's share of the feedback, from the fused scores in ranking order: 1 well above
 * the cut between the {@link FEEDBACK_DOCUMENTS}th and the next score (their midpoint), 0 well below
 * it, fading linearly across {@link FEEDBACK_BAND} around it; a missing score counts as 0 (the
 * lowest fused score there is). With the top {@link FEEDBACK_DOCUMENTS} more than half a band
 * above the rest, exactly those count, whole, as in ANCE-PRF and Li et al.; with a near tie at the
 * cut, both sides of it count by half. A hard top 3 moved the vector by a whole document when two
 * fused scores swapped on a hair (another CPU's rounding), and the final kNN with it; these shares
 * move it by as little as the scores moved.
 */
export function feedbackShares(
  scores: readonly number[],
  documents = FEEDBACK_DOCUMENTS,
  band = FEEDBACK_BAND,
): number[] {
  const cut = ((scores[documents - 1] ?? 0) + (scores[documents] ?? 0)) / 2;
  return scores.map((score) => Math.min(1, Math.max(0, 0.5 + (score - cut) / band)));
}

/**
 * Rocchio's update without negative documents, unit length, each document by its weight:
 *
 *   q' = (q + β · Σ wᵢ dᵢ / Σ wᵢ) / ‖q + β · Σ wᵢ dᵢ / Σ wᵢ‖
 *
 * The search weighs a document by its fused score times its share ({@link feedbackShares}): the
 * fused score is the relevance model's P(D | Q) (RM3 weighs its feedback documents so), so a
 * third document found by a weak resemblance alone moves the query little, where an equal share
 * moved it toward posts of another subject ("how can I get better at baby sleep routine without
 * expensive stuff", one post on the topic and two weeknight-dinner posts phrased alike; measured
 * in bench/relevance.md, "Questions phrased in the asker's own words"); the share lets a document
 * near the cut count in part, on both sides of it.
 *
 * A document whose length differs from the query's (no vector, or another model's) is left out;
 * `query` unchanged (as a copy) when no document is left or their weights are not positive.
 */
export function feedbackVector(
  query: readonly number[],
  documents: readonly FeedbackDocument[],
  weight = FEEDBACK_WEIGHT,
): number[] {
  const usable = documents.filter((d) => d.vector.length === query.length && (d.weight ?? 1) > 0);
  const total = usable.reduce((sum, d) => sum + (d.weight ?? 1), 0);
  if (usable.length === 0 || query.length === 0 || !(total > 0)) return [...query];
  const out = query.map(
    (x, i) => x + (weight * usable.reduce((sum, d) => sum + (d.weight ?? 1) * d.vector[i]!, 0)) / total,
  );
  const norm = Math.hypot(...out);
  return norm > 0 ? out.map((x) => x / norm) : [...query];
}

/**
 * The unit-length mean of `vectors` of the first one's length (a vector of another model's length
 * is left out): the direction they share, "more like these". Null for none, or when they cancel out.
 */
export function unitMean(vectors: readonly (readonly number[])[]): number[] | null {
  const usable = vectors.filter((v) => v.length > 0 && v.length === vectors[0]!.length);
  if (usable.length === 0) return null;
  const sum = usable[0]!.map((_, i) => usable.reduce((total, v) => total + v[i]!, 0));
  const norm = Math.hypot(...sum);
  return norm > 0 ? sum.map((x) => x / norm) : null;
}
