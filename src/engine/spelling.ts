/** An indexed word that may be what a misspelt word meant. */
export interface Correction {
  word: string;
  /** Servable posts whose text carries it. */
  posts: number;
}

/** What the index knows of one word of a query. */
export interface WordCorrections {
  /** Servable posts whose text carries the word itself. */
  posts: number;
  /** Indexed words within two edits of it that more posts carry, the most alike first. */
  candidates: Correction[];
}

/**
 * Spelling corrections from the indexed vocabulary: the words of the posts' texts (caption,
 * enrichment, transcripts, on-screen text, visual descriptions), as the index's own analysis
 * splits and lower-cases them. A candidate is offered only when more servable posts carry it than
 * carry the word, so a correction never finds fewer posts.
 */
export interface SpellingCorrector {
  /** By word (lower-cased, as given); a word the index cannot correct maps to no candidates. */
  corrections(words: readonly string[]): Promise<Map<string, WordCorrections>>;
}
