import type { Account, AuthorSummary } from '../contract/api.ts';
import type { MediaUrlSigner } from '../media/url-signer.ts';
import { NO_ACCOUNT_METRICS, type AccountMetrics } from '../domain/derived.ts';
import type { AccountProfile, AccountRecord } from '../domain/records.ts';

/** The account facts needed to render the author summary. */
export function renderAuthorSummary(id: string, profile: AccountProfile, signer: MediaUrlSigner): AuthorSummary {
  return {
    id,
    handle: profile.handle,
    display_name: profile.display_name,
    web_url: profile.web_url,
    avatar_url: avatarUrl(id, profile, signer),
    followers_count: profile.followers_count,
    is_verified: profile.is_verified,
  };
}

function avatarUrl(id: string, profile: AccountProfile, signer: MediaUrlSigner): string | null {
  return profile.avatar_source_url === null ? null : signer.sign('avatar', id, profile.avatar_source_url);
}

/** The derived account metrics, after the spec's fields; all null for a private account. */
function metricFields(record: AccountRecord, isPrivate: boolean): AccountMetrics {
  // In NO_ACCOUNT_METRICS' key order, whatever order the stored record has.
  return { ...NO_ACCOUNT_METRICS, ...(isPrivate ? {} : record.metrics?.v) };
}

/**
 * Spec 2.2. Fields derived from the account's posts are null when the account is private (rule 1)
 * and while no account enrichment has been observed.
 */
export function renderAccount(record: AccountRecord, signer: MediaUrlSigner): Account {
  const profileRegister = record.profile;
  if (!profileRegister) throw new Error(`account ${record.id} has no profile to render`);
  const profile = profileRegister.v;
  const derived = <T>(value: T | null | undefined): T | null => (profile.is_private ? null : (value ?? null));
  return {
    id: record.id,
    handle: profile.handle,
    display_name: profile.display_name,
    web_url: profile.web_url,
    avatar_url: avatarUrl(record.id, profile, signer),
    biography: profile.biography,
    bio_links: profile.bio_links,
    account_type: profile.account_type,
    category_label: profile.category_label,
    declared_locations: profile.declared_locations,
    is_verified: profile.is_verified,
    is_private: profile.is_private,
    followers_count: profile.followers_count,
    following_count: profile.following_count,
    posts_count: profile.posts_count,
    publishing_summary: derived(record.publishing_summary?.v),
    publishing_languages: derived(record.publishing_languages?.v),
    niches: derived(record.niches?.v),
    observed_at: profileRegister.t,
    ...metricFields(record, profile.is_private),
  };
}
