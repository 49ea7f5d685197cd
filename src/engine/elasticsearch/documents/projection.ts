import { mintId } from '../../../contract/ids.ts';
import { ACCOUNT_METRIC_FIELDS, engagementRateByViews, type AccountMetrics } from '../../../domain/derived.ts';
import { linkedAccountIds, linksOf } from '../../../domain/links.ts';
import { hasVector, mediaEnrichmentOf, type AccountRecord, type PostRecord } from '../../../domain/records.ts';
import { accountAvailability, isServablePost } from '../../../domain/availability.ts';
import { coarse } from '../../../domain/volatile-facts.ts';
import { heldSnapshotKey } from '../../../domain/snapshots.ts';
import { analyzeIn, documentLanguage } from '../../../text/languages.ts';
import { engineVector } from '../vectors.ts';
import { foldCase } from '../../../query/fields.ts';
import { foldName, nameKeys } from '../../../text/name-keys.ts';
import { textMemo } from '../../../text/text-memo.ts';

/**
 * Record → Elasticsearch document: the record itself under `record` (stored, not indexed) and an
 * indexed projection of it (searched, filtered and sorted on; not stored in _source). The
 * projection is recomputed from the record on every write, so it can never drift from it.
 */

type Doc = Record<string, unknown>;

function distinct(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

function items(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function joinText(parts: Array<string | null | undefined>): string | undefined {
  const text = parts.filter((p): p is string => typeof p === 'string' && p.length > 0).join('\n');
  return text.length > 0 ? text : undefined;
}

/**
 * A post's record as its own document stores it: without its vectors, which its vector document
 * holds (vector-projection.ts); the embedding keeps its model and text hash (what says
 * whether the post needs embedding again), and an empty vector (a text the model cannot read).
 */
export function storedPostRecord(record: PostRecord): PostRecord {
  const embedding = record.embedding;
  if (!embedding || (embedding.vector === undefined && embedding.passages === undefined) || embedding.vector === '')
    return record;
  return { ...record, embedding: { model: embedding.model, text_hash: embedding.text_hash } };
}

/** The indexed document of a post. */
export function projectPost(record: PostRecord): Doc {
  const linked = linkedAccountIds(record);
  const doc: Doc = {
    record,
    id: record.id,
    platform_id: record.platform_id,
    status: record.status?.v,
    servable: isServablePost(record),
    linked_account_ids: linked,
    // Which snapshot of each it holds: fan-out reads only the posts holding another (follow-ups.ts).
    held_snapshots: linked.flatMap((id) =>
      Object.hasOwn(record.accounts, id) ? [heldSnapshotKey(id, record.accounts[id]!)] : [],
    ),
  };
  const raw = record.raw?.v;
  if (!raw) return doc;
  const links = linksOf(record);
  const e = record.enrichment;
  const media = raw.media.map((m) => mediaEnrichmentOf(record, m.platform_id));
  const visibleText = media.flatMap((m) => (m.visible_text?.v ?? []).map((v) => v.text));

  Object.assign(doc, {
    shortcode: raw.shortcode,
    enrichment_pending: Object.keys(e).length === 0,
    posted_at: raw.posted_at,
    observed_at: record.raw!.t,
    format: raw.format,
    primary_language: e.primary_language?.v ?? undefined,
    caption: raw.caption,
    hashtags: raw.hashtags,
    mentions: mentionsOf(raw.caption_mentions),
    hashtag_names: suggestNames(raw.hashtags.map(foldCase)),
    mention_names: suggestNames(mentionsOf(raw.caption_mentions) ?? []),
    content_text: contentText(e),
    transcript_text: joinText(media.map((m) => m.transcript?.v)),
    visible_text: joinText(visibleText),
    visual_text: joinText(media.map((m) => m.visual_description?.v)),
    ...enrichmentFacets(e),
    comments_enabled: raw.comments_enabled,
    views: raw.views ?? undefined,
    likes: raw.likes,
    comments: raw.comments,
    engagement_rate_by_views: engagementRateByViews(raw.likes, raw.comments, raw.views) ?? undefined,
    view_ratio_to_account_baseline: record.view_ratio_to_account_baseline ?? undefined,
    audio_id: raw.audio ? mintId('audio', raw.audio.platform_id ?? `post:${record.platform_id}`) : undefined,
    audio_type: raw.audio?.type,
    media_types: distinct(raw.media.map((m) => m.type)),
    media_count: raw.media.length,
    coauthor_ids: links.coauthors,
    author: authorFacts(links.author, links.author ? record.accounts[links.author] : undefined),
  });
  Object.assign(doc, stemmedCompanions(doc));
  // The vectors themselves go to the post's vector document (vector-projection.ts); the post says
  // which model made them (what finds an author's embedded posts).
  if (record.embedding && hasVector(record.embedding)) doc.embedding_model = record.embedding.model;
  return doc;
}

type Enrichment = PostRecord['enrichment'];

/** The enrichment's text (summary, hook, key messages, proofs, offers, calls to action, narrative): one searchable field. */
function contentText(e: Enrichment): string | undefined {
  const hook = e.hook?.v;
  return joinText([
    e.content_summary?.v,
    hook?.construction,
    ...(e.key_messages?.v ?? []).map((k) => k.summary),
    ...(e.proofs?.v ?? []).map((p) => p.summary),
    ...(e.offers?.v ?? []).map((o) => [o.summary, ...o.stated_terms].join(' ')),
    ...(e.calls_to_action?.v ?? []).map((c) => c.summary),
    e.narrative_structure?.v?.description,
  ]);
}

/** The enrichment's classifications, each an exact field to filter and facet on. */
function enrichmentFacets(e: Enrichment) {
  const hook = e.hook?.v;
  const keyMessages = e.key_messages?.v ?? [];
  const proofs = e.proofs?.v ?? [];
  const offers = e.offers?.v ?? [];
  const ctas = e.calls_to_action?.v ?? [];
  return {
    topics: e.topics?.v ?? undefined,
    creative_formats: e.creative_formats?.v ?? undefined,
    commercial_contexts: e.commercial_contexts?.v ?? undefined,
    hook_devices: hook?.devices,
    hook_modalities: hook?.modalities,
    key_message_roles: distinct(keyMessages.flatMap((k) => k.roles)),
    proof_mechanisms: distinct(proofs.flatMap((p) => p.mechanisms)),
    offer_types: distinct(offers.flatMap((o) => o.types)),
    cta_actions: distinct(ctas.flatMap((c) => c.actions)),
    cta_stages: distinct(ctas.flatMap((c) => c.stages)),
    narrative_patterns: e.narrative_structure?.v?.patterns,
    has_paid_partnership_label: e.has_paid_partnership_label?.v ?? undefined,
  };
}

/** The author's facts a post keeps for author filters: exact, copied from the account's snapshot. */
function authorFacts(id: string | null, author: PostRecord['accounts'][string] | undefined) {
  if (!author) return { id };
  const profile = author.profile;
  return {
    id,
    handle: profile?.handle,
    status: author.status ?? undefined,
    // Coarse, as the snapshot keeps them (src/domain/volatile-facts.ts); coarsening is idempotent,
    // so the index holds bucket edges only, whatever record it is given.
    followers_count: coarseOrAbsent(profile?.followers_count),
    following_count: coarseOrAbsent(profile?.following_count),
    posts_count: coarseOrAbsent(profile?.posts_count),
    is_verified: profile?.is_verified,
    is_private: profile?.is_private,
    account_type: profile?.account_type,
    // Post-derived account facts are null for private accounts (spec 2.2 rule 1): not filterable either.
    niches: profile?.is_private ? undefined : (author.niches ?? undefined),
    publishing_languages: profile?.is_private ? undefined : (author.publishing_languages ?? undefined),
    country_codes: distinct((profile?.declared_locations ?? []).map((l) => l.country_code)),
    // No account metrics: posts do not keep them (src/domain/volatile-facts.ts); author
    // filters on them ask the accounts index (volatile-bounds.ts).
  };
}

function coarseOrAbsent(value: number | undefined): number | undefined {
  return value === undefined ? undefined : coarse(value);
}

/** Text fields that also get a client-stemmed companion (`<field>_stemmed`), searched together. */
const STEMMED_TEXT_FIELDS = ['caption', 'content_text', 'transcript_text', 'visible_text', 'visual_text'] as const;

/** What the creator wrote or said, in the post's language; the rest is machine-written enrichment. */
const CREATOR_TEXT_FIELDS: ReadonlySet<string> = new Set(['caption', 'transcript_text', 'visible_text']);

/**
 * The stemmed companions, each analyzed in its language (src/text/languages.ts): what the creator
 * wrote in the post's `primary_language` (else the one detected from the caption); the
 * enrichment's own texts (its summaries, the media's visual descriptions), which one pipeline
 * writes in one language whatever the post's, in the language detected from the first of them
 * (`content_text`, the longest). One detection per side: detection is the costliest step of a
 * projection (~0.25 ms a text), and a second one on the other machine-written text could only
 * disagree by mistake.
 */
function stemmedCompanions(doc: Doc): Doc {
  const out: Doc = {};
  const declared = typeof doc.primary_language === 'string' ? doc.primary_language : null;
  let postLanguage: string | undefined;
  let enrichmentLanguage: string | undefined;
  for (const field of STEMMED_TEXT_FIELDS) {
    const text = doc[field];
    if (typeof text !== 'string') continue;
    const language = CREATOR_TEXT_FIELDS.has(field)
      ? (postLanguage ??= documentLanguage(declared, typeof doc.caption === 'string' ? doc.caption : text))
      : (enrichmentLanguage ??= documentLanguage(null, typeof doc.content_text === 'string' ? doc.content_text : text));
    out[`${field}_stemmed`] = analyzeIn(text, language);
  }
  return out;
}

/** Caption mentions (`@name` or `name`) as lowercase handles, for exact `@name` queries. */
function mentionsOf(mentions: unknown): string[] | undefined {
  const out = items(mentions)
    .filter((m): m is string => typeof m === 'string')
    .map((m) => foldCase(m.trim().replace(/^@/, '')))
    .filter((m) => m !== '');
  return out.length > 0 ? distinct(out) : undefined;
}

/**
 * A post's hashtags or mentioned handles as typeahead counts them: the folded name (what a prefix
 * matches), the unit separator, and the name as the filters take it (lower-cased, accents kept:
 * `#café` and `#cafe` are two hashtags, each counted on its own).
 */
function suggestNames(names: readonly string[]): string[] | undefined {
  const out = distinct(names.filter((n) => n !== '').map((n) => suggestNameEntries.get(n, suggestNameEntry)));
  return out.length > 0 ? out : undefined;
}

const suggestNameEntry = (name: string) => `${foldName(name)}${NAME_SEPARATOR}${name}`;
/**
 * Recent names' entries: hashtags and handles repeat across posts (a few thousand cover most of a
 * day's), and folding one (two normalizations and a pass per code point) cost ~1 % of the intake
 * worker's CPU (bench/intake.md, "The worker on 2026-12-04"). Two generations of 5,000.
 */
const suggestNameEntries = textMemo<string>(200_000, (entry) => entry.length, 5_000);

/** Between a folded name and its display form in `hashtag_names` and `mention_names`. */
export const NAME_SEPARATOR = '\u001f';

/** The indexed document of an account. */
export function projectAccount(record: AccountRecord): Doc {
  const doc: Doc = {
    record,
    id: record.id,
    platform_id: record.platform_id,
    status: record.status?.v,
    servable: accountAvailability(record) === 'servable',
  };
  const profile = record.profile?.v;
  if (!profile) return doc;
  Object.assign(doc, {
    handle: profile.handle,
    handle_observed_at: record.profile!.t,
    display_name: profile.display_name,
    // What typeahead finds an account by: its handle, its display name and each later word of it.
    name_keys: distinct([foldName(profile.handle), ...nameKeys(profile.display_name)]).filter((k) => k !== ''),
    biography: profile.biography,
    category_label: profile.category_label,
    publishing_summary: record.publishing_summary?.v ?? undefined,
    account_type: profile.account_type,
    is_verified: profile.is_verified,
    is_private: profile.is_private,
    followers_count: profile.followers_count,
    following_count: profile.following_count,
    posts_count: profile.posts_count,
    country_codes: distinct(profile.declared_locations.map((l) => l.country_code)),
    publishing_languages: record.publishing_languages?.v ?? undefined,
    niches: record.niches?.v ?? undefined,
    observed_at: record.profile!.t,
    ...metricFields(record.metrics?.v, profile.is_private),
  });
  Object.assign(doc, accountStemmedCompanions(doc, record.publishing_languages?.v ?? null));
  if (record.embedding?.vector) doc.embedding = engineVector(record.embedding.vector);
  // A private account is never a lookalike (account search never returns it).
  if (record.lookalike && !profile.is_private) doc.lookalike_embedding = engineVector(record.lookalike.vector);
  return doc;
}

/** An account's descriptive text fields that also get a client-stemmed companion (`<field>_stemmed`). */
export const ACCOUNT_STEMMED_FIELDS = ['category_label', 'biography', 'publishing_summary'] as const;

/**
 * An account's stemmed companions, as a post's (stemmedCompanions): what the account wrote (its
 * category label and biography) in its first publishing language, else the one detected from its
 * biography; the enrichment's publishing summary in the language detected from it. Names (handle,
 * display name) get none: a name is matched as written.
 */
function accountStemmedCompanions(doc: Doc, languages: readonly string[] | null): Doc {
  const out: Doc = {};
  const biography = typeof doc.biography === 'string' ? doc.biography : '';
  let ownLanguage: string | undefined;
  for (const field of ACCOUNT_STEMMED_FIELDS) {
    const text = doc[field];
    if (typeof text !== 'string' || text.length === 0) continue;
    const language =
      field === 'publishing_summary'
        ? documentLanguage(null, text)
        : (ownLanguage ??= documentLanguage(languages?.[0] ?? null, biography.length > 0 ? biography : text));
    out[`${field}_stemmed`] = analyzeIn(text, language);
  }
  return out;
}

/** The account metrics that have a value (none for a private account): filterable and sortable. */
function metricFields(metrics: AccountMetrics | null | undefined, isPrivate: boolean): Doc {
  const out: Doc = {};
  if (!metrics || isPrivate) return out;
  for (const field of ACCOUNT_METRIC_FIELDS) if (metrics[field] !== null) out[field] = metrics[field];
  return out;
}
