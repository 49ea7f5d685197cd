import type { PostRecord } from '../domain/records.ts';
import type { PostSearch } from '../query/search-codec.ts';

/** One saved search as matching asks the engine about it. */
export interface AlertQuery {
  id: string;
  /** The normalized post search (query and filters; never `similar_to`, never a sort). */
  search: PostSearch;
  /** The query's embedding, when it has a query and the service ranks with vectors. */
  vector: ArrayLike<number> | null;
}

/** Which saved searches each post satisfies: saved search id → the ids of its matching posts. */
export type AlertMatches = Map<string, Set<string>>;

/** What saved searches' matching needs of the engine. */
export interface AlertMatching {
  /**
   * Which of `records` (posts in hand, at most one per id: just written, read back, or an earlier
   * version) each query matches, as the index would once they are written: servable, satisfying
   * the filters, and with a query, matching it lexically or lying within the similarity floor of
   * its vector (the search's own relevance rules).
   */
  match(this: void, records: readonly PostRecord[], queries: readonly AlertQuery[]): Promise<AlertMatches>;
}
