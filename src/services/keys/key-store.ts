import type { Redis } from 'ioredis';
import { createRedisGuard } from '../../internal/redis-guard.ts';
import { HASH, repliesOf } from '../../internal/redis-replies.ts';

/**
 * Redis storage of API keys. It holds secret *hashes* only; a clear key never reaches it.
 *
 * Layout, under `prefix`:
 * - `{prefix}:key:{id}`: hash with fields `id`, `secret_hash`, `owner`, `name`, `scopes` (comma
 *   list), `created_at` (ISO 8601), `revoked_at` (ISO 8601, absent while the key is active) and
 *   `limit_search`, `limit_read` (requests per minute; absent: the service's defaults);
 * - `{prefix}:keys`: sorted set of every key id, scored by creation time (epoch ms);
 * - `{prefix}:owner:{owner}:keys`: the same, per owner;
 * - Pub/Sub channel `{prefix}:revoked`: each revoked or changed key id, published by the change
 *   itself, so that caches drop it (key-cache.ts).
 */

/** Scopes a key can carry. */
export const KEY_SCOPES = ['search', 'ingest'] as const;
/** One scope. */
export type KeyScope = (typeof KEY_SCOPES)[number];

/** A key's own rate limits, requests per minute; `null`: the service's default applies. */
export interface KeyLimits {
  search: number | null;
  read: number | null;
}

/** A stored key, as the store sees it (field names mirror the Redis hash). */
export interface KeyRecord {
  id: string;
  secret_hash: string;
  owner: string;
  name: string;
  scopes: KeyScope[];
  created_at: string;
  revoked_at: string | null;
  limits: KeyLimits;
}

/** Storage operations on key records. */
export interface KeyStore {
  /** Writes a new record and its index entries atomically. */
  insert(record: KeyRecord): Promise<void>;
  /** The record of `id`, or `null` when unknown. */
  get(id: string): Promise<KeyRecord | null>;
  /** Records in creation order, optionally of one owner only. */
  list(filter?: { owner?: string }): Promise<KeyRecord[]>;
  /**
   * Marks `id` revoked at `revokedAt`. Idempotent: a second call keeps the first timestamp.
   * Returns `false` when the key is unknown.
   */
  revoke(id: string, revokedAt?: string): Promise<boolean>;
  /**
   * Sets the limits given (`null` clears one back to the default; absent: unchanged) and tells
   * every node to re-read the key. Returns `false` when the key is unknown.
   */
  setLimits(id: string, limits: Partial<KeyLimits>): Promise<boolean>;
}

/** Dependencies of {@link createKeyStore}. */
export interface KeyStoreDeps {
  redis: Redis;
  /** Namespace of every Redis key this store touches. */
  prefix: string;
  /**
   * Upper bound on one store operation. A Redis that accepts connections but never answers would
   * otherwise hang the request; the caller's client may have no command timeout of its own.
   */
  timeoutMs?: number;
}

// Only set-if-still-active: keeps revocation idempotent without a read-then-write race, and does
// not create a stray hash if the key vanished meanwhile.
// Publishes the id on the revocation channel (ARGV[2]) in the same step, so that processes
// caching active keys (key-cache.ts) drop it at once.
const REVOKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSETNX', KEYS[1], 'revoked_at', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`;

// Sets (ARGV[3..]: field, value pairs) and deletes (value '') limit fields of an existing key, then
// publishes its id so that caches re-read it.
const SET_LIMITS_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 3, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[1], ARGV[i]) else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`;

function parseLimit(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function parseScopes(value: string | undefined): KeyScope[] {
  if (!value) return [];
  // Unknown scopes (written by a newer version) are ignored rather than trusted.
  return value.split(',').filter((s): s is KeyScope => KEY_SCOPES.some((scope) => scope === s));
}

function toRecord(hash: Record<string, string>): KeyRecord | null {
  const { id, secret_hash, owner, name, created_at } = hash;
  if (!id || !secret_hash || owner === undefined || name === undefined || !created_at) return null;
  return {
    id,
    secret_hash,
    owner,
    name,
    scopes: parseScopes(hash.scopes),
    created_at,
    revoked_at: hash.revoked_at ? hash.revoked_at : null,
    limits: { search: parseLimit(hash.limit_search), read: parseLimit(hash.limit_read) },
  };
}

/** The Pub/Sub channel on which every revoked key id is published (see key-cache.ts). */
export function revocationChannel(prefix: string): string {
  return `${prefix}:revoked`;
}

/** Creates the Redis-backed {@link KeyStore}. */
export function createKeyStore({ redis, prefix, timeoutMs = 2_000 }: KeyStoreDeps): KeyStore {
  const keyOf = (id: string): string => `${prefix}:key:${id}`;
  const allIndex = `${prefix}:keys`;
  const ownerIndex = (owner: string): string => `${prefix}:owner:${owner}:keys`;

  const guard = createRedisGuard({ unreachable: 'the key store is unreachable', timeoutMs });
  const { run: guarded, unwrap } = guard;

  return {
    insert(record) {
      return guarded(async () => {
        const score = Date.parse(record.created_at);
        const results = await redis
          .multi()
          .hset(keyOf(record.id), {
            id: record.id,
            secret_hash: record.secret_hash,
            owner: record.owner,
            name: record.name,
            scopes: record.scopes.join(','),
            created_at: record.created_at,
            ...(record.revoked_at ? { revoked_at: record.revoked_at } : {}),
            ...(record.limits.search !== null ? { limit_search: String(record.limits.search) } : {}),
            ...(record.limits.read !== null ? { limit_read: String(record.limits.read) } : {}),
          })
          .zadd(allIndex, score, record.id)
          .zadd(ownerIndex(record.owner), score, record.id)
          .exec();
        unwrap(results);
      });
    },

    get(id) {
      return guarded(async () => toRecord(await redis.hgetall(keyOf(id))));
    },

    list(filter = {}) {
      return guarded(async () => {
        const index = filter.owner === undefined ? allIndex : ownerIndex(filter.owner);
        const ids = await redis.zrange(index, 0, -1);
        if (ids.length === 0) return [];
        const pipeline = redis.pipeline();
        for (const id of ids) pipeline.hgetall(keyOf(id));
        const hashes = repliesOf(unwrap(await pipeline.exec()), HASH);
        return hashes.map(toRecord).filter((r): r is KeyRecord => r !== null);
      });
    },

    revoke(id, revokedAt = new Date().toISOString()) {
      return guarded(async () => {
        const changed = await redis.eval(REVOKE_SCRIPT, 1, keyOf(id), revokedAt, revocationChannel(prefix), id);
        return changed === 1;
      });
    },

    setLimits(id, limits) {
      return guarded(async () => {
        const fields: string[] = [];
        for (const [name, value] of Object.entries(limits)) {
          if (value !== undefined) fields.push(`limit_${name}`, value === null ? '' : String(value));
        }
        const changed = await redis.eval(SET_LIMITS_SCRIPT, 1, keyOf(id), revocationChannel(prefix), id, ...fields);
        return changed === 1;
      });
    },
  };
}
