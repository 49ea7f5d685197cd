import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import { isNoScript, luaScript } from '../../internal/lua-script.ts';
import { createRedisGuard } from '../../internal/redis-guard.ts';
import {
  APPEND_EVENTS as APPEND_EVENTS_LUA,
  CLAIM,
  CONFIRM_INTENT,
  INSERT_SEARCH,
  INTEND,
  RECORD_MATCHED,
  SET_IF_EXISTS,
} from './alert-scripts.ts';
import { matchedEventBody } from './events.ts';
import {
  decodeMatched,
  encodeMatched,
  type ClaimedChanges,
  type EventRef,
  type MatchedChange,
  type PendingChange,
} from './pending-entries.ts';

/**
 * Redis storage of webhook endpoints, saved searches, their match bookkeeping and events. Layout,
 * under `{prefix}:alert-store` (not `{prefix}:alerts`: that is the queue's, BullMQ's keys):
 * - `endpoint:{id}`: hash of an endpoint ({@link EndpointRecord}; secrets sealed, secret-box.ts);
 *   `endpoint:{id}:deliveries`: list of the last delivery attempts, newest first (JSON);
 * - `search:{id}`: hash of a saved search ({@link SavedSearchRecord});
 *   `search:{id}:seen`: set of the posts that matched it once (an event, or a match that predates
 *   it): a pair never gives a second event; `search:{id}:events`: stream of its events, each
 *   `post` and `at` (the time of the write that made it match, or of the pass that found it)
 *   referring to `summary:{post}:{at ms}`, the post's summary as of then, stored once however many
 *   searches it matched (entries written before 2026-11-27 carry their whole `body`);
 * - `owner:{owner}:endpoints`, `owner:{owner}:searches`: sorted sets of ids by creation (epoch ms);
 *   `searches`: every saved search, the same way (what a matching pass reads), and
 *   `searches:version`, a counter every change of the set increments (the pass's cache key);
 * - `pending`: hash post id → the first change since the last pass ({@link PendingChange}, JSON),
 *   and `{post id}\0{unique}` → one write's matches worked out at the write ({@link MatchedChange},
 *   JSON; one field per write, so that two writes before a pass both count);
 *   `claimed:{run}`: what a pass took from it (match-pass.ts); `intent:{job}`: the changes an
 *   intake job is about to write, as plain changes, replaced by its matches once written, or
 *   moved into `pending` as they are (so a job that fails between its write and that step records
 *   them when it runs again: pending-changes.ts).
 */

/** A webhook endpoint as stored. */
export interface EndpointRecord {
  id: string;
  owner: string;
  url: string;
  description: string | null;
  status: 'enabled' | 'disabled';
  /** Why it was disabled (null while enabled). */
  disabled_reason: string | null;
  /** The signing secret, sealed. */
  secret: string;
  /** The secret before the last rotation, sealed, and until when it keeps signing (ISO 8601). */
  previous_secret: string | null;
  previous_secret_until: string | null;
  created_at: string;
  /** The first failure of the current run of failures (null after a success). */
  failing_since: string | null;
}

/** A saved search as stored. */
export interface SavedSearchRecord {
  id: string;
  owner: string;
  name: string;
  /** The `post` scope as the client sent it (what the API shows). */
  post: unknown;
  /** The normalized search (query, filter tree), JSON. */
  search: string;
  /** The query's embedding, base64 of float32 (null: no query, or no model). */
  vector: string | null;
  webhook_endpoint_id: string | null;
  created_at: string;
  last_match_at: string | null;
}

/** One event as the pull endpoint and the deliveries send it (the webhook body). */
export interface StoredEvent {
  /** Stream entry id: the pull cursor's position. */
  position: string;
  body: string;
}

/** One delivery attempt, as the delivery log shows it. */
export interface DeliveryAttempt {
  at: string;
  event_id: string;
  attempt: number;
  /** The receiver's HTTP status (null: no response). */
  status: number | null;
  latency_ms: number;
  error: string | null;
}

/** Stored events per saved search: the pull endpoint's retention. */
export const EVENTS_KEPT = 10_000;
/** How long events are kept for pulling (and their posts' summaries a day longer). */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const SUMMARY_TTL_S = EVENT_RETENTION_MS / 1000 + 24 * 60 * 60;
/** The scripts called by SHA (lua-script.ts): those called once per saved search of a pass. */
const APPEND_EVENTS = luaScript(APPEND_EVENTS_LUA);
const BY_SHA = [APPEND_EVENTS];

/** Commands per pipeline of the bulk operations. */
const PIPELINE_SIZE = 1000;
/** Delivery attempts kept per endpoint. */
export const DELIVERIES_KEPT = 100;

/**
 * How long an intake job's intent is kept: as long as a failed job may be retried by an operator
 * (`social-search intake failures retry`) and still record what its first attempt wrote.
 */
const INTENT_TTL_S = EVENT_RETENTION_MS / 1000;

function decodeHash<T>(hash: Record<string, string>, nullable: readonly string[]): T | null {
  if (!hash['id']) return null;
  const out: Record<string, unknown> = { ...hash };
  for (const field of nullable) out[field] = hash[field] ? hash[field] : null;
  return out as T;
}

function encodeHash(record: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record)) out[k] = v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

const ENDPOINT_NULLABLE = [
  'description',
  'disabled_reason',
  'previous_secret',
  'previous_secret_until',
  'failing_since',
] as const;
const SEARCH_NULLABLE = ['vector', 'webhook_endpoint_id', 'last_match_at'] as const;

/** Creates the store. */
export function createAlertStore(deps: { redis: Redis; prefix: string; timeoutMs?: number }) {
  const { redis } = deps;
  const base = `${deps.prefix}:alert-store`;
  const key = {
    endpoint: (id: string) => `${base}:endpoint:${id}`,
    deliveries: (id: string) => `${base}:endpoint:${id}:deliveries`,
    search: (id: string) => `${base}:search:${id}`,
    seen: (id: string) => `${base}:search:${id}:seen`,
    events: (id: string) => `${base}:search:${id}:events`,
    summary: (post: string, atMs: number) => `${base}:summary:${post}:${atMs}`,
    ownerEndpoints: (owner: string) => `${base}:owner:${owner}:endpoints`,
    ownerSearches: (owner: string) => `${base}:owner:${owner}:searches`,
    searches: `${base}:searches`,
    pending: `${base}:pending`,
    claimed: (run: string) => `${base}:claimed:${run}`,
    intent: (job: string) => `${base}:intent:${job}`,
  };
  const guard = createRedisGuard({ unreachable: 'the alert store is unreachable', ...deps });
  // A pass's claim moves every pending change at once (with earlier versions: megabytes).
  const claimGuard = createRedisGuard({ unreachable: 'the alert store is unreachable', timeoutMs: 30_000 });

  /**
   * Runs many commands as pipelines of {@link PIPELINE_SIZE}, each bounded by the guard's timeout
   * on its own (a pass may write tens of thousands of pairs and events: one pipeline of them all
   * would outlast any single-command timeout). Returns their results in order.
   */
  async function batched(commands: ReadonlyArray<(pipeline: ChainableCommander) => unknown>): Promise<unknown[]> {
    const results: unknown[] = [];
    for (let i = 0; i < commands.length; i += PIPELINE_SIZE) {
      const chunk = commands.slice(i, i + PIPELINE_SIZE);
      results.push(...(await guard.run(() => execLoadingScripts(chunk))));
    }
    return results;
  }

  /**
   * Runs `commands` as one pipeline; those Redis answered NOSCRIPT (it had not loaded a script
   * called by SHA: a restart, a SCRIPT FLUSH) ran nothing, and run again once the scripts are loaded.
   */
  async function execLoadingScripts(commands: ReadonlyArray<(pipeline: ChainableCommander) => unknown>) {
    const pipeline = redis.pipeline();
    for (const command of commands) command(pipeline);
    const results = await pipeline.exec();
    const missing = results?.flatMap(([error], i) => (isNoScript(error) ? [i] : [])) ?? [];
    if (missing.length > 0) {
      await Promise.all(BY_SHA.map((script) => redis.script('LOAD', script.lua)));
      const again = redis.pipeline();
      for (const i of missing) commands[i]!(again);
      const retried = guard.unwrap(await again.exec());
      missing.forEach((i, k) => (results![i] = [null, retried[k]]));
    }
    return guard.unwrap(results);
  }

  async function hashes(keys: string[]): Promise<Record<string, string>[]> {
    return (await batched(keys.map((k) => (p) => p.hgetall(k)))) as Record<string, string>[];
  }

  const endpointOf = (hash: Record<string, string>) => decodeHash<EndpointRecord>(hash, ENDPOINT_NULLABLE);
  const searchOf = (hash: Record<string, string>) => {
    const record = decodeHash<SavedSearchRecord>(hash, SEARCH_NULLABLE);
    return record ? { ...record, post: JSON.parse(hash['post'] ?? 'null') as unknown } : null;
  };

  return {
    /** Stores a new endpoint. */
    insertEndpoint: (record: EndpointRecord) =>
      guard.run(async () => {
        guard.unwrap(
          await redis
            .multi()
            .hset(key.endpoint(record.id), encodeHash(record))
            .zadd(key.ownerEndpoints(record.owner), Date.parse(record.created_at), record.id)
            .exec(),
        );
      }),

    /** The endpoint `id`, or null. */
    endpoint: (id: string) => guard.run(async () => endpointOf(await redis.hgetall(key.endpoint(id)))),

    /** The endpoints of `owner`, oldest first. */
    endpointsOf: async (owner: string) => {
      const ids = await guard.run(() => redis.zrange(key.ownerEndpoints(owner), 0, -1));
      return (await hashes(ids.map(key.endpoint))).map(endpointOf).filter((e) => e !== null);
    },

    /** Sets fields of an existing endpoint; false when it is gone. */
    updateEndpoint: (id: string, fields: Partial<Omit<EndpointRecord, 'id' | 'owner'>>) =>
      guard.run(async () => {
        if (!(await redis.exists(key.endpoint(id)))) return false;
        const set = encodeHash(fields);
        const cleared = Object.keys(set).filter((f) => set[f] === '');
        const pipeline = redis.multi();
        const kept = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== ''));
        if (Object.keys(kept).length > 0) pipeline.hset(key.endpoint(id), kept);
        if (cleared.length > 0) pipeline.hdel(key.endpoint(id), ...cleared);
        guard.unwrap(await pipeline.exec());
        return true;
      }),

    /** Deletes an endpoint and its log; saved searches that named it keep their events for pulling. */
    deleteEndpoint: (record: Pick<EndpointRecord, 'id' | 'owner'>) =>
      guard.run(async () => {
        const results = guard.unwrap(
          await redis
            .multi()
            .del(key.endpoint(record.id), key.deliveries(record.id))
            .zrem(key.ownerEndpoints(record.owner), record.id)
            .exec(),
        );
        return (results[0] as number) > 0;
      }),

    /** Adds attempts (oldest first) to an endpoint's delivery log, which keeps the last {@link DELIVERIES_KEPT}. */
    logDeliveries: (id: string, attempts: readonly DeliveryAttempt[]) =>
      guard.run(async () => {
        if (attempts.length === 0) return;
        const kept = attempts.slice(-DELIVERIES_KEPT).map((attempt) => JSON.stringify(attempt));
        guard.unwrap(
          await redis
            .multi()
            .lpush(key.deliveries(id), ...kept)
            .ltrim(key.deliveries(id), 0, DELIVERIES_KEPT - 1)
            .exec(),
        );
      }),

    /** An endpoint's last delivery attempts, newest first. */
    deliveries: (id: string, limit: number) =>
      guard.run(async () =>
        (await redis.lrange(key.deliveries(id), 0, limit - 1)).map((line) => JSON.parse(line) as DeliveryAttempt),
      ),

    /** Stores a new saved search unless its owner has `cap` already; false when at the cap. */
    insertSearch: (record: SavedSearchRecord, cap: number) =>
      guard.run(async () => {
        const fields = Object.entries(encodeHash(record)).flat();
        const stored = (await redis.eval(
          INSERT_SEARCH,
          3,
          key.search(record.id),
          key.ownerSearches(record.owner),
          key.searches,
          cap,
          Date.parse(record.created_at),
          record.id,
          ...fields,
        )) as number;
        return stored === 1;
      }),

    /** The saved search `id`, or null. */
    search: (id: string) => guard.run(async () => searchOf(await redis.hgetall(key.search(id)))),

    /** The saved searches of `owner`, oldest first. */
    searchesOf: async (owner: string) => {
      const ids = await guard.run(() => redis.zrange(key.ownerSearches(owner), 0, -1));
      return (await hashes(ids.map(key.search))).map(searchOf).filter((s) => s !== null);
    },

    /** A number that changes whenever a saved search is created, deleted or given its vector. */
    searchesVersion: () => guard.run(async () => (await redis.get(`${key.searches}:version`)) ?? '0'),

    /** Every saved search (the matching pass). */
    allSearches: async () => {
      const ids = await guard.run(() => redis.zrange(key.searches, 0, -1));
      return (await hashes(ids.map(key.search))).map(searchOf).filter((s) => s !== null);
    },

    /** Stores the query embedding of a saved search created while the model was not ready. */
    updateSearchVector: (id: string, vector: string) =>
      guard.run(async () => {
        await redis.eval(SET_IF_EXISTS, 1, key.search(id), 'vector', vector);
        await redis.incr(`${key.searches}:version`);
      }),

    /** How many saved searches exist (0: intake records no pending changes). */
    searchCount: () => guard.run(() => redis.zcard(key.searches)),

    /** Deletes a saved search with its events and bookkeeping. */
    deleteSearch: (record: Pick<SavedSearchRecord, 'id' | 'owner'>) =>
      guard.run(async () => {
        const results = guard.unwrap(
          await redis
            .multi()
            .del(key.search(record.id), key.seen(record.id), key.events(record.id))
            .zrem(key.ownerSearches(record.owner), record.id)
            .zrem(key.searches, record.id)
            .incr(`${key.searches}:version`)
            .exec(),
        );
        return (results[0] as number) > 0;
      }),

    /** For each saved search, those of its posts it has not seen yet (one round trip for all). */
    unseen: async (matched: ReadonlyMap<string, readonly string[]>) => {
      const asked = [...matched].filter(([, ids]) => ids.length > 0);
      const flags = (await batched(
        asked.map(
          ([search, ids]) =>
            (p) =>
              p.smismember(key.seen(search), ...ids),
        ),
      )) as number[][];
      const out = new Map<string, string[]>();
      asked.forEach(([search, ids], i) => {
        const fresh = ids.filter((_, k) => flags[i]![k] === 0);
        if (fresh.length > 0) out.set(search, fresh);
      });
      return out;
    },

    /**
     * Marks pairs seen, for every saved search at once; returns, per search, the posts that were
     * not seen yet (each pair is first marked only once, whoever else marks it).
     */
    markSeen: async (pairs: ReadonlyMap<string, readonly string[]>) => {
      const asked = [...pairs].filter(([, ids]) => ids.length > 0);
      const added = (await batched(
        asked.flatMap(([search, ids]) => ids.map((id) => (p: ChainableCommander) => p.sadd(key.seen(search), id))),
      )) as number[];
      const out = new Map<string, Set<string>>();
      let n = 0;
      for (const [search, ids] of asked) {
        const fresh = new Set(ids.filter(() => added[n++] === 1));
        if (fresh.size > 0) out.set(search, fresh);
      }
      return out;
    },

    /**
     * Stores posts' summaries (JSON) at the times their events refer to them, once for all the
     * saved searches they matched: before any event or delivery refers to them.
     */
    storeSummaries: async (summaries: ReadonlyMap<string, { at: string; summary: string }>) => {
      await batched(
        [...summaries].map(
          ([post, { at, summary }]) =>
            (p: ChainableCommander) =>
              p.set(key.summary(post, Date.parse(at)), summary, 'EX', SUMMARY_TTL_S),
        ),
      );
    },

    /** The summaries `refs` refer to, in order (null: gone, expired or never stored). */
    summaries: (refs: readonly EventRef[]) =>
      guard.run(async () =>
        refs.length === 0 ? [] : redis.mget(...refs.map((r) => key.summary(r.post, Date.parse(r.at)))),
      ),

    /**
     * Records events: for each saved search of `events`, the matched posts not yet seen by it are
     * marked seen and appended to its stream (each with its time, whose stored summary it refers
     * to), in one script per search (a pair is never marked without its event, and only its first
     * marking appends), and its last match time noted. Events older than
     * {@link EVENT_RETENTION_MS} are trimmed on the way. Returns, per search, the posts that were
     * new to it: the events recorded.
     */
    appendEvents: async (events: ReadonlyMap<string, readonly EventRef[]>): Promise<Map<string, Set<string>>> => {
      const asked = [...events].filter(([, refs]) => refs.length > 0);
      const oldest = Date.now() - EVENT_RETENTION_MS;
      // One script per search rather than two commands per pair: at 4.5 events per post the
      // per-pair commands were most of the pass's Redis client time (bench/alerts.md). One script
      // for many searches, measured: the client's time less by as much as Redis's grew.
      const appended = (await batched(
        asked.map(
          ([search, refs]) =>
            (p: ChainableCommander) =>
              p.evalsha(
                APPEND_EVENTS.sha,
                3,
                key.seen(search),
                key.events(search),
                key.search(search),
                oldest,
                EVENTS_KEPT,
                ...refs.flatMap((r) => [r.post, r.at]),
              ),
        ),
      )) as string[][];
      const out = new Map<string, Set<string>>();
      asked.forEach(([search], i) => {
        if (appended[i]!.length > 0) out.set(search, new Set(appended[i]));
      });
      return out;
    },

    /**
     * Up to `limit` events of `search` after stream position `after` (null: from the oldest kept),
     * as their bodies; none older than {@link EVENT_RETENTION_MS}.
     */
    events: (search: string, after: string | null, limit: number) =>
      guard.run(async () => {
        const oldest = Date.now() - EVENT_RETENTION_MS;
        const from = after && Number(after.split('-')[0]) >= oldest ? `(${after}` : String(oldest);
        const entries = await redis.xrange(key.events(search), from, '+', 'COUNT', limit);
        const fields = entries.map(([, flat]) => {
          const out: Record<string, string> = {};
          for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
          return out;
        });
        const refs = fields.map((f) =>
          f['body'] === undefined ? key.summary(f['post']!, Date.parse(f['at']!)) : null,
        );
        const wanted = refs.filter((k) => k !== null);
        const found = wanted.length > 0 ? await redis.mget(...wanted) : [];
        const summaryOf = new Map(wanted.map((k, i) => [k, found[i] ?? null]));
        return entries.flatMap(([position], i): StoredEvent[] => {
          const f = fields[i]!;
          if (f['body'] !== undefined) return [{ position, body: f['body'] }];
          const summary = summaryOf.get(refs[i]!) ?? null;
          // A summary gone (expired, or evicted by the operator's memory policy) leaves nothing to show.
          return summary === null ? [] : [{ position, body: matchedEventBody(search, f['post']!, f['at']!, summary) }];
        });
      }),

    /** Records the first change of each post since the last pass (later ones keep the first). */
    recordPending: async (changes: ReadonlyMap<string, PendingChange>) => {
      await batched(
        [...changes].map(
          ([id, change]) =>
            (p) =>
              p.hsetnx(key.pending, id, JSON.stringify(change)),
        ),
      );
    },

    /**
     * Records the changes intake job `job` is about to write (later calls keep the first change of
     * a post, as pending does), before it writes them.
     */
    recordIntent: async (job: string, changes: ReadonlyMap<string, PendingChange>) => {
      const entries = [...changes].flatMap(([id, change]) => [id, JSON.stringify(change)]);
      // A script per PIPELINE_SIZE posts, so that each stays under the guard's timeout.
      const calls: Array<(p: ChainableCommander) => unknown> = [];
      for (let i = 0; i < entries.length; i += 2 * PIPELINE_SIZE) {
        const chunk = entries.slice(i, i + 2 * PIPELINE_SIZE);
        calls.push((p) => p.eval(INTEND, 1, key.intent(job), INTENT_TTL_S, ...chunk));
      }
      await batched(calls);
    },

    /** Moves job `job`'s intent into pending once its writes are done; false when it recorded none. */
    confirmIntent: (job: string) =>
      guard.run(async () => (await redis.eval(CONFIRM_INTENT, 2, key.intent(job), key.pending)) === 1),

    /**
     * Records the matches worked out at a write (`changes`, fields of their own, their summaries
     * under their own keys), and for job `job`
     * settles its intent: the changes of `written` (what this attempt wrote, and matched) are
     * dropped from it, the others (an earlier attempt's) moved into pending as they are. True when
     * pending gained anything (a pass is then due).
     */
    recordMatched: (changes: readonly MatchedChange[], written: readonly string[], job?: string) =>
      guard.run(async () => {
        if (changes.length === 0 && job === undefined) return false;
        const summarized = changes.filter((c) => c.summary !== null);
        const args: Array<string | number> = [SUMMARY_TTL_S, written.length, ...written, changes.length];
        for (const change of changes) args.push(`${change.post}\u0000${randomUUID()}`, encodeMatched(change));
        for (const change of summarized) args.push(change.summary!);
        const intent = job === undefined ? key.pending : key.intent(job);
        // One script: a change and the summary it refers to are stored together (a pass claims
        // both or neither), in one command rather than one per post. Measured for 20,000 summaries
        // in jobs of 500 (2026-11-28): the client 0.15 CPU-s against 0.42–0.62 for a pipelined SET
        // each, Redis 0.39–0.41 against 0.30–0.31.
        const keys = [intent, key.pending, ...summarized.map((c) => key.summary(c.post, Date.parse(c.at)))];
        return ((await redis.eval(RECORD_MATCHED, keys.length, ...keys, ...args)) as number) > 0;
      }),

    /** Everything pass `run` has to do: its earlier attempt's claim plus what was recorded since. */
    claimPending: (run: string) =>
      claimGuard.run(async (): Promise<ClaimedChanges> => {
        const flat = (await redis.eval(CLAIM, 2, key.pending, key.claimed(run))) as string[];
        const out: ClaimedChanges = { plain: new Map(), matched: [] };
        for (let i = 0; i < flat.length; i += 2) {
          const field = flat[i]!;
          if (field.includes('\u0000')) out.matched.push(decodeMatched(field, flat[i + 1]!));
          else out.plain.set(field, JSON.parse(flat[i + 1]!) as PendingChange);
        }
        return out;
      }),

    /** Forgets pass `run`'s claim once its work is done. */
    settlePending: (run: string) =>
      guard.run(async () => {
        await redis.del(key.claimed(run));
      }),
  };
}

/** The alert store. */
export type AlertStore = ReturnType<typeof createAlertStore>;
