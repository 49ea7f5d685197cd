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
  /**
   * The least similarity of a correction to the word, the term suggester's `accuracy`: 1 − edits
   * (a transposition is one) / letters of the shorter word.
   */
  accuracy: number;
  /**
   * The closest words tried per text field, in order: 1, the engine's closest alone (when it is
   * doubtful, a function word or too rare, nothing is corrected rather than a farther guess).
   */
  candidates: number;
}

/**
 * The lexical side's silent correction of a fused search (what it searches replaces what was
 * typed, unasked): only a word no post carries, by the engine's closest word alone, carried by two
 * posts or more (a word of one post may be a misspelling itself), one edit from four letters, two
 * from eight. On SciFact's and the social set's 1,309 queries, trying farther candidates changed 5
 * corrections, all 5 for the worse ("RUNX" → "runs").
 */
export const SILENT_CORRECTION: CorrectionPolicy = { replaces: 'unknown', minPosts: 2, accuracy: 0.75, candidates: 1 };

/**
 * "Did you mean": any word a close word beats in posts, one edit from four letters, two from six
 * (Lucene's `AUTO` fuzziness), the closest of three per field that passes: the user decides
 * whether to follow it.
 */
export const SUGGESTION: CorrectionPolicy = { replaces: 'rarer', minPosts: 1, accuracy: 0.66, candidates: 3 };

/** An indexed word that may be what a misspelt word meant. */
export interface Correction {
  word: string;
  /** Servable posts whose text carries it. */
  posts: number;
  /** How alike it is to the word it corrects, as the engine's suggester scores it: 1 − edits / letters of the shorter. */
  score: number;
}

/**
 * Spelling corrections from the indexed vocabulary: the words of the posts' texts (caption,
 * enrichment, transcripts, on-screen text, visual descriptions), or of the accounts' names and
 * descriptions, as the index's own analysis splits and lower-cases them (the words to correct
 * come from src/text/correctable-words.ts). "Posts" below: the documents of the vocabulary.
 */
export interface SpellingCorrector {
  /**
   * The closest correction under `policy` of each of `words` (lower-cased keys), a correction never
   * a function word of `language`; a word without one is absent.
   */
  closest(words: readonly string[], policy: CorrectionPolicy, language: string): Promise<Map<string, Correction>>;
  /**
   * How many documents carry each of `asked.words`, and each of `asked.pairs` together (`together`
   * keyed by the two words joined with a NUL), and which of `asked.reach` lie within `policy`'s
   * reach of an indexed word (`near`): whether the rest of a query agrees with a correction.
   */
  counts(
    asked: { words: string[]; pairs: Array<[string, string]>; reach: string[] },
    policy: CorrectionPolicy,
    language: string,
  ): Promise<{
    carried: ReadonlyMap<string, number>;
    together: ReadonlyMap<string, number>;
    near: ReadonlySet<string>;
  }>;
}
