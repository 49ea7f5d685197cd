import type { AccountRecord, PostRecord } from '../domain/records.ts';
import type { RecordReader } from './records.ts';

/** An account's stored `followers_count` and the observation time of the profile holding it. */
export interface StoredFollowers {
  followers: number;
  /** ISO 8601 UTC, milliseconds (`2026-07-20T22:34:21.000Z`). */
  observedAt: string;
}

/** What get post and get account (spec 4.3, 4.4) need of the engine. */
export interface RecordReads {
  readonly posts: RecordReader<PostRecord>;
  readonly accounts: RecordReader<AccountRecord>;
  /** The post currently holding `shortcode`, if any. Near real time. */
  findPostIdByShortcode(shortcode: string): Promise<string | null>;
  /** The account that most recently held `handle` (case-insensitive), if any. Near real time. */
  findAccountIdByHandle(handle: string): Promise<string | null>;
  /**
   * The accounts' current `followers_count`, by ID (absent: no such account, or no profile yet).
   * Real time. Posts keep it coarsened (src/domain/volatile-facts.ts): what renders them reads it here.
   */
  currentFollowers(accountIds: readonly string[]): Promise<Map<string, number>>;
  /** {@link currentFollowers} with the time of the profile observation each count comes from. */
  storedFollowers(accountIds: readonly string[]): Promise<Map<string, StoredFollowers>>;
  /**
   * The posts' head vectors, by ID, from their vector documents (absent: none written yet, or
   * the text is one the model cannot read). Near real time: a vector written since the last
   * refresh is not there yet.
   */
  postVectors(postIds: readonly string[]): Promise<Map<string, number[]>>;
  /** A servable public account (the most followed) and one of its servable posts, for examples. */
  examples(): Promise<{ accountId: string | null; postId: string | null }>;
}
