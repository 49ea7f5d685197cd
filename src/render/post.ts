import { mintId } from '../contract/ids.ts';
import type { Audio, AuthorSummary, FullPost, MediaItem, PostSummary } from '../contract/api.ts';
import type { PostEnrichmentField, PostEnrichmentValues } from '../contract/observations.ts';
import type { MediaUrlSigner } from '../media/url-signer.ts';
import { engagementRateByViews } from '../domain/derived.ts';
import { isServablePost } from '../domain/availability.ts';
import { linksOf } from '../domain/links.ts';
import {
  mediaEnrichmentOf,
  type AccountSnapshot,
  type PostRecord,
  type RawPost,
  type SearchedPost,
} from '../domain/records.ts';
import { renderAuthorSummary } from './account.ts';

function summaryOf(
  id: string | null,
  snapshot: AccountSnapshot | undefined,
  signer: MediaUrlSigner,
): AuthorSummary | null {
  if (id === null || !snapshot?.profile) return null;
  return renderAuthorSummary(id, snapshot.profile, signer);
}

function renderAudio(record: SearchedPost, raw: RawPost, signer: MediaUrlSigner): Audio | null {
  const audio = raw.audio;
  if (!audio) return null;
  const accountId = linksOf(record).audioAccount;
  return {
    // An audio without a platform ID is specific to its post.
    id: mintId('audio', audio.platform_id ?? `post:${record.platform_id}`),
    social_id: audio.platform_id,
    type: audio.type,
    title: audio.title,
    attribution: {
      display_name: audio.attribution_display_name,
      account: summaryOf(accountId, accountId ? record.accounts[accountId] : undefined, signer),
    },
    duration_seconds: audio.duration_seconds,
    web_url: audio.web_url,
  };
}

/** An enrichment field as rendered: its value, or null while pending (spec part 3). */
function enrichmentValue<K extends PostEnrichmentField>(
  record: SearchedPost,
  field: K,
): PostEnrichmentValues[K] | null {
  return record.enrichment[field]?.v ?? null;
}

/** Spec 2.4. The caller checks {@link isServablePost} first. */
export function renderPostSummary(record: SearchedPost, signer: MediaUrlSigner): PostSummary {
  if (!isServablePost(record)) throw new Error(`post ${record.id} is not servable`);
  const raw = record.raw.v;
  const links = linksOf(record);
  const author = summaryOf(links.author, record.accounts[links.author!], signer)!;
  const coauthors = links.coauthors
    .map((id) => summaryOf(id, record.accounts[id], signer))
    .filter((s): s is AuthorSummary => s !== null);
  const e = <K extends PostEnrichmentField>(field: K) => enrichmentValue(record, field);
  return {
    id: record.id,
    shortcode: raw.shortcode,
    web_url: raw.web_url,
    posted_at: raw.posted_at,
    observed_at: record.raw.t,
    format: raw.format,
    primary_language: e('primary_language'),
    caption: raw.caption,
    hashtags: raw.hashtags,
    caption_mentions: raw.caption_mentions,
    audio: renderAudio(record, raw, signer),
    content_summary: e('content_summary'),
    topics: e('topics'),
    creative_formats: e('creative_formats'),
    hook: e('hook'),
    key_messages: e('key_messages'),
    proofs: e('proofs'),
    offers: e('offers'),
    calls_to_action: e('calls_to_action'),
    narrative_structure: e('narrative_structure'),
    has_paid_partnership_label: e('has_paid_partnership_label'),
    paid_partners: e('paid_partners'),
    commercial_contexts: e('commercial_contexts'),
    comments_enabled: raw.comments_enabled,
    views: raw.views,
    likes: raw.likes,
    comments: raw.comments,
    engagement_rate_by_views: engagementRateByViews(raw.likes, raw.comments, raw.views),
    view_ratio_to_account_baseline: record.view_ratio_to_account_baseline,
    author,
    coauthors,
  };
}

/** Spec 2.6: the summary plus every media item, in publication order. */
export function renderFullPost(record: PostRecord, signer: MediaUrlSigner): FullPost {
  const summary = renderPostSummary(record, signer);
  const media = record.raw!.v.media.map((item): MediaItem => {
    const id = mintId('media', item.platform_id);
    const enrichment = mediaEnrichmentOf(record, item.platform_id);
    const visibleText = enrichment.visible_text?.v ?? null;
    const visualDescription = enrichment.visual_description?.v ?? null;
    const common = {
      id,
      width: item.width,
      height: item.height,
      media_url: signer.sign('media', id, item.source_url),
    };
    if (item.type === 'image') {
      return {
        ...common,
        type: 'image',
        // Timing is a property of video frames; image items carry text only (spec 2.6).
        visible_text: visibleText?.map(({ text }) => ({ text })) ?? null,
        visual_description: visualDescription,
      };
    }
    return {
      ...common,
      type: 'video',
      duration_seconds: item.duration_seconds ?? null,
      thumbnail_url: item.thumbnail_source_url ? signer.sign('thumbnail', id, item.thumbnail_source_url) : null,
      transcript: enrichment.transcript?.v ?? null,
      visible_text: visibleText,
      visual_description: visualDescription,
    };
  });
  return { ...summary, media };
}
