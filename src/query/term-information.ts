/**
 * How much of a query's information each of its content words carries, by the corpus's own
 * statistics, and how much of it a lexical hit's words cover. A word most posts carry ("tips",
 * "best" in a corpus of how-to posts) says little of what a query asks; a word few or no posts
 * carry ("pimples" in a corpus that says "acne", a misspelling) says most of it, and a hit that
 * matched only the common words is evidence for little of the query (src/query/fusion.ts,
 * FULL_COVERAGE). No list of generic words: the corpus says which words are common.
 */

/** A word's document frequency in the corpus and the documents it was counted over. */
export interface TermStatistics {
  /** Documents carrying the word (0: none). */
  docFreq: number;
  /** Documents of the field it was counted in. */
  docCount: number;
}

/**
 * A word's information: BM25's inverse document frequency, as Lucene computes it,
 * ln(1 + (N − df + 0.5) / (df + 0.5)): the weight the lexical side already gives each word.
 * Rounded to two decimals, the precision cursors carry, so that every page weighs alike.
 */
export function informationOf(stats: TermStatistics): number {
  const n = Math.max(stats.docCount, stats.docFreq, 1);
  const df = Math.max(0, stats.docFreq);
  return Math.round(Math.log(1 + (n - df + 0.5) / (df + 0.5)) * 100) / 100;
}

/**
 * The share of a query's information the words `matched` (indices into `information`) carry, in
 * [0, 1]; 1 when the query has no information to share out (no weights).
 */
export function coverageOf(information: readonly number[], matched: Iterable<number>): number {
  const total = information.reduce((sum, w) => sum + w, 0);
  if (!(total > 0)) return 1;
  let covered = 0;
  const seen = new Set<number>();
  for (const i of matched) {
    if (seen.has(i) || i < 0 || i >= information.length) continue;
    seen.add(i);
    covered += information[i]!;
  }
  return covered / total;
}

/** A lexical hit as {@link specificInformation} reads it: the query's words it carries, and its classifications. */
export interface ClassifiedWords {
  /** Indices into the query's words. */
  words: readonly number[];
  /** What the pipeline classified the post's subject as (its author's niches); empty while unclassified. */
  classes: readonly string[];
}

/**
 * Fewer classified hits than this carrying a word, and its spread is not measured: one post's
 * classes say nothing of a word's other uses.
 */
export const SPREAD_SAMPLE = 2;

/**
 * Each word's information scaled by how specific its subject is among the hits that carry it: a
 * word whose posts are about one subject ("travel": posts of travel authors) says what the query is
 * about; a word whose posts are about every subject ("routine": baby sleep, night skincare, and
 * every language's "my … routine" posts) says how it is phrased, however rare it is. The service
 * knows a post's subject by its author's niches: the coarse subjects a customer filters on, where
 * a post's topics split one subject finely (a travel word is spread over packing, itineraries and
 * budgets, all travel). A word's spread is the effective number of niches of its hits (the
 * exponential of the entropy of their niches, each hit counting once, shared among its author's
 * niches); the least spread word keeps its information and another keeps the share least / its
 * own. Words carried by fewer than {@link SPREAD_SAMPLE} classified hits keep theirs, and with no
 * classification at all (a corpus the pipeline does not classify, SciFact) nothing changes.
 * Relative within the query, so a one-word query is never changed. Measured in bench/relevance.md,
 * "A word's subjects".
 */
export function specificInformation(information: readonly number[], hits: readonly ClassifiedWords[]): number[] {
  const mass = information.map(() => new Map<string, number>());
  const counts = information.map(() => 0);
  for (const hit of hits) {
    const classes = [...new Set(hit.classes)];
    if (classes.length === 0) continue;
    for (const i of new Set(hit.words)) {
      if (i < 0 || i >= information.length) continue;
      counts[i]!++;
      for (const c of classes) mass[i]!.set(c, (mass[i]!.get(c) ?? 0) + 1 / classes.length);
    }
  }
  const spread = mass.map((m, i) => {
    if (counts[i]! < SPREAD_SAMPLE) return null;
    let entropy = 0;
    for (const v of m.values()) {
      const p = v / counts[i]!;
      entropy -= p * Math.log(p);
    }
    return Math.exp(entropy);
  });
  const least = Math.min(...spread.filter((s): s is number => s !== null));
  if (!Number.isFinite(least)) return [...information];
  return information.map((w, i) => (spread[i] === null ? w : (w * least) / spread[i]!));
}

/**
 * A lexical hit's text score with each word's part of it scaled as {@link specificInformation}
 * scaled the word's information (`weighed` against `information`): the share of the score that its
 * words keep. A hit carrying only words spread over every subject keeps little; one carrying the
 * query's least spread words keeps all. `wordScores` are the words' own scores in the hit (indices
 * into the query's words); without them, or when no word was scaled, the score is unchanged.
 */
export function specificScore(
  score: number,
  wordScores: ReadonlyMap<number, number> | null,
  information: readonly number[],
  weighed: readonly number[],
): number {
  if (!wordScores) return score;
  let all = 0;
  let kept = 0;
  for (const [i, part] of wordScores) {
    const own = information[i] ?? 0;
    all += part;
    kept += own > 0 ? (part * (weighed[i] ?? own)) / own : part;
  }
  return all > 0 ? (score * kept) / all : score;
}
