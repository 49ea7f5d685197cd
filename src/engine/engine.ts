import type { AccountRecord, PostRecord, SearchedPost } from '../domain/records.ts';
import type { AccountSearch, PostSearch } from '../query/search-request.ts';

/**
 * Computes the next state of one record from its current state (null when absent). Returns the
 * current object unchanged (or an equal one) when there is nothing to write, or null to leave an
 * absent record absent. Must be pure: the engine calls it again after a write conflict.
 */
export type RecordUpdate<R> = (id: string, current: R | null) => R | null;

/** What a merge wrote: the new state of every record whose state changed, with its previous state. */
export type MergeOutcome<R> = Map<string, { before: R | null; after: R }>;

/** The facts of an author's posts that `view_ratio_to_account_baseline` depends on. */
export interface AuthorPostFacts {
  id: string;
  author_id: string;
  posted_at: string;
  views: number | null;
  view_ratio_to_account_baseline: number | null;
}

/** Where a paged search stands: engine-specific, JSON-serializable, carried inside cursors. */
export type SearchState = Record<string, unknown>;

/** One page of search results. */
export interface SearchPage<R> {
  records: R[];
  /** Exact: true only when at least one more result exists. */
  hasMore: boolean;
  /** Continuation state when `hasMore`, else null. */
  state: SearchState | null;
}

/** Paging of a search: the first page has no state. */
export interface PageRequest {
  limit: number;
  state: SearchState | null;
  /** How long the engine must keep the snapshot for the next page. */
  keepAliveSeconds: number;
  /**
   * First pages: reads the current visibility epoch (see src/search/visibility.ts; null when
   * unknown). The engine may answer from a recent shared snapshot only if it was taken under the
   * epoch this returns when called during the request.
   */
  visibilityEpoch?: () => Promise<string | null>;
}

/** Ranking a post query by meaning: the query's embedding, and how to use it. */
export interface SemanticQuery {
  /**
   * The query text's embedding, in the space of the indexed vectors. A promise lets the engine
   * start the lexical side while the model still works.
   */
  vector: ArrayLike<number> | Promise<ArrayLike<number>>;
  /** `hybrid`: fused with BM25; `semantic`: vector similarity alone. */
  mode: 'hybrid' | 'semantic';
}

/** A store of records of one kind. */
export interface RecordStore<R> {
  /** Current records by ID, read in real time (no refresh needed). */
  get(ids: readonly string[]): Promise<Map<string, R>>;
  /**
   * Applies `update` to each record atomically with respect to concurrent merges (optimistic
   * concurrency: a conflicting write is re-read and re-applied), so no field is ever lost.
   */
  merge(ids: readonly string[], update: RecordUpdate<R>): Promise<MergeOutcome<R>>;
}

/**
 * The one interface between the service and its search engine. Routes and services depend on
 * this; the Elasticsearch adapter implements it and is the only code that speaks Elasticsearch.
 */
export interface Engine {
  /** A name for logs and health output, e.g. `elasticsearch 9.4.3`. */
  readonly name: string;
  readonly posts: RecordStore<PostRecord>;
  readonly accounts: RecordStore<AccountRecord>;
  /** The post currently holding `shortcode`, if any. Near real time. */
  findPostIdByShortcode(shortcode: string): Promise<string | null>;
  /** The account that most recently held `handle` (case-insensitive), if any. Near real time. */
  findAccountIdByHandle(handle: string): Promise<string | null>;
  /** IDs of posts that link to any of the accounts (author, coauthor, credited audio), in pages. */
  postIdsLinkedTo(accountIds: readonly string[]): AsyncIterable<string[]>;
  /** Facts of each author's available posts, for the baseline metric. */
  authorPostFacts(authorIds: readonly string[]): Promise<Map<string, AuthorPostFacts[]>>;
  /** A servable public account (the most followed) and one of its servable posts, for examples. */
  examples(): Promise<{ accountId: string | null; postId: string | null }>;
  /**
   * Post search (spec 4.1): servable posts matching the filters, in relevance order with a query,
   * else in `sort` order (default newest first). Every page of one search reads the same snapshot.
   * Throws ExpiredCursorError when the snapshot of `state` is gone. With `semantic` (first pages
   * of a query only; continuations carry it in their state) the query ranks by meaning too.
   */
  searchPosts(search: PostSearch, page: PageRequest, semantic?: SemanticQuery): Promise<SearchPage<SearchedPost>>;
  /**
   * Account search (spec 4.2): servable, non-private accounts matching the filters and, with a
   * posts scope, authoring at least N matching posts; relevance order with a query, else `sort`
   * (default most followed first). Same snapshot and expiry rules as {@link searchPosts}.
   */
  searchAccounts(search: AccountSearch, page: PageRequest): Promise<SearchPage<AccountRecord>>;
  /** Makes every acknowledged write visible to search. */
  refresh(): Promise<void>;
  /** Throws ServiceUnavailableError when the engine cannot serve. */
  checkHealth(): Promise<{ status: string }>;
  close(): Promise<void>;
}
