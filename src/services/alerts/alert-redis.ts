import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { InternalError } from '../../internal/errors.ts';
import { isNoScript, type LuaScript } from '../../internal/lua-script.ts';
import { createRedisGuard, type RedisGuard } from '../../internal/redis-guard.ts';
import { HASH, NUMBER, replyOf, repliesOf } from '../../internal/redis-replies.ts';

/**
 * What the alert stores share: one Redis, their keys under `{prefix}:alert-store` (not
 * `{prefix}:alerts`: that is the `alerts` queue's, BullMQ's keys), commands bounded in time. Each
 * store says what it keeps; every key family and its bound: docs/capacity.md, "Alerts in Redis".
 */
export interface AlertRedis {
  readonly redis: Redis;
  /** `{prefix}:alert-store:` and `parts` joined by `:`. */
  key(this: void, ...parts: string[]): string;
  /** Runs `operation` bounded by the store's timeout; driver failures become domain errors. */
  run<T>(this: void, operation: () => Promise<T>): Promise<T>;
  /** The values of a MULTI or pipeline result; throws its first failure. */
  unwrap: RedisGuard['unwrap'];
  /** The hashes at `keys`, in order, read in pipelines of {@link PIPELINE_SIZE} each bounded on its own. */
  hashes(this: void, keys: readonly string[]): Promise<Array<Record<string, string>>>;
  /** Calls `script` by its SHA, loading it first when Redis does not hold it. */
  evalsha(
    this: void,
    script: LuaScript,
    keys: readonly string[],
    args: ReadonlyArray<string | number>,
  ): Promise<unknown>;
}

/** Commands per pipeline of the bulk operations. */
export const PIPELINE_SIZE = 1000;

/** The shared part of the alert stores. `timeoutMs`: the request path's 2 s by default. */
export function openAlertRedis(deps: { redis: Redis; prefix: string; timeoutMs?: number }): AlertRedis {
  const { redis } = deps;
  const base = `${deps.prefix}:alert-store`;
  const guard = createRedisGuard({ unreachable: 'the alert store is unreachable', ...deps });

  return {
    redis,
    key: (...parts) => `${base}:${parts.join(':')}`,
    run: guard.run,
    unwrap: guard.unwrap,
    async hashes(keys) {
      const out: Array<Record<string, string>> = [];
      for (let i = 0; i < keys.length; i += PIPELINE_SIZE) {
        const pipeline = redis.pipeline();
        for (const key of keys.slice(i, i + PIPELINE_SIZE)) pipeline.hgetall(key);
        out.push(...repliesOf(await guard.run(async () => guard.unwrap(await pipeline.exec())), HASH));
      }
      return out;
    },
    evalsha: (script, keys, args) =>
      guard.run(async () => {
        try {
          // One array argument: ioredis flattens it, where spreading thousands of them overflows a call.
          return await redis.call('evalsha', [script.sha, keys.length, ...keys, ...args]);
        } catch (error) {
          if (!isNoScript(error)) throw error;
          await redis.script('LOAD', script.lua);
          return redis.call('evalsha', [script.sha, keys.length, ...keys, ...args]);
        }
      }),
  };
}

/** A record's Redis hash and back. */
export interface HashCodec<T> {
  encode(this: void, record: Partial<T>): { set: Record<string, string>; cleared: string[] };
  decode(this: void, hash: Record<string, string>): T | null;
}

/**
 * A record's Redis hash and back: strings as they are, `null` as an empty field (so dropped), other
 * values as JSON; read back through `schema`, whose nullable fields come back null when absent. A
 * hash that does not fit the schema is a bug (no other writer exists), not a record to guess at.
 */
export function hashCodec<S extends z.ZodObject>(
  schema: S,
  json: ReadonlyArray<keyof z.infer<S> & string> = [],
): HashCodec<z.infer<S>> {
  const jsonFields = new Set<string>(json);
  return {
    encode: (record) => {
      const set: Record<string, string> = {};
      const cleared: string[] = [];
      for (const [field, value] of Object.entries(record)) {
        if (value === undefined) continue;
        if (value === null) cleared.push(field);
        else set[field] = jsonFields.has(field) || typeof value !== 'string' ? JSON.stringify(value) : value;
      }
      return { set, cleared };
    },
    decode: (hash) => {
      if (!hash['id']) return null;
      const raw: Record<string, unknown> = {};
      const shapes: Record<string, z.ZodType> = schema.shape;
      for (const [field, shape] of Object.entries(shapes)) {
        const value = hash[field];
        if (value === undefined || value === '') raw[field] = shape.safeParse(undefined).success ? undefined : null;
        else raw[field] = jsonFields.has(field) ? parseJson(value) : value;
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success) throw new InternalError(`an alert record does not read: ${parsed.error.message}`);
      return parsed.data;
    },
  };
}

/**
 * Inserts a record (KEYS: its hash, its owner's set, then the set of every record and its version,
 * or none; ARGV: cap, score, id, fields…) unless its owner has `cap` already: the cap is checked
 * and the record written in one step, so concurrent creates cannot pass it together.
 */
const INSERT = `
if redis.call('zcard', KEYS[2]) >= tonumber(ARGV[1]) then return 0 end
redis.call('hset', KEYS[1], unpack(ARGV, 4))
redis.call('zadd', KEYS[2], ARGV[2], ARGV[3])
if KEYS[3] then
  redis.call('zadd', KEYS[3], ARGV[2], ARGV[3])
  redis.call('incr', KEYS[4])
end
return 1`;

/** Sets and clears fields of a hash that still exists (ARGV: how many set, field and value pairs, fields to clear). */
const UPDATE = `
if redis.call('exists', KEYS[1]) == 0 then return 0 end
local n = tonumber(ARGV[1])
if n > 0 then redis.call('hset', KEYS[1], unpack(ARGV, 2, 1 + 2 * n)) end
if #ARGV > 1 + 2 * n then redis.call('hdel', KEYS[1], unpack(ARGV, 2 + 2 * n)) end
return 1`;

/**
 * Records of one kind (`endpoint`, `search`), each a hash `{one}:{id}` owned by a holder and
 * listed in `owner:{owner}:{many}` by creation; with `every`, also in `{many}` with a version
 * every change of that set increments (what the worker's view of saved searches is keyed by).
 */
export function ownedRecords<T extends { id: string; owner: string; created_at: string }>(
  store: AlertRedis,
  kind: { one: string; many: string },
  codec: HashCodec<T>,
  options: { every?: boolean } = {},
) {
  const { redis, key } = store;
  const keyOf = (id: string) => key(kind.one, id);
  const ownedBy = (owner: string) => key('owner', owner, kind.many);
  const every = options.every ? [key(kind.many), key(kind.many, 'version')] : [];
  async function read(ids: readonly string[]): Promise<T[]> {
    return (await store.hashes(ids.map(keyOf))).map(codec.decode).filter((r) => r !== null);
  }

  return {
    every,
    /** Stores a new record unless its owner has `cap` already; false at the cap. */
    insert: (record: T, cap: number) =>
      store.run(async () => {
        const fields = Object.entries(codec.encode(record).set).flat();
        const keys = [keyOf(record.id), ownedBy(record.owner), ...every];
        const args = [cap, Date.parse(record.created_at), record.id, ...fields];
        return (await redis.eval(INSERT, keys.length, ...keys, ...args)) === 1;
      }),
    /** The record `id`, or null. */
    get: (id: string) => store.run(async () => codec.decode(await redis.hgetall(keyOf(id)))),
    /** The records of `owner`, oldest first. */
    listOf: async (owner: string) => read(await store.run(() => redis.zrange(ownedBy(owner), 0, -1))),
    /** Every record, oldest first (with `every`). */
    all: async () => read(await store.run(() => redis.zrange(every[0]!, 0, -1))),
    /** How many records `owner` has. */
    countOf: (owner: string) => store.run(() => redis.zcard(ownedBy(owner))),
    /** Sets fields of an existing record (null clears one); false when it is gone. */
    update: (id: string, fields: Partial<Omit<T, 'id' | 'owner'>>) =>
      store.run(async () => {
        // Fields of T without its key fields: a partial T, which the codec encodes field by field.
        const { set, cleared } = codec.encode(fields as Partial<T>);
        const pairs = Object.entries(set).flat();
        return (await redis.eval(UPDATE, 1, keyOf(id), pairs.length / 2, ...pairs, ...cleared)) === 1;
      }),
    /** Deletes a record and `also` (what is kept of it elsewhere); false when it was gone. */
    delete: (record: { id: string; owner: string }, also: readonly string[] = []) =>
      store.run(async () => {
        const tx = redis
          .multi()
          .del(keyOf(record.id), ...also)
          .zrem(ownedBy(record.owner), record.id);
        if (every.length > 0) tx.zrem(every[0]!, record.id).incr(every[1]!);
        return replyOf(store.unwrap(await tx.exec())[0], NUMBER) > 0;
      }),
  };
}

/** `text` parsed as JSON, typed as what it is until a schema reads it. */
function parseJson(text: string): unknown {
  return JSON.parse(text);
}
