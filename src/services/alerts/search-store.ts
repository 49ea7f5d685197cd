import { z } from 'zod';
import { SAVED_SEARCH_EVENTS } from '../../query/alert-request.ts';
import { hashCodec, ownedRecords, type AlertRedis } from './alert-redis.ts';

const searchSchema = z.object({
  id: z.string(),
  owner: z.string(),
  name: z.string(),
  /**
   * The `post` scope as the client sent it, not the normalized search: the API shows it back as
   * sent, and a saved search lives until it is deleted, so what is stored must read in every later
   * version. The scope is the v1 contract, which only grows; the normalized search is internal and
   * versioned (search-codec.ts), which a cursor can afford since it expires and a cursor of another
   * version is answered 410. The worker reads the normalized search from it by the schema that
   * validated it at creation (alert-request.ts, `storedSavedSearchSchema`).
   */
  post: z.record(z.string(), z.unknown()),
  /** The query's embedding, base64 of little-endian float32 (null: no query, or no model yet). */
  vector: z.string().nullable(),
  webhook_endpoint_id: z.string().nullable(),
  created_at: z.string(),
  last_match_at: z.string().nullable(),
  /** Matches not recorded because the search had recorded its limit of events in 30 days (event-store.ts). */
  events_dropped: z.coerce.number().int(),
  /** What it tells of. */
  events: z.array(z.enum(SAVED_SEARCH_EVENTS)),
  /** Its volume rule (volume.ts), or null. */
  volume: z
    .object({
      interval: z.enum(['hour', 'day']),
      time_zone: z.string(),
      above: z.number().int().optional(),
      spike: z
        .object({ factor: z.number(), baseline_intervals: z.number().int(), min_count: z.number().int() })
        .optional(),
    })
    .nullable(),
});

/** A saved search as stored. */
export type SavedSearchRecord = z.infer<typeof searchSchema>;

/** Sets one field of a hash that still exists (a search deleted meanwhile stays deleted). */
const SET_IF_EXISTS = `
if redis.call('exists', KEYS[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end
return 1`;

/**
 * The saved searches of every holder (`search:{id}`, `owner:{owner}:searches`), and the set of
 * them all (`searches`) with its version (`searches:version`), which the worker reads them by.
 */
export function createSearchStore(store: AlertRedis) {
  const { redis, key } = store;
  const records = ownedRecords(
    store,
    { one: 'search', many: 'searches' },
    hashCodec(searchSchema, ['post', 'events', 'volume']),
    {
      every: true,
    },
  );
  // Asked with `every: true`, ownedRecords names the set of them all and its version.
  const [every, version] = records.every as [string, string];
  return {
    ...records,
    /** How many saved searches exist (0: writers record nothing for them). */
    count: () => store.run(() => redis.zcard(every)),
    /** A number that changes whenever a saved search is created, deleted or given its vector. */
    version: () => store.run(async () => (await redis.get(version)) ?? '0'),
    /** Stores the query embedding of a saved search created while the model was not ready. */
    setVector: (id: string, vector: string) =>
      store.run(async () => {
        await redis.eval(SET_IF_EXISTS, 1, key('search', id), 'vector', vector);
        await redis.incr(version);
      }),
  };
}

/** The saved-search store. */
export type SearchStore = ReturnType<typeof createSearchStore>;
