/**
 * A BEIR collection as intake observations (operations contract §3): one `post` per document,
 * published by a small set of synthetic `account`s. Everything is derived from the collection
 * name and the document ids alone — no clock, no randomness, no dependence on corpus order — so a
 * rerun sends byte-identical observations (the intake is idempotent) and results map back to BEIR
 * ids through the service's deterministic ID minting.
 */
import { createHash } from 'node:crypto';
import { mintId } from '../../src/contract/ids.ts';
import type { BeirDoc } from './beir.ts';

/** How many synthetic authors share the corpus unless told otherwise. */
export const DEFAULT_AUTHORS = 50;

// Fixed instants: accounts are observed before their posts, so every post is servable from its
// first write, and no post is dated after its observation.
const ACCOUNT_OBSERVED_AT = '2026-01-01T00:00:00Z';
const POST_OBSERVED_AT = '2026-01-02T00:00:00Z';
const POSTED_FROM_MS = Date.parse('2025-01-01T00:00:00Z');
const POSTED_SPREAD_MINUTES = 365 * 24 * 60;

/** What the builders need to know about the collection. */
export interface BeirObservationOptions {
  /** Collection name (e.g. `scifact`): namespaces every platform id, so collections never collide. */
  readonly collection: string;
  /** Number of synthetic authors (default {@link DEFAULT_AUTHORS}). */
  readonly authors?: number;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The platform id a BEIR document's post is observed under. */
export function postPlatformId(collection: string, docId: string): string {
  return `beir:${collection}:${docId}`;
}

/** The service ID (`social_post_…`) the API returns for a BEIR document's post. */
export function postServiceId(collection: string, docId: string): string {
  return mintId('post', postPlatformId(collection, docId));
}

/**
 * An 11-character URL-safe shortcode from the document id. Hash-derived rather than the raw id so
 * it stays short and valid whatever a collection's ids look like; 66 bits make a collision within
 * one corpus practically impossible, and the harness cross-checks it against each result anyway.
 */
export function postShortcode(collection: string, docId: string): string {
  return digest(postPlatformId(collection, docId)).toString('base64url').slice(0, 11);
}

function authorPlatformId(collection: string, index: number): string {
  return `beir:${collection}:author:${index}`;
}

/** Which author publishes a document: a hash of its id, so the assignment ignores corpus order. */
export function authorIndexOf(docId: string, authors: number): number {
  return digest(docId).readUInt32BE(0) % authors;
}

/**
 * One active `account` observation per synthetic author. Free-text profile fields are empty on
 * purpose: they are not post search fields today, but if they ever became so (or fed the post
 * embedding text), shared boilerplate would add the same words to every document.
 */
export function authorObservations(options: BeirObservationOptions): Array<Record<string, unknown>> {
  const count = options.authors ?? DEFAULT_AUTHORS;
  return Array.from({ length: count }, (_, a) => {
    const handle = `beir_${options.collection.replace(/[^A-Za-z0-9_]/g, '_')}_${String(a).padStart(3, '0')}`;
    return {
      kind: 'account',
      platform_id: authorPlatformId(options.collection, a),
      observed_at: ACCOUNT_OBSERVED_AT,
      status: 'active',
      handle,
      display_name: `Author ${a}`,
      web_url: `https://social.example/${handle}`,
      avatar_source_url: null,
      biography: '',
      bio_links: [],
      account_type: 'creator',
      category_label: '',
      declared_locations: [],
      is_verified: false,
      // Public: a private author's post-derived facts are withheld, which is not under test here.
      is_private: false,
      followers_count: 1000 + a,
      following_count: 100,
      posts_count: 100,
    };
  });
}

/** The caption of a document's post: title, blank line, text (just the text when untitled). */
export function captionOf(doc: BeirDoc): string {
  return doc.title.trim() === '' ? doc.text : `${doc.title}\n\n${doc.text}`;
}

/**
 * The `post` observation of one document: an image post with every field the contract requires,
 * no engagement, no audio and no enrichment, so BM25 and the embedding see the caption alone.
 */
export function postObservation(doc: BeirDoc, options: BeirObservationOptions): Record<string, unknown> {
  const { collection } = options;
  const platformId = postPlatformId(collection, doc.id);
  const shortcode = postShortcode(collection, doc.id);
  const minutes = digest(`posted:${doc.id}`).readUInt32BE(0) % POSTED_SPREAD_MINUTES;
  return {
    kind: 'post',
    platform_id: platformId,
    observed_at: POST_OBSERVED_AT,
    status: 'available',
    shortcode,
    web_url: `https://social.example/p/${shortcode}`,
    author_platform_id: authorPlatformId(collection, authorIndexOf(doc.id, options.authors ?? DEFAULT_AUTHORS)),
    coauthor_platform_ids: [],
    posted_at: new Date(POSTED_FROM_MS + minutes * 60_000).toISOString(),
    format: 'image',
    caption: captionOf(doc),
    caption_mentions: [],
    comments_enabled: true,
    views: null,
    likes: 0,
    comments: 0,
    audio: null,
    media: [
      {
        platform_id: `${platformId}:media:0`,
        type: 'image',
        width: 1080,
        height: 1080,
        source_url: `https://cdn.social.example/media/${shortcode}.jpg`,
      },
    ],
  };
}
