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
 * The first fusion (min–max over each window), kept as the benchmarks' reference
 * (bench/relevance/fusion.ts); the service fuses with {@link fuseHybrid}, which keeps its scale but
 * not its lexical floor.
 *
 * Fuses a lexical (BM25) and a semantic (vector similarity) ranking of the same candidate window
 * into one, by a convex combination of min–max normalized scores:
 *
 *   score(d) = w · norm_lex(d) + (1 − w) · norm_sem(d),   norm(x) = (x − min) / (max − min)
 *
 * over each retriever's own top window; a document missing from a window scores 0 on that side
 * (it ranked below that window's minimum). Why this method (bench/relevance.md, "Fusion: why min–max
 * convex combination at equal weights"):
 * - it keeps how much better the best hits are than the rest, which rank-only fusion (RRF)
 *   throws away, and measured better on SciFact at the same window;
 * - min–max makes BM25's unbounded, query-dependent scale comparable with cosine similarity
 *   without per-collection calibration;
 * - the weight is the one principled default, equal trust (0.5), not a value fitted to a
 *   benchmark.
 *
 * Ties break by ID, so the order is total and stable across pages.
 */
export function fuseConvex(
  lexical: readonly ScoredId[],
  semantic: readonly ScoredId[],
  lexicalWeight = 0.5,
): FusedId[] {
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

/** A lexical hit: its text score and how many of the query's exact entities it carries. */
export interface LexicalHit extends ScoredId {
  /** Exact entities (hashtags, handles, quoted phrases) of the query the document carries. */
  tier: number;
  /**
   * The share of the query's information the hit's words carry, in [0, 1] (src/query/term-information.ts);
   * absent: all of it, as far as the fusion is concerned.
   */
  coverage?: number;
}

/**
 * The share of a query's information a lexical hit must carry for its lexical evidence to count in
 * full; a hit carrying less counts in proportion. BM25's min–max normalization gives the best hit
 * of the window the full lexical share however little of the query it matched: when a question's
 * topic words are in no post ("how do I get rid of pimples fast?"), the window is the posts
 * sharing its generic words ("fast SSD"), and its best came above every post found by meaning.
 * Half the query's information: a hit carrying more of it than the rest of the query does is
 * evidence for what the query asks; one carrying less is evidence for a side of it. Measured in
 * bench/relevance.md, "Questions phrased in the asker's own words".
 */
export const FULL_COVERAGE = 0.5;

/** What a lexical hit's coverage leaves of its lexical share: all from {@link FULL_COVERAGE} up, else in proportion. */
export function coverageFactor(coverage: number | undefined): number {
  return coverage === undefined ? 1 : Math.min(1, Math.max(0, coverage) / FULL_COVERAGE);
}

/** A semantic hit: the vector retriever's score and the cosine similarity it stands for. */
export interface SemanticHit extends ScoredId {
  cosine: number;
}

/** How {@link fuseHybrid} weighs and filters. */
export interface HybridOptions {
  /** Weight of the lexical side, in [0, 1] (0.5: equal trust). */
  lexicalWeight: number;
  /**
   * The relevance floor: a document only the semantic side found is kept when its cosine
   * similarity to the query reaches this; null keeps every neighbour.
   */
  similarityFloor: number | null;
  /** False when the model cannot read the query: neighbours alone are no evidence then. */
  semanticEvidence: boolean;
  /**
   * The lexical score of the best document the lexical window did not retrieve: the score of the
   * hit just past the window, or 0 (BM25's floor) when the window holds every match.
   */
  lexicalFloor: number;
}

/**
 * The width, in cosine similarity, over which a document only the semantic side found fades in
 * above the relevance floor: its fused score is scaled by (cosine − floor) / band, up to 1. Twice
 * what separates two CPUs' query–document cosines at the 95th percentile (bench/embeddings.md,
 * "Kernel noise"): a neighbour that crosses the floor on a hair enters or leaves at the bottom of
 * the fused ranking, never in the middle of it (the feedback documents included).
 */
export const FLOOR_BAND = 0.05;

/** A fused hit with its entity tier. */
export interface TieredFusedId extends FusedId {
  tier: number;
}

/**
 * Fuses a lexical and a semantic window into one ranking (bench/relevance.md, "The lexical side's
 * floor: the first unretrieved score"), keeping every piece of evidence a retriever found:
 *
 *   score(d) = w · (lex(d) − floor) / (max lex − floor) + (1 − w) · minmax_sem(d)
 *
 * - The lexical side is min–max normalized against the score of a document it did *not*
 *   retrieve (`lexicalFloor`: the first hit past the window, or BM25's floor 0 when the window
 *   holds every match), not against its own lowest hit. With the window's minimum, the lowest
 *   lexical hit scored 0, exactly like a document BM25 never matched, so a rare term matching two
 *   posts counted for the first only. Now a retrieved document always keeps a share above every
 *   document that was not retrieved; with a full window the scale is min–max's, as measured.
 * - The semantic side keeps min–max over its window (its neighbours are never "all the
 *   matches": every document has a similarity).
 * - A lexical hit carrying less than {@link FULL_COVERAGE} of the query's information keeps that
 *   part of its lexical share (`coverage`), or as much as the semantic side finds it about the
 *   query (its normalized similarity), whichever is more: a hit on a generic word alone does not
 *   outrank the documents the query means, and a hit on the topic's one word in a corpus where that
 *   word is common (a tenth of the posts on crochet) keeps what the meaning side vouches for. Only
 *   when the model reads the query (else the lexical side is all there is, and BM25's order stands).
 * - Documents carrying more of the query's exact entities rank first (`tier`), fused score next.
 * - The floor: a document no lexical hit supports is returned only when the model can read the
 *   query and its cosine similarity reaches `similarityFloor`, and it fades in over
 *   {@link FLOOR_BAND} above it, so the decision at the floor is taken at the bottom of the ranking.
 *   With only neighbours ranked (semantic, w = 0) the order is unchanged: the fade grows with the
 *   similarity the order already follows.
 *
 * Ties break by ID, so the order is total and stable across pages.
 */
export function fuseHybrid(
  lexical: readonly LexicalHit[],
  semantic: readonly SemanticHit[],
  options: HybridOptions,
): TieredFusedId[] {
  const w = options.lexicalWeight;
  const floor = options.lexicalFloor;
  let lexMax = -Infinity;
  for (const h of lexical) lexMax = Math.max(lexMax, h.score);
  const sem = normalized(semantic);
  const out = new Map<string, TieredFusedId>();
  for (const h of lexical) {
    const normalized = lexMax > floor ? (h.score - floor) / (lexMax - floor) : 1;
    const s = sem.get(h.id) ?? null;
    // A hit the meaning side finds about the query vouches for itself as far as its similarity goes.
    const l = options.semanticEvidence ? normalized * Math.max(coverageFactor(h.coverage), s ?? 0) : normalized;
    out.set(h.id, { id: h.id, score: w * l + (1 - w) * (s ?? 0), lexical: l, semantic: s, tier: h.tier });
  }
  for (const h of semantic) {
    if (out.has(h.id)) continue;
    if (!options.semanticEvidence) continue;
    const floor = options.similarityFloor;
    if (floor !== null && h.cosine < floor) continue;
    const s = sem.get(h.id)!;
    const fade = floor === null ? 1 : Math.min(1, (h.cosine - floor) / FLOOR_BAND);
    out.set(h.id, { id: h.id, score: (1 - w) * s * fade, lexical: null, semantic: s, tier: 0 });
  }
  return [...out.values()].sort((a, b) => b.tier - a.tier || byScoreThenId(a, b));
}
