import type { PostRecord } from '../domain/records.ts';

/**
 * The text fields the lexical side searches, as the engine indexes them: `caption` verbatim, the
 * others joined from several API fields with line breaks (see the projection).
 */
export type MatchedTextField = 'caption' | 'content_text' | 'transcript_text' | 'visible_text' | 'visual_text';

/** One post's highlights: the record they were made from, and the engine's fragments per field. */
export interface PostHighlights {
  record: PostRecord;
  /**
   * Fragments of the field's indexed text, matched terms wrapped in {@link HIGHLIGHT_START} and
   * {@link HIGHLIGHT_END} (noncharacters: they cannot be confused with text a post carries).
   */
  fragments: Partial<Record<MatchedTextField, string[]>>;
}

/** Marks the start of a highlighted term in a fragment. */
export const HIGHLIGHT_START = '\uFDD0';
/** Marks the end of a highlighted term in a fragment. */
export const HIGHLIGHT_END = '\uFDD1';

/** What match evidence needs of the engine. */
export interface MatchHighlighter {
  /** Highlights of `query`'s words (and their inflections) in the text fields of these posts; unknown ids are left out. */
  highlightPosts(query: string, ids: readonly string[]): Promise<Map<string, PostHighlights>>;
}

/** One of an account's posts and its cosine similarity to a reference vector. */
export interface PostSimilarity {
  id: string;
  similarity: number;
}

/** What the evidence of a `similar_to` account search needs of the engine. */
export interface SimilarityEvidence {
  /** The topics each account's available posts carry (those the engine counts most first). Near real time. */
  accountTopics(accountIds: readonly string[]): Promise<Map<string, string[]>>;
  /** Each account's `n` available posts closest to `vector`, closest first. Near real time. */
  closestPosts(
    accountIds: readonly string[],
    vector: readonly number[],
    n: number,
  ): Promise<Map<string, PostSimilarity[]>>;
}
