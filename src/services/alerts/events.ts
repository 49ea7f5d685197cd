import { createHash } from 'node:crypto';
import { base32, CROCKFORD_LOWER } from '../../internal/base32.ts';

/** The event id of a (saved search, post) pair: the same on every attempt, so receivers can deduplicate. */
export function eventIdOf(savedSearchId: string, postId: string): string {
  const digest = createHash('sha256').update(`${savedSearchId}\n${postId}`).digest();
  return `evt_${base32(digest.subarray(0, 16), CROCKFORD_LOWER)}`;
}

/**
 * The body of a `post.matched` event, as the webhook sends it and the pull endpoint shows it:
 * `{id, type, created_at, data: {saved_search_id, post}}`, with `summary` the post summary's JSON
 * (the bytes JSON.stringify gives the whole object).
 */
export function matchedEventBody(savedSearchId: string, postId: string, createdAt: string, summary: string): string {
  return `{"id":${JSON.stringify(eventIdOf(savedSearchId, postId))},"type":"post.matched","created_at":${JSON.stringify(createdAt)},"data":{"saved_search_id":${JSON.stringify(savedSearchId)},"post":${summary}}}`;
}
