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
 * Rocchio's update without negative documents, unit length, each document by its share
 * ({@link feedbackShares}; all 1 when absent):
 *
 *   q' = (q + β · Σ wᵢdᵢ / Σ wᵢ) / ‖q + β · Σ wᵢdᵢ / Σ wᵢ‖
 *
 * A document whose length differs from the query's (no vector, or another model's), or without a
 * share, is left out; `query` unchanged (as a copy) when no document is left.
 */
export function feedbackVector(
  query: readonly number[],
  documents: readonly (readonly number[])[],
  weight = FEEDBACK_WEIGHT,
  shares?: readonly number[],
): number[] {
  const usable = documents
    .map((vector, i) => ({ vector, share: shares ? (shares[i] ?? 0) : 1 }))
    .filter((d) => d.vector.length === query.length && d.share > 0);
  if (usable.length === 0 || query.length === 0) return [...query];
  const total = usable.reduce((sum, d) => sum + d.share, 0);
  const out = query.map((x, i) => x + (weight * usable.reduce((sum, d) => sum + d.share * d.vector[i]!, 0)) / total);
  const norm = Math.hypot(...out);
  return norm > 0 ? out.map((x) => x / norm) : [...query];
}
