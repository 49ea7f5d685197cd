import type { FollowersPoint } from '../domain/derived.ts';
import type { MetricPoint } from '../domain/history.ts';
import type { PostVector } from '../domain/lookalike.ts';
import type { AccountRecord, PostRecord } from '../domain/records.ts';
import type { RecordStore } from './records.ts';

/** The facts of an author's post that `view_ratio_to_account_baseline` depends on. */
export interface AuthorPostFacts {
  id: string;
  authorId: string;
  postedAt: string;
  views: number | null;
  likes: number;
  comments: number;
  viewRatioToAccountBaseline: number | null;
}

/**
 * What the intake needs of the engine: the two record stores, the lookups its follow-up steps
 * make (fan-out, baselines), and making writes visible.
 */
export interface IntakeStore {
  readonly posts: RecordStore<PostRecord>;
  readonly accounts: RecordStore<AccountRecord>;
  /**
   * IDs of posts that link to any of the accounts (author, coauthor, credited audio), in pages;
   * with `unlessHolding` (an account's ID → the key of a snapshot, domain/snapshots.ts
   * `heldSnapshotKey`), less the posts that link to that account only holding that snapshot. Near
   * real time.
   */
  postIdsLinkedTo(accountIds: readonly string[], unlessHolding?: ReadonlyMap<string, string>): AsyncIterable<string[]>;
  /**
   * Facts of each author's available posts, for the baseline metric and the account metrics; with
   * `postedWithin`, only those posted in `[from, to]`. Near real time.
   */
  authorPostFacts(
    authorIds: readonly string[],
    postedWithin?: { from: string; to: string },
  ): Promise<Map<string, AuthorPostFacts[]>>;
  /**
   * Each account's observed `followers_count` in `[from, to]` from the metric history (empty when
   * it is off). Near real time; with `fresh`, every point written before the call is included
   * (the months of the range are refreshed first).
   */
  followerHistory(
    accountIds: readonly string[],
    from: string,
    to: string,
    options?: { fresh?: boolean },
  ): Promise<Map<string, FollowersPoint[]>>;
  /**
   * Each author's `limit` most recently posted available posts that have a vector of `model`, with
   * those vectors, newest first. Near real time.
   */
  recentPostVectors(authorIds: readonly string[], model: string, limit: number): Promise<Map<string, PostVector[]>>;
  /** Makes every acknowledged write visible to the near-real-time lookups above (posts; accounts are read in real time). */
  refresh(): Promise<void>;
  /**
   * Makes every acknowledged write visible to search on every API node: a refresh, then the
   * shared visibility epoch advances so that no node serves a first page from an older snapshot.
   * `points`: the metric points just written, whose months are refreshed too (for the history
   * endpoints); `allMonths`: every month of the history is (writes of earlier batches).
   */
  publish(written?: { points?: readonly MetricPoint[]; allMonths?: boolean }): Promise<void>;
}
