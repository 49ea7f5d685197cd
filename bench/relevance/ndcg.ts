/**
 * nDCG@k exactly as pytrec_eval's `ndcg_cut.k` (trec_eval >= 9.0.4, the version pytrec_eval bundles),
 * plus the BEIR convention of dropping a retrieved document whose id equals the query id.
 *
 * Pure and dependency-free: the relevance benches and the API's BEIR harness share it.
 *
 * trec_eval semantics reproduced here:
 * - the run is re-sorted by score descending, ties broken by document id in *descending* string
 *   order (trec_eval's `comp_sim_docno`), whatever order the engine returned;
 * - DCG@k = sum over the first k ranks r (1-based) of rel / log2(r + 1), counting only rel > 0;
 *   unjudged documents count as 0;
 * - the ideal DCG takes every judged document with rel > 0 (retrieved or not), sorted by rel
 *   descending, cut at k;
 * - gains are the raw qrels values (graded, not 2^rel - 1).
 *
 * Deliberate choices for the mean (documented because pytrec_eval differs in corner cases that do
 * not occur in BEIR SciFact):
 * - only queries present in the qrels with at least one rel > 0 document are averaged (pytrec_eval
 *   would score an all-zero query 0 and BEIR would average it in);
 * - a qrels query absent from the run (or with an empty ranking) scores 0 (pytrec_eval would leave
 *   it out of the mean, which flatters a system that returns nothing).
 */

/** Query id -> (document id -> graded relevance). */
export type Qrels = ReadonlyMap<string, ReadonlyMap<string, number>>;

export interface ScoredDoc {
  readonly id: string;
  readonly score: number;
}

/** Query id -> retrieved documents (any order; they are re-sorted as trec_eval does). */
export type Run = ReadonlyMap<string, readonly ScoredDoc[]>;

export interface NdcgOptions {
  /** Cut-off k (default 10). */
  readonly k?: number;
  /** Drop a retrieved document whose id equals the query id (BEIR `ignore_identical_ids`; default true). */
  readonly ignoreIdenticalIds?: boolean;
}

export interface MeanNdcg {
  /** Mean over the evaluated queries (0 when none). */
  readonly mean: number;
  /** Per evaluated query. */
  readonly perQuery: ReadonlyMap<string, number>;
  /** How many queries were averaged. */
  readonly evaluated: number;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts as trec_eval does: score descending, then document id descending. Returns a new array. */
export function trecOrder(docs: readonly ScoredDoc[]): ScoredDoc[] {
  return [...docs].sort((x, y) => (x.score !== y.score ? y.score - x.score : compareIds(y.id, x.id)));
}

function discount(rank: number): number {
  return Math.log2(rank + 1);
}

/** Ideal DCG@k from the judgments alone (rel > 0 only). */
export function idealDcgAtK(judgments: ReadonlyMap<string, number>, k = 10): number {
  const gains = [...judgments.values()].filter((rel) => rel > 0).sort((a, b) => b - a);
  let sum = 0;
  for (let i = 0; i < Math.min(k, gains.length); i++) sum += gains[i]! / discount(i + 1);
  return sum;
}

/**
 * nDCG@k of one query. `queryId` is needed only for the self-match drop. Returns 0 when the query
 * has no relevant document (callers normally exclude such queries; see {@link meanNdcgAtK}).
 */
export function ndcgAtK(
  ranking: readonly ScoredDoc[],
  judgments: ReadonlyMap<string, number>,
  options: NdcgOptions & { readonly queryId?: string } = {},
): number {
  const k = options.k ?? 10;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  const ideal = idealDcgAtK(judgments, k);
  if (ideal <= 0) return 0;
  const drop = (options.ignoreIdenticalIds ?? true) ? options.queryId : undefined;
  const ranked = trecOrder(drop === undefined ? ranking : ranking.filter((d) => d.id !== drop));
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    const rel = judgments.get(ranked[i]!.id) ?? 0;
    if (rel > 0) dcg += rel / discount(i + 1);
  }
  return dcg / ideal;
}

/** Whether a query takes part in the mean: it has at least one document with rel > 0. */
export function hasRelevant(judgments: ReadonlyMap<string, number> | undefined): boolean {
  if (!judgments) return false;
  for (const rel of judgments.values()) if (rel > 0) return true;
  return false;
}

/** Mean nDCG@k over the qrels queries that have a relevant document (see the module comment). */
export function meanNdcgAtK(run: Run, qrels: Qrels, options: NdcgOptions = {}): MeanNdcg {
  const perQuery = new Map<string, number>();
  for (const [queryId, judgments] of qrels) {
    if (!hasRelevant(judgments)) continue;
    perQuery.set(queryId, ndcgAtK(run.get(queryId) ?? [], judgments, { ...options, queryId }));
  }
  let total = 0;
  for (const value of perQuery.values()) total += value;
  return { mean: perQuery.size === 0 ? 0 : total / perQuery.size, perQuery, evaluated: perQuery.size };
}
