import { mintId } from '../contract/ids.ts';
import type { PostRecord } from './records.ts';

/** The accounts a post links to, as service IDs. */
export interface PostLinks {
  author: string | null;
  coauthors: string[];
  audioAccount: string | null;
}

/** The service IDs of the accounts the post's current raw facts link to. */
export function linksOf(record: Pick<PostRecord, 'raw'>): PostLinks {
  const raw = record.raw?.v;
  if (!raw) return { author: null, coauthors: [], audioAccount: null };
  const audioPlatformId = raw.audio?.attribution_account_platform_id ?? null;
  return {
    author: mintId('account', raw.author_platform_id),
    coauthors: raw.coauthor_platform_ids.map((p) => mintId('account', p)),
    audioAccount: audioPlatformId === null ? null : mintId('account', audioPlatformId),
  };
}

/** Every linked account ID, distinct. */
export function linkedAccountIds(record: PostRecord): string[] {
  const links = linksOf(record);
  const ids = [links.author, ...links.coauthors, links.audioAccount].filter((id): id is string => id !== null);
  return [...new Set(ids)];
}
