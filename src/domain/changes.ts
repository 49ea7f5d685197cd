import { stableStringify } from '../internal/stable-json.ts';
import { sameRecord, sameSnapshotContent } from './merge.ts';
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

/** True when the copy linked posts keep of the account differs between the two states. */
export function snapshotChanged(before: AccountRecord | null, after: AccountRecord | null): boolean {
  if (before === null || after === null) return before !== after;
  // In place, not as two key-sorted serializations: those cost the intake's worker ~1 % of its CPU
  // (bench/intake.md, "The worker on 2026-12-04").
  return !sameSnapshotContent(snapshotOf(before), snapshotOf(after));
}

/** What a baseline fact compares as: JSON's view, where an absent value and null are the same. */
const fact = (value: string | number | null | undefined) => value ?? null;

/**
 * True when the post's author's baseline ratios or account metrics must be recomputed between the
 * two states: the facts they depend on, the baseline of the author's posts (status, posting time,
 * views, author) and the author's metrics (also likes and comments), differ.
 */
export function baselineFactsChanged(before: PostRecord | null, after: PostRecord | null): boolean {
  const a = before?.raw?.v;
  const b = after?.raw?.v;
  return (
    fact(before?.status?.v) !== fact(after?.status?.v) ||
    fact(a?.posted_at) !== fact(b?.posted_at) ||
    fact(a?.views) !== fact(b?.views) ||
    fact(a?.likes) !== fact(b?.likes) ||
    fact(a?.comments) !== fact(b?.comments) ||
    fact(a?.author_platform_id) !== fact(b?.author_platform_id)
  );
}

/**
 * True when the post's topics differ between the two states: its author's lookalike vector weighs
 * its posts' topics (domain/lookalike.ts), and enrichment usually arrives after the post's vector.
 */
export function topicsChanged(before: PostRecord | null, after: PostRecord | null): boolean {
  return !sameRecord(before?.enrichment.topics?.v ?? [], after?.enrichment.topics?.v ?? []);
}
