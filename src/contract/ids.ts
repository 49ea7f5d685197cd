import { createHash } from 'node:crypto';

/** Resource families of spec 2.1. */
export type IdFamily = 'post' | 'account' | 'media' | 'audio';

const PREFIX: Record<IdFamily, string> = {
  post: 'social_post_',
  account: 'social_account_',
  media: 'social_media_',
  audio: 'social_audio_',
};

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase
const BODY_LENGTH = 26; // 128 bits → 26 base32 characters

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Mints the durable service ID of a platform identifier.
 *
 * The body is the first 128 bits of SHA-256 over `family:platformId`, in lowercase Crockford
 * base32. It is deterministic (the same platform ID always yields the same service ID, across
 * nodes and rebuilds), needs no secret (rotating SIGNING_SECRET never changes an ID) and does not
 * expose the platform ID.
 */
export function mintId(family: IdFamily, platformId: string): string {
  const digest = createHash('sha256').update(`${family}:${platformId}`).digest();
  return PREFIX[family] + base32(digest.subarray(0, 16)).slice(0, BODY_LENGTH);
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
