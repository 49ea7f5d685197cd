import { applyAccountSnapshot } from './merge.ts';
import { linkedAccountIds } from './links.ts';
import { isNewerVersion, snapshotOf, type AccountRecord, type PostRecord } from './records.ts';

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

/** True when the post links to one of `accounts` and holds an older snapshot of it (or none). */
export function hasOlderSnapshot(post: PostRecord, accounts: ReadonlyMap<string, AccountRecord>): boolean {
  return linkedAccountIds(post).some((a) => {
    const account = accounts.get(a);
    const held = post.accounts[a];
    return account !== undefined && (!held || isNewerVersion(snapshotOf(account).version, held.version));
  });
}
