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
 * Rocchio runs. From the literature, not fitted (1, 5 and 10 were measured as sensitivity).
 */
export const FEEDBACK_DOCUMENTS = 3;
/** Rocchio's β with α = 1: SMART's classic relevant-document weight (0.5 and 1 measured as sensitivity). */
export const FEEDBACK_WEIGHT = 0.75;

/**
 * Rocchio's update without negative documents, unit length:
 *
 *   q' = (q + β · mean(d₁ … dₖ)) / ‖q + β · mean(d₁ … dₖ)‖
 *
 * A document whose length differs from the query's (no vector, or another model's) is left out;
 * `query` unchanged (as a copy) when no document is left.
 */
export function feedbackVector(
  query: readonly number[],
  documents: readonly (readonly number[])[],
  weight = FEEDBACK_WEIGHT,
): number[] {
  const usable = documents.filter((d) => d.length === query.length);
  if (usable.length === 0 || query.length === 0) return [...query];
  const out = query.map((x, i) => x + (weight * usable.reduce((sum, d) => sum + d[i]!, 0)) / usable.length);
  const norm = Math.hypot(...out);
  return norm > 0 ? out.map((x) => x / norm) : [...query];
}
