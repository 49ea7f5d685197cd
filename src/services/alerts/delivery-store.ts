import { luaScript } from '../../internal/lua-script.ts';
import type { AlertRedis } from './alert-redis.ts';
import { NUMBER, STRINGS, replyOf } from '../../internal/redis-replies.ts';

/** One delivery waiting in an endpoint's outbox: a test event whole, or a matched event by reference. */
export interface OutboxEntry {
  /** Stream entry id: its time is when the delivery was queued. */
  id: string;
  event: string;
  /** A test event's body. */
  body?: string;
  /** A `post.matched` event: its saved search, post and the time its summary is stored at. */
  ref?: { search: string; post: string; at: string };
}

/** The causes delivery failures are counted by in `/metrics`. */
export type FailureCause = 'receiver' | 'secret' | 'store' | 'bug' | 'expired';

/**
 * Claims endpoints to deliver to (KEYS: due, leases, the holders' counts of leases; ARGV: now,
 * the lease's length, the most leases a holder may have, how many wanted, how many due to look
 * at). Leases past their time are given back first (a worker that died). Of the endpoints due,
 * oldest first, each free one whose holder is under its share is leased and moved to the lease's
 * end (so a worker that dies with it leaves it due again); one whose holder is at its share is
 * moved a second back, behind the others. Members are `holder\tendpoint`.
 */
const CLAIM = luaScript(`
local now, lease, share, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for _, m in ipairs(redis.call('zrangebyscore', KEYS[2], '-inf', now)) do
  local holder = string.match(m, '^(.-)\\t')
  if redis.call('hincrby', KEYS[3], holder, -1) <= 0 then redis.call('hdel', KEYS[3], holder) end
end
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
local claimed = {}
for _, m in ipairs(redis.call('zrangebyscore', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[5]))) do
  if #claimed >= want then break end
  if not redis.call('zscore', KEYS[2], m) then
    local holder = string.match(m, '^(.-)\\t')
    if tonumber(redis.call('hget', KEYS[3], holder) or '0') < share then
      redis.call('zadd', KEYS[2], now + lease, m)
      redis.call('hincrby', KEYS[3], holder, 1)
      redis.call('zadd', KEYS[1], now + lease, m)
      claimed[#claimed + 1] = m
    else
      redis.call('zadd', KEYS[1], now + 1000, m)
    end
  end
end
return claimed`);

/**
 * Ends a turn (KEYS: due, leases, holders, the endpoint's outbox; ARGV: member, when it is due
 * next): its lease is given back; the endpoint stays due at that time while its outbox holds
 * anything, else it leaves the due set (a delivery queued later puts it back).
 */
const FINISH = luaScript(`
if redis.call('zrem', KEYS[2], ARGV[1]) == 1 then
  local holder = string.match(ARGV[1], '^(.-)\\t')
  if redis.call('hincrby', KEYS[3], holder, -1) <= 0 then redis.call('hdel', KEYS[3], holder) end
end
if redis.call('xlen', KEYS[4]) > 0 then redis.call('zadd', KEYS[1], ARGV[2], ARGV[1]) else redis.call('zrem', KEYS[1], ARGV[1]) end
return 1`);

/**
 * The deliveries to make: per endpoint an outbox (a stream, oldest first, at most 24 h of it) and
 * the attempts made at its entries; which endpoints are due (`deliveries:due`, a sorted set of
 * `holder\tendpoint` by when), which are being delivered to (`deliveries:leases`, by when the
 * lease ends) and how many leases each holder has (`deliveries:holders`): one turn per endpoint at
 * a time, a share of the turns per holder (deliveries.ts).
 */
export function createDeliveryStore(store: AlertRedis) {
  const { redis, key } = store;
  const due = key('deliveries', 'due');
  const leases = key('deliveries', 'leases');
  const holders = key('deliveries', 'holders');
  const failures = key('delivery-failures');
  const outboxOf = (endpoint: string) => key('endpoint', endpoint, 'outbox');
  const attemptsOf = (endpoint: string) => key('endpoint', endpoint, 'attempts');
  const testsOf = (endpoint: string) => key('endpoint', endpoint, 'tests');
  const memberOf = (holder: string, endpoint: string) => `${holder}\t${endpoint}`;

  return {
    due,
    outboxOf,
    memberOf,
    /** The keys of `endpoint`'s deliveries, deleted with it. */
    keysOf: (endpoint: string) => [outboxOf(endpoint), attemptsOf(endpoint), testsOf(endpoint)],

    /** Queues a test event to `endpoint`, unless it has queued `perMinute` this minute; false then. */
    queueTest: (holder: string, endpoint: string, event: { id: string; body: string }, perMinute: number) =>
      store.run(async () => {
        const sent = store.unwrap(
          await redis.multi().incr(testsOf(endpoint)).expire(testsOf(endpoint), 60, 'NX').exec(),
        );
        if (replyOf(sent[0], NUMBER) > perMinute) return false;
        store.unwrap(
          await redis
            .multi()
            .xadd(outboxOf(endpoint), '*', 'event', event.id, 'body', event.body)
            .zadd(due, 'NX', Date.now(), memberOf(holder, endpoint))
            .exec(),
        );
        return true;
      }),

    /** Endpoints to take a turn at, at most `want`, each leased for `leaseMs` (`holder\tendpoint`). */
    claim: async (want: number, options: { leaseMs: number; share: number; now?: number }) =>
      replyOf(
        await store.evalsha(
          CLAIM,
          [due, leases, holders],
          [options.now ?? Date.now(), options.leaseMs, options.share, want, 4 * want + 64],
        ),
        STRINGS,
      ),

    /** Ends a turn at `member`'s endpoint; it is due again at `next` while its outbox holds anything. */
    finish: async (member: string, next: number) => {
      const endpoint = member.slice(member.indexOf('\t') + 1);
      await store.evalsha(FINISH, [due, leases, holders, outboxOf(endpoint)], [member, next]);
    },

    /** The first `count` deliveries of `endpoint`'s outbox, oldest first, with the attempts made at each. */
    read: (endpoint: string, count: number) =>
      store.run(async () => {
        const entries = await redis.xrange(outboxOf(endpoint), '-', '+', 'COUNT', count);
        const out = entries.map(([id, flat]): OutboxEntry => {
          const f: Record<string, string> = {};
          for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
          return f['body'] !== undefined
            ? { id, event: f['event']!, body: f['body'] }
            : { id, event: f['event']!, ref: { search: f['search']!, post: f['post']!, at: f['at']! } };
        });
        const made = out.length > 0 ? await redis.hmget(attemptsOf(endpoint), ...out.map((e) => e.id)) : [];
        return out.map((entry, i) => ({ entry, attempts: Number(made[i] ?? 0) }));
      }),

    /** Removes deliveries done with (delivered, refused, expired) and counts an attempt at those to retry. */
    settle: (endpoint: string, done: readonly string[], retried: readonly string[]) =>
      store.run(async () => {
        if (done.length === 0 && retried.length === 0) return;
        const tx = redis.multi();
        if (done.length > 0) tx.xdel(outboxOf(endpoint), ...done).hdel(attemptsOf(endpoint), ...done);
        for (const id of retried) tx.hincrby(attemptsOf(endpoint), id, 1);
        store.unwrap(await tx.exec());
      }),

    /** Empties `endpoint`'s outbox (disabled, or gone). */
    drop: (endpoint: string) =>
      store.run(async () => {
        await redis.del(outboxOf(endpoint), attemptsOf(endpoint));
      }),

    /** Counts delivery failures by cause, for `/metrics`. */
    countFailures: (cause: FailureCause, n = 1) =>
      store.run(async () => {
        if (n > 0) await redis.hincrby(failures, cause, n);
      }),

    /** Delivery failures by cause since the deployment began. */
    failureCounts: (): Promise<Partial<Record<FailureCause, string>>> => store.run(() => redis.hgetall(failures)),

    /** How many endpoints have deliveries waiting. */
    dueCount: () => store.run(() => redis.zcard(due)),
  };
}

/** The delivery store. */
export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
