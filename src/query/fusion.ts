/** One retriever's hit: a document ID and that retriever's score (higher is better). */
export interface ScoredId {
  id: string;
  score: number;
}

/** A fused hit, with the parts it was fused from (for explanation and tests). */
export interface FusedId {
  id: string;
  score: number;
  lexical: number | null;
  semantic: number | null;
}

/**
 * Fuses a lexical (BM25) and a semantic (vector similarity) ranking of the same candidate window
 * into one, by a convex combination of min–max normalized scores:
 *
 *   score(d) = w · norm_lex(d) + (1 − w) · norm_sem(d),   norm(x) = (x − min) / (max − min)
 *
 * over each retriever's own top window; a document missing from a window scores 0 on that side
 * (it ranked below that window's minimum). Why this method (bench/README.md, "Fusion"):
 * - it keeps how much better the best hits are than the rest, which rank-only fusion (RRF)
 *   throws away, and measured better on SciFact at the same window;
 * - min–max makes BM25's unbounded, query-dependent scale comparable with cosine similarity
 *   without per-collection calibration;
 * - the weight is the one principled default, equal trust (0.5), not a value fitted to a
 *   benchmark.
 *
 * Ties break by ID, so the order is total and stable across pages.
 */
export function fuseConvex(lexical: readonly ScoredId[], semantic: readonly ScoredId[], lexicalWeight = 0.5): FusedId[] {
  const lex = normalized(lexical);
  const sem = normalized(semantic);
  const ids = new Set([...lex.keys(), ...sem.keys()]);
  const out: FusedId[] = [];
  for (const id of ids) {
    const l = lex.get(id) ?? null;
    const s = sem.get(id) ?? null;
    out.push({ id, score: lexicalWeight * (l ?? 0) + (1 - lexicalWeight) * (s ?? 0), lexical: l, semantic: s });
  }
  return out.sort(byScoreThenId);
}

function normalized(hits: readonly ScoredId[]): Map<string, number> {
  const out = new Map<string, number>();
  if (hits.length === 0) return out;
  let min = Infinity;
  let max = -Infinity;
  for (const h of hits) {
    min = Math.min(min, h.score);
    max = Math.max(max, h.score);
  }
  // One hit, or all equal: they are all the best this retriever found.
  const span = max - min;
  for (const h of hits) out.set(h.id, span > 0 ? (h.score - min) / span : 1);
  return out;
}

/** Best score first; ties by ID, so the order is total and stable across pages. */
export function byScoreThenId(a: { id: string; score: number }, b: { id: string; score: number }): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
