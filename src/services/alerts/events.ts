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

/** The event types of a volume rule. */
export type VolumeEventType = 'volume.exceeded' | 'volume.spiked';

/** The event id of a volume event: one per (saved search, type, window), the same however often it is tried. */
export function volumeEventIdOf(savedSearchId: string, type: VolumeEventType, windowStart: number): string {
  const digest = createHash('sha256').update(`${savedSearchId}\n${type}\n${windowStart}`).digest();
  return `evt_${base32(digest.subarray(0, 16), CROCKFORD_LOWER)}`;
}

/**
 * The body of a volume event up to its count: `{id, type, created_at, data: {saved_search_id,
 * window: {start, end}, count: ` (the store writes the count it holds when the window crosses,
 * then the rest: {@link exceededTail}, {@link spikedTail}).
 */
export function volumeEventHead(
  savedSearchId: string,
  type: VolumeEventType,
  window: { start: number; startText: string; endText: string },
  createdAt: string,
): string {
  const id = volumeEventIdOf(savedSearchId, type, window.start);
  const data = `{"saved_search_id":${JSON.stringify(savedSearchId)},"window":{"start":${JSON.stringify(window.startText)},"end":${JSON.stringify(window.endText)}},"count":`;
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"created_at":${JSON.stringify(createdAt)},"data":${data}`;
}

/** The rest of a `volume.exceeded` body after its count. */
export const exceededTail = (above: number) => `,"above":${above}}}`;

/** The rest of a `volume.spiked` body after its count: the factor and the baseline it was judged on. */
export const spikedTail = (factor: number, baseline: { median: number; counts: readonly number[] }) =>
  `,"factor":${factor},"baseline":${JSON.stringify({ intervals: baseline.counts.length, median: baseline.median, counts: baseline.counts })}}}`;
