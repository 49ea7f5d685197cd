import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../../internal/errors.ts';

/**
 * Redis storage of account holders and invitations. Layout, under `prefix`:
 * - `{prefix}:holder:{email}`: hash `email`, `created_at`, and `password_hash` once the holder has
 *   signed up (a holder created by `keys create --owner` has none until it accepts an invitation);
 * - `{prefix}:invitation:{sha256(code)}`: hash `created_at` and, when bound to one person, `email`;
 *   it expires with the invitation. Only the code's hash is stored.
 */

/** A stored holder. */
export interface HolderRecord {
  email: string;
  created_at: string;
  /** `null` until the holder has chosen a password (signed up). */
  password_hash: string | null;
}

/** Why a sign-up wrote nothing. */
export type SignUpRefusal = 'exists' | 'invitation';

/** What {@link HolderStore.signUp} writes. */
export interface SignUpRecord {
  email: string;
  passwordHash: string;
  createdAt: string;
  /** The invitation code presented, if any (hashed before it reaches Redis). */
  invitation: string | null;
  /** Whether an invitation is needed even for a new email (sign-up by invitation only). */
  invitationRequired: boolean;
}

/** Storage operations on holders and invitations. */
export interface HolderStore {
  get(email: string): Promise<HolderRecord | null>;
  /** Creates a holder without a password unless one exists; `true` when created. */
  ensure(email: string, createdAt: string): Promise<boolean>;
  /**
   * Signs a holder up in one atomic step: checks and consumes the invitation and sets the
   * password. A holder created without a password (by the CLI) can be claimed only with an
   * invitation bound to its email, so an open sign-up cannot take over someone's keys.
   */
  signUp(record: SignUpRecord): Promise<{ ok: true } | { ok: false; reason: SignUpRefusal }>;
  /** Stores an invitation valid for `ttlSeconds`. */
  invite(code: string, options: { email: string | null; createdAt: string; ttlSeconds: number }): Promise<void>;
}

// KEYS: holder, invitation ('' when none); ARGV: email, password hash, created_at, invitation required (1/0).
const SIGN_UP_SCRIPT = `
local existing = redis.call('HGET', KEYS[1], 'password_hash')
if existing then return 'exists' end
local claimed = redis.call('EXISTS', KEYS[1]) == 1
local needed = claimed or ARGV[4] == '1'
local valid = false
if KEYS[2] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then
  local bound = redis.call('HGET', KEYS[2], 'email')
  if claimed then valid = bound == ARGV[1] else valid = (not bound) or bound == ARGV[1] end
end
if needed and not valid then return 'invitation' end
if valid then redis.call('DEL', KEYS[2]) end
redis.call('HSETNX', KEYS[1], 'created_at', ARGV[3])
redis.call('HSET', KEYS[1], 'email', ARGV[1], 'password_hash', ARGV[2])
return 'ok'
`;

/** The stored form of an invitation code. */
function codeHash(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

function unavailable(cause: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError('the account store is unreachable', { cause });
}

/** Creates the Redis-backed {@link HolderStore}. */
export function createHolderStore({ redis, prefix }: { redis: Redis; prefix: string }): HolderStore {
  const holderKey = (email: string) => `${prefix}:holder:${email}`;
  const invitationKey = (code: string) => `${prefix}:invitation:${codeHash(code)}`;
  const guarded = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      throw unavailable(error);
    }
  };

  return {
    get: (email) =>
      guarded(async () => {
        const hash = await redis.hgetall(holderKey(email));
        if (!hash.email || !hash.created_at) return null;
        return { email: hash.email, created_at: hash.created_at, password_hash: hash.password_hash ?? null };
      }),
    ensure: (email, createdAt) =>
      guarded(async () => {
        const results = await redis
          .multi()
          .hsetnx(holderKey(email), 'created_at', createdAt)
          .hset(holderKey(email), 'email', email)
          .exec();
        return results?.[0]?.[1] === 1;
      }),
    signUp: (record) =>
      guarded(async () => {
        const invitation = record.invitation ? invitationKey(record.invitation) : '';
        const outcome = await redis.eval(
          SIGN_UP_SCRIPT,
          2,
          holderKey(record.email),
          invitation,
          record.email,
          record.passwordHash,
          record.createdAt,
          record.invitationRequired ? '1' : '0',
        );
        return outcome === 'ok'
          ? { ok: true as const }
          : { ok: false as const, reason: outcome === 'exists' ? ('exists' as const) : ('invitation' as const) };
      }),
    invite: (code, { email, createdAt, ttlSeconds }) =>
      guarded(async () => {
        await redis
          .multi()
          .hset(invitationKey(code), { created_at: createdAt, ...(email ? { email } : {}) })
          .expire(invitationKey(code), ttlSeconds)
          .exec();
      }),
  };
}
