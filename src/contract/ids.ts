import { hash } from 'node:crypto';
import { base32, CROCKFORD_LOWER } from '../internal/base32.ts';

/** The longest ID, handle or shortcode a path accepts, in characters (UTF-16 code units). */
export const PATH_ID_MAX_LENGTH = 256;

/** Resource families of spec 2.1. */
export type IdFamily = 'post' | 'account' | 'media' | 'audio';

const PREFIX: Record<IdFamily, string> = {
  post: 'social_post_',
  account: 'social_account_',
  media: 'social_media_',
  audio: 'social_audio_',
};

const ALPHABET = CROCKFORD_LOWER;
const BODY_LENGTH = 26; // 128 bits → 26 base32 characters

// Rendering a page mints the same few IDs (authors, audios) many times over, at a hash each:
// recent results are memoized, in two generations so memory stays bounded (an entry holds ~0.55 KiB:
// two generations of 5,000 are ~5.5 MiB; of 50,000 they took 56 MiB). A miss costs one hash (~1 µs).
const MEMO_GENERATION = 5_000;
let minted = new Map<string, string>();
let previouslyMinted = new Map<string, string>();

/**
 * Mints the durable service ID of a platform identifier.
 *
 * The body is the first 128 bits of SHA-256 over `family:platformId`, in lowercase Crockford
 * base32. It is deterministic (the same platform ID always yields the same service ID, across
 * nodes and rebuilds), needs no secret (rotating SIGNING_SECRET never changes an ID) and does not
 * expose the platform ID.
 */
export function mintId(family: IdFamily, platformId: string): string {
  const key = `${family}:${platformId}`;
  const known = minted.get(key) ?? previouslyMinted.get(key);
  if (known !== undefined) return known;
  // One-shot: no Hash object per ID (the intake mints one per observation, most of them new).
  const digest = hash('sha256', key, 'buffer');
  const id = PREFIX[family] + base32(digest.subarray(0, 16), CROCKFORD_LOWER).slice(0, BODY_LENGTH);
  if (minted.size >= MEMO_GENERATION) {
    previouslyMinted = minted;
    minted = new Map();
  }
  minted.set(key, id);
  return id;
}

/** True when `value` has the exact shape of a service ID of `family`. */
export function isServiceId(family: IdFamily, value: string): boolean {
  const prefix = PREFIX[family];
  if (!value.startsWith(prefix)) return false;
  const body = value.slice(prefix.length);
  return body.length === BODY_LENGTH && [...body].every((c) => ALPHABET.includes(c));
}

/** True when `value` starts with the prefix of `family`, well-formed or not. */
export function hasIdPrefix(family: IdFamily, value: string): boolean {
  return value.startsWith(PREFIX[family]);
}

const HANDLE = /^@?[^\s@/?#]{1,100}$/;
const SHORTCODE = /^[A-Za-z0-9_-]{1,100}$/;

/** How a request names a resource: by service ID, or by an alias to look up; null when it can name nothing. */
export type ResourceRef = { kind: 'id'; id: string } | { kind: 'alias'; alias: string } | null;

/** An account reference (spec 4.4): an account ID, or a handle with or without `@` (returned without it). */
export function accountRef(value: string): ResourceRef {
  if (hasIdPrefix('account', value)) return isServiceId('account', value) ? { kind: 'id', id: value } : null;
  return HANDLE.test(value) ? { kind: 'alias', alias: value.replace(/^@/, '') } : null;
}

/** A post reference (spec 4.3): a post ID, or a platform shortcode. */
export function postRef(value: string): ResourceRef {
  if (hasIdPrefix('post', value)) return isServiceId('post', value) ? { kind: 'id', id: value } : null;
  return SHORTCODE.test(value) ? { kind: 'alias', alias: value } : null;
}
