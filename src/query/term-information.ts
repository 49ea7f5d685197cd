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
