import { createHash, randomBytes } from 'node:crypto';
import { base32, RFC4648_LOWER } from '../../internal/base32.ts';

/**
 * API key format (planned, spec 5 rule 5): `ssk_<id>_<secret>`.
 *
 * - `<id>`: 16 characters of lowercase RFC 4648 base32 (`a-z`, `2-7`) over 10 random bytes. It is
 *   not secret: it names the key in listings, logs and `keys revoke`, always shown as `key_<id>`.
 * - `<secret>`: 43 characters of base64url over 32 random bytes (256 bits). Only its SHA-256 is
 *   ever stored.
 *
 * The `ssk_` prefix makes leaked keys recognisable to secret scanners (spec 5 rule 6).
 */

/** Prefix of every API key. */
export const KEY_PREFIX = 'ssk_';
/** Prefix of every key id as shown to people and accepted by `keys revoke`. */
const KEY_ID_PREFIX = 'key_';
/** Length of the random id part of a key. */
const KEY_ID_BODY_LENGTH = 16;
/** Length of the secret part of a key: base64url of 32 bytes, unpadded. */
const KEY_SECRET_LENGTH = 43;
/** Total length of a well-formed key. */
export const KEY_LENGTH = KEY_PREFIX.length + KEY_ID_BODY_LENGTH + 1 + KEY_SECRET_LENGTH;

const ID_BYTES = 10; // 80 bits → exactly 16 base32 characters, no padding
const SECRET_BYTES = 32;

const KEY_PATTERN = new RegExp(
  `^${KEY_PREFIX}([a-z2-7]{${KEY_ID_BODY_LENGTH}})_([A-Za-z0-9_-]{${KEY_SECRET_LENGTH}})$`,
);
const KEY_ID_PATTERN = new RegExp(`^${KEY_ID_PREFIX}[a-z2-7]{${KEY_ID_BODY_LENGTH}}$`);

/** A freshly minted key: the clear `key` exists only in this value and must be shown once. */
export interface GeneratedKey {
  /** Public key id, `key_<16 chars>`. */
  id: string;
  /** The full secret key, `ssk_<16 chars>_<43 chars>`. */
  key: string;
  /** SHA-256 hex of the secret part: the only form that is stored. */
  secretHash: string;
}

/** The two parts of a well-formed key. */
export interface ParsedKey {
  /** Public key id, `key_<16 chars>`. */
  id: string;
  /** The secret part, in clear. */
  secret: string;
}

/**
 * Hashes the secret part of a key for storage and comparison.
 *
 * A fast unsalted SHA-256 is deliberate: slow password hashes (bcrypt, scrypt, argon2) exist to
 * make guessing low-entropy human passwords expensive. The secret is 256 random bits, so brute
 * force over the hash is already infeasible and a slow hash would only add latency to every
 * request. Salting adds nothing either, since no two secrets collide.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Mints a new key from `crypto.randomBytes`. */
export function generateKey(): GeneratedKey {
  const idBody = base32(randomBytes(ID_BYTES), RFC4648_LOWER);
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return {
    id: KEY_ID_PREFIX + idBody,
    key: `${KEY_PREFIX}${idBody}_${secret}`,
    secretHash: hashSecret(secret),
  };
}

/** Splits a key into its public id and its secret; `null` when `raw` is not exactly a key. */
export function parseKey(raw: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(raw);
  if (!match) return null;
  const [, idBody, secret] = match;
  if (idBody === undefined || secret === undefined) return null;
  return { id: KEY_ID_PREFIX + idBody, secret };
}

/** True when `value` has the shape of a public key id (`key_<16 chars>`). */
export function isKeyId(value: string): boolean {
  return KEY_ID_PATTERN.test(value);
}
