import { createHash } from 'node:crypto';
import { snapshotContentText } from './changes.ts';
import { applyAccountSnapshot, replacesSnapshot } from './merge.ts';
import { linkedAccountIds } from './links.ts';
import { snapshotOf, type AccountRecord, type AccountSnapshot, type PostRecord } from './records.ts';

/**
 * The post with the current snapshot of every linked account found in `accounts`. Returns the
 * same object when nothing is newer, so callers can tell "nothing to write" without comparing.
 */
export function withSnapshots(record: PostRecord, accounts: ReadonlyMap<string, AccountRecord>): PostRecord {
  let next = record;
  for (const a of linkedAccountIds(record)) {
    const account = accounts.get(a);
    if (account) next = applyAccountSnapshot(next, a, snapshotOf(account));
  }
  return next;
}

/**
 * True when the post links to one of `accounts` and holds none of it, or an older one that reads
 * differently (see {@link replacesSnapshot}).
 */
export function hasOlderSnapshot(post: PostRecord, accounts: ReadonlyMap<string, AccountRecord>): boolean {
  return linkedAccountIds(post).some((a) => {
    const account = accounts.get(a);
    const held = post.accounts[a];
    return account !== undefined && (!held || replacesSnapshot(snapshotOf(account), held));
  });
}

/** The accounts whose snapshots `posts` hold: what {@link withCurrentFollowers} needs read. */
export function snapshotAccountsOf(posts: Iterable<Pick<PostRecord, 'accounts'>>): string[] {
  const ids = new Set<string>();
  for (const post of posts) for (const id of Object.keys(post.accounts)) ids.add(id);
  return [...ids];
}

/**
 * The post with each linked account's current `followers_count` (from `followers`, read from the
 * accounts at render time) in place of the coarse copy it keeps (src/domain/volatile-facts.ts).
 * Returns the same object when nothing differs.
 */
export function withCurrentFollowers<P extends Pick<PostRecord, 'accounts'>>(
  post: P,
  followers: ReadonlyMap<string, number>,
): P {
  let accounts: PostRecord['accounts'] | null = null;
  for (const [id, snapshot] of Object.entries(post.accounts)) {
    const current = followers.get(id);
    if (current === undefined || !snapshot.profile || snapshot.profile.followers_count === current) continue;
    accounts ??= { ...post.accounts };
    accounts[id] = { ...snapshot, profile: { ...snapshot.profile, followers_count: current } };
  }
  return accounts ? { ...post, accounts } : post;
}

/**
 * A key for what a post holds of account `accountId`: the account and its snapshot's content (not
 * its version). Posts index the keys of the snapshots they hold (`held_snapshots`), so fan-out
 * finds the posts whose copy of an account reads differently from the current one without reading
 * the many that already hold it: a snapshot whose content is the same is never written over
 * (replacesSnapshot).
 */
export function heldSnapshotKey(accountId: string, snapshot: AccountSnapshot): string {
  let digest = contentDigests.get(snapshot);
  if (digest === undefined) {
    digest = createHash('sha256').update(snapshotContentText(snapshot)).digest('base64url').slice(0, 16);
    contentDigests.set(snapshot, digest);
  }
  return `${accountId}:${digest}`;
}

/** Each snapshot object's content digest, computed once (snapshots are values: see snapshotOf). */
const contentDigests = new WeakMap<AccountSnapshot, string>();

/** The key of the snapshot of `account` a post would take now (see {@link heldSnapshotKey}). */
export function currentSnapshotKey(account: AccountRecord): string {
  return heldSnapshotKey(account.id, snapshotOf(account));
}
