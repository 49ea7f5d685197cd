import type { PostRecord, SearchedPost } from '../domain/records.ts';
import type { PostSearch } from '../query/search-request.ts';

/** One saved search as the matching pass asks the engine about it. */
export interface AlertQuery {
  id: string;
  /** The normalized post search (query and filters; never `similar_to`, never a sort). */
  search: PostSearch;
  /** The query's embedding, when it has a query and the service ranks with vectors. */
  vector: ArrayLike<number> | null;
}

/** Which saved searches each post satisfies: saved search id → the ids of its matching posts. */
export type AlertMatches = Map<string, Set<string>>;

/** The posts asked about as they are now, and what each query matches among them. */
export interface CurrentMatches {
  matches: AlertMatches;
  /** The posts read, as summaries render them (servable or not); absent when unknown. */
  posts: Map<string, SearchedPost>;
}

/** What the saved-search matching pass needs of the engine. */
export interface AlertMatching {
  /**
   * Of `postIds`, the posts each query matches as they are now: servable, satisfying the filters,
   * and with a query, matching it lexically or lying within the similarity floor of its vector
   * (the search's own relevance rules), as of the latest write of each. The posts come back too:
   * the events render them as read here.
   */
  matchCurrent(postIds: readonly string[], queries: readonly AlertQuery[]): Promise<CurrentMatches>;
  /**
   * The same question about records in hand (`records`, at most one per post id): posts just
   * written (matching at the write), or earlier versions of posts. Which of them each query
   * matches, as the index would once they are written.
   */
  matchVersions(records: readonly PostRecord[], queries: readonly AlertQuery[]): Promise<AlertMatches>;
}
