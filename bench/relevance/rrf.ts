import { byScoreThenId, type FusedId, type ScoredId } from '../../src/query/fusion.ts';

/** Reciprocal rank fusion (Cormack et al. 2009), kept for the measurement that chose {@link fuseConvex}. */
export function fuseReciprocalRank(lexical: readonly ScoredId[], semantic: readonly ScoredId[], k = 60): FusedId[] {
  const rank = (hits: readonly ScoredId[]) => new Map([...hits].sort(byScoreThenId).map((h, i) => [h.id, i + 1]));
  const lex = rank(lexical);
  const sem = rank(semantic);
  const out: FusedId[] = [];
  for (const id of new Set([...lex.keys(), ...sem.keys()])) {
    const l = lex.get(id);
    const s = sem.get(id);
    out.push({ id, score: (l ? 1 / (k + l) : 0) + (s ? 1 / (k + s) : 0), lexical: l ?? null, semantic: s ?? null });
  }
  return out.sort(byScoreThenId);
}
