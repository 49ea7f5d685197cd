import { linksOf } from './links.ts';
import type { AccountRecord, PostRecord, SearchedPost } from './records.ts';

/**
 * True when a post can be served: its latest status is available, its raw facts have been
 * observed and so has its author's profile (the author summary is a required object, so a post
 * whose author was never observed is held back until the account arrives).
 */
export function isServablePost<R extends SearchedPost>(
  record: R | null,
): record is R & { raw: NonNullable<PostRecord['raw']> } {
  if (!record?.raw || record.status?.v !== 'available') return false;
  const author = linksOf(record).author;
  return author !== null && Boolean(record.accounts[author]?.profile);
}

/** Where an account stands for get account (spec 2.2 rule 2). */
export type AccountAvailability = 'servable' | 'unavailable' | 'unknown';

/** Servable: active with observed profile facts. Unavailable: known but not active. */
export function accountAvailability(record: AccountRecord | null): AccountAvailability {
  if (!record) return 'unknown';
  const status = record.status?.v;
  if (status && status !== 'active') return 'unavailable';
  return record.profile ? 'servable' : 'unknown';
}

/** True when an account search may return the account: servable and public (spec 4.2). */
export function isSearchableAccount(record: AccountRecord | null): boolean {
  return accountAvailability(record) === 'servable' && record!.profile?.v.is_private === false;
}
