/**
 * How a correction is decided where a silent correction and a suggestion truly differ. Both take
 * the closest indexed word (the fewest edits, then the most posts) that enough servable posts
 * carry.
 */
export interface CorrectionPolicy {
  /**
   * Which words are replaced: `unknown`, only a word no servable post carries (a silent correction
   * must never change what a word finds); `rarer`, also a word fewer posts carry than its
   * correction (a suggestion the user chooses).
   */
  replaces: 'unknown' | 'rarer';
  /** The fewest servable posts a correction is carried by. */
  minPosts: number;
  /** Words of this many letters or more may be two edits off their correction; shorter ones one. */
  twoEditsFrom: number;
}

/**
 * The lexical side's silent correction of a fused search: only a word no post carries, by a word
 * of two posts or more (a word of one post may be a misspelling itself), two edits only from
 * eight letters on (what it searches replaces what was typed, unasked).
 */
export const SILENT_CORRECTION: CorrectionPolicy = { replaces: 'unknown', minPosts: 2, twoEditsFrom: 8 };

/**
 * "Did you mean": any word a close word beats in posts, two edits from six letters on (Lucene's
 * `AUTO` fuzziness): the user decides whether to follow it.
 */
export const SUGGESTION: CorrectionPolicy = { replaces: 'rarer', minPosts: 1, twoEditsFrom: 6 };

/** The edits (insertions, deletions, substitutions, transpositions) a correction of `word` may make. */
export function editsAllowed(word: string, policy: CorrectionPolicy): 1 | 2 {
  return [...word].length >= policy.twoEditsFrom ? 2 : 1;
}

/** An indexed word that may be what a misspelt word meant. */
export interface Correction {
  word: string;
  /** Servable posts whose text carries it. */
  posts: number;
}

/**
 * Spelling corrections from the indexed vocabulary: the words of the posts' texts (caption,
 * enrichment, transcripts, on-screen text, visual descriptions), as the index's own analysis
 * splits and lower-cases them (the words to correct come from src/text/correctable-words.ts).
 */
export interface SpellingCorrector {
  /**
   * The closest correction under `policy` of each of `words` (lower-cased keys), a correction never
   * a function word of `language`; a word without one is absent.
   */
  closest(words: readonly string[], policy: CorrectionPolicy, language: string): Promise<Map<string, Correction>>;
}
