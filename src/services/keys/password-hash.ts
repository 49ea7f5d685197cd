import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing with scrypt (node:crypto), stored as `scrypt$N$r$p$salt$hash` (base64url), so
 * the cost can be raised later while old hashes keep verifying with their own parameters.
 *
 * N = 2^15, r = 8, p = 1 is OWASP's recommended minimum for scrypt (~60–100 ms here): slow enough
 * to make an offline guess expensive, cheap enough for sign-in. It needs 32 MiB per hash, above
 * Node's default `maxmem` of 32 MiB, so the limit is raised explicitly.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

function maxmem(N: number, r: number): number {
  return 128 * N * r * 2;
}

/** Hashes `password` with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, { ...COST, maxmem: maxmem(COST.N, COST.r) });
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * True when `password` matches `stored`. A malformed stored value fails closed. Comparison is in
 * constant time.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  // Six parts were checked above: the defaults (refused below) only satisfy the types.
  const [N = 0, r = 0, p = 0] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 2 ** 20) return false;
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const expected = Buffer.from(parts[5] ?? '', 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const actual = await scrypt(password, salt, { N, r, p, maxmem: maxmem(N, r) });
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of a random password, verified against when the account does not exist, so that an
 * unknown email costs the same time as a wrong password (no enumeration by timing).
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}
let dummy: Promise<string> | undefined;
