import type { Redis } from 'ioredis';

/**
 * API usage per key per day (UTC), kept in Redis for the account holders' dashboard. Layout, under
 * `prefix`:
 * - `{prefix}:usage:{key id}:{YYYY-MM-DD}`: hash of counters: `op:{operation}` (requests by
 *   operation), `4xx` (client errors, 429 included) and `429`; it expires after the retention;
 * - `{prefix}:usage:last-used`: hash key id → ISO time of its latest request.
 */

/** The operations usage is counted by (the API's operation ids, snake_case). */
export const USAGE_OPERATIONS = [
  'search_posts',
  'search_accounts',
  'get_post',
  'get_account',
  'lookup_posts',
  'lookup_accounts',
  'suggest',
  'taxonomies',
  'post_facets',
  'account_facets',
  'post_counts',
  'intake',
] as const;
/** One counted operation. */
export type UsageOperation = (typeof USAGE_OPERATIONS)[number];

/** Counts requests; cheap enough for every request (memory only, flushed in the background). */
export interface UsageRecorder {
  record(keyId: string, operation: UsageOperation, status: number, at?: Date): void;
  /** Writes what is pending; a failed write keeps it for the next flush. */
  flush(): Promise<void>;
  /** Stops the timer and flushes once more. */
  close(): Promise<void>;
}

/** Dependencies of {@link createUsageRecorder}. */
export interface UsageRecorderDeps {
  redis: Redis;
  prefix: string;
  /** How often counts reach Redis: the dashboard lags by at most this much. */
  flushIntervalMs?: number;
  retentionDays?: number;
}

/** The Redis key of one key's counters on one day. */
export function usageKey(prefix: string, keyId: string, day: string): string {
  return `${prefix}:usage:${keyId}:${day}`;
}

/** The Redis hash of last-used times. */
export function lastUsedKey(prefix: string): string {
  return `${prefix}:usage:last-used`;
}

/**
 * Creates the recorder. Counting in memory and flushing every second keeps Redis off the request
 * path: one pipeline per second per node instead of a round trip per request. Pending counts are
 * bounded by the keys × days seen between two flushes, so a Redis outage cannot grow them without
 * limit in practice; what an outage delays is flushed when Redis is back.
 */
export function createUsageRecorder({
  redis,
  prefix,
  flushIntervalMs = 1000,
  retentionDays = 90,
}: UsageRecorderDeps): UsageRecorder {
  // "{key id}\n{day}" → field → count
  let pending = new Map<string, Map<string, number>>();
  let lastUsed = new Map<string, string>();
  let flushing: Promise<void> | null = null;

  const add = (counters: Map<string, number>, field: string, by: number) =>
    counters.set(field, (counters.get(field) ?? 0) + by);

  async function write(batch: Map<string, Map<string, number>>, used: Map<string, string>): Promise<void> {
    const pipeline = redis.pipeline();
    for (const [slot, counters] of batch) {
      // A slot is `keyId\nday`, as collected: the defaults only satisfy the types.
      const [keyId = '', day = ''] = slot.split('\n');
      const key = usageKey(prefix, keyId, day);
      for (const [field, count] of counters) pipeline.hincrby(key, field, count);
      pipeline.expire(key, retentionDays * 86_400);
    }
    if (used.size > 0) pipeline.hset(lastUsedKey(prefix), Object.fromEntries(used));
    const results = await pipeline.exec();
    const failure = results?.find(([error]) => error)?.[0];
    if (!results || failure) throw failure ?? new Error('pipeline discarded');
  }

  async function flush(): Promise<void> {
    if (flushing) return flushing;
    if (pending.size === 0 && lastUsed.size === 0) return;
    const batch = pending;
    const used = lastUsed;
    pending = new Map();
    lastUsed = new Map();
    flushing = write(batch, used)
      .catch(() => {
        // Put the counts back; a later flush writes them.
        for (const [slot, counters] of batch) {
          const into = pending.get(slot) ?? new Map<string, number>();
          for (const [field, count] of counters) add(into, field, count);
          pending.set(slot, into);
        }
        for (const [id, at] of used) if (!lastUsed.has(id)) lastUsed.set(id, at);
      })
      .finally(() => {
        flushing = null;
      });
    return flushing;
  }

  const timer = setInterval(() => void flush(), flushIntervalMs);
  timer.unref();

  return {
    record(keyId, operation, status, at = new Date()) {
      const iso = at.toISOString();
      const slot = `${keyId}\n${iso.slice(0, 10)}`;
      let counters = pending.get(slot);
      if (!counters) pending.set(slot, (counters = new Map<string, number>()));
      add(counters, `op:${operation}`, 1);
      if (status >= 400 && status < 500) add(counters, '4xx', 1);
      if (status === 429) add(counters, '429', 1);
      lastUsed.set(keyId, iso);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
      // A flush that failed put its counts back: one more try before the process goes.
      if (pending.size > 0) await flush();
    },
  };
}
