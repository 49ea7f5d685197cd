import { stableStringify } from '../internal/stable-json.ts';
import { snapshotOf, type AccountRecord, type AccountSnapshot, type PostRecord } from './records.ts';

/**
 * Which changes to one record must reach other records. A merge that changes an account's
 * snapshot content must be fanned out to every post linking to it; a change to a post's baseline
 * facts makes its author's `view_ratio_to_account_baseline` stale.
 */

/** What a snapshot says, without its version, as text: two snapshots that read alike give the same. */
export function snapshotContentText(snapshot: AccountSnapshot): string {
  const { version: _v, ...content } = snapshot;
  return stableStringify(content);
}

/** The part of an account that posts keep a copy of, without its version. */
function snapshotContent(account: AccountRecord | null): string {
  return account ? snapshotContentText(snapshotOf(account)) : '';
}

/** True when the copy linked posts keep of the account differs between the two states. */
export function snapshotChanged(before: AccountRecord | null, after: AccountRecord | null): boolean {
  return snapshotContent(before) !== snapshotContent(after);
}

/**
 * The facts of a post its author's derived values depend on: the baseline of the author's posts
 * (status, posting time, views, author) and the author's metrics (also likes and comments).
 */
function baselineFacts(post: PostRecord | null): string {
  const raw = post?.raw?.v;
  return stableStringify([
    post?.status?.v,
    raw?.posted_at,
    raw?.views,
    raw?.likes,
    raw?.comments,
    raw?.author_platform_id,
  ]);
}

/** True when the post's author's baseline ratios or account metrics must be recomputed between the two states. */
export function baselineFactsChanged(before: PostRecord | null, after: PostRecord | null): boolean {
  return baselineFacts(before) !== baselineFacts(after);
}

/**
 * True when the post's topics differ between the two states: its author's lookalike vector weighs
 * its posts' topics (domain/lookalike.ts), and enrichment usually arrives after the post's vector.
 */
export function topicsChanged(before: PostRecord | null, after: PostRecord | null): boolean {
  return stableStringify(before?.enrichment.topics?.v ?? []) !== stableStringify(after?.enrichment.topics?.v ?? []);
}
