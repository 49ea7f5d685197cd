import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimitExceededError } from '../../internal/errors.ts';
import type { KeyLimits } from '../../services/keys/key-store.ts';
import { NUMBERS, replyOf } from '../../internal/redis-replies.ts';
import { createFairShare } from './fair-share.ts';
import { NO_PAUSE, type RefusalPause } from './refusal-pause.ts';

/** The operations a limit applies to: searches (and facets), and the two GETs. */
export type RateLimitPolicy = keyof KeyLimits;

/** Per-key rate limits: one fixed window of a minute per policy, shared by every API node. */
export interface RateLimitOptions {
  /** Requests per key per minute by policy, unless the key carries its own limit; 0: unlimited. */
  perMinute: Record<RateLimitPolicy, number>;
  /** Where the counters live, so that every API node counts against the same budget. */
  redis: Redis;
  /** Prefix of the counters' Redis keys; the policy name is appended. */
  namespace: string;
  /**
   * Searches of one key this node runs at once (the next ones wait here, in order, up to
   * {@link WAITING_PER_KEY}; past them 429); absent or 0: no bound (src/http/plugins/fair-share.ts).
   */
  searchesPerKey?: number;
  /**
   * The pause before a refusal the node has already given the subject (its budget known spent, or
   * its share's queue full): absent, every 429 goes at once (src/http/plugins/refusal-pause.ts).
   */
  refusalPause?: RefusalPause;
}

/** Searches of one key that wait on a node for one of its running ones to end. */
export const WAITING_PER_KEY = 64;

/** Whose budget a request spends, and how a 429 names them. */
export interface BudgetSubject {
  /** The counter's id; undefined: nobody's (the request is not counted). */
  of: (request: FastifyRequest) => string | undefined;
  /** "this API key", as in "this API key has used its 600 searches per minute". */
  name: string;
}

/** The API key's budget (`requireKey` sets the key before any count). */
const API_KEY: BudgetSubject = { of: (request) => request.apiKey?.id, name: 'this API key' };

/** Runs an operation under the key's rate limit. */
export type Limiter = <T>(request: FastifyRequest, reply: FastifyReply, operation: () => Promise<T>) => Promise<T>;

/** The rate limit of a route: the hook that counts, and the runner that honours the count. */
export interface RouteRateLimit {
  /**
   * A `preValidation` hook: counts the request before its body is validated, so an invalid
   * search spends budget like a valid one, and answers a key known to be over budget at once.
   * The count is not awaited here: {@link run} awaits it alongside the operation.
   */
  count: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /**
   * {@link count} for a request that spends more than one unit of the budget (a lookup spends one
   * read per entry): `cost` reads the parsed, not yet validated body.
   */
  countBy: (
    cost: (request: FastifyRequest) => number,
  ) => (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** Runs a read alongside its count; a request found over budget gets its 429 and the result is dropped. */
  run: Limiter;
  /**
   * Runs an operation that changes something only once its count says the key is within budget:
   * a request over budget is refused before it acts (a 429 that created an endpoint anyway, or
   * rotated a secret nobody would see, would be worse than the round trip this waits for).
   */
  mutate: Limiter;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The pending budget count of this request (see RouteRateLimit.count). */
    rateBudget?: Promise<void>;
  }
}

const WINDOW_SECONDS = 60;

/**
 * A fixed window's counter, spent by `cost`: INCRBY, and the window's expiry set by the request
 * that opens it (the store script of @fastify/rate-limit, weighted). Answers the count and the window's
 * remaining milliseconds.
 */
const SPEND = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`;

/**
 * The most units a node takes from a key's shared counter at once, beyond what the request needs:
 * a hundredth of the limit, at most 50. Within a lease the node counts in memory, so a busy key
 * costs Redis one round trip per lease, not one per request (that round trip was the larger part
 * of what the API adds to a typeahead: bench/suggest.md); a node's unused units lapse with the
 * window, so a key may be refused up to (nodes × lease) units early, never late. Limits under 200
 * lease nothing extra: every request is counted in Redis, exactly.
 */
function leaseOf(max: number): number {
  return Math.min(50, Math.floor(max / 100));
}

/** The limit that applies to this request's key: its own, else the policy's default. */
function effectiveLimit(request: FastifyRequest, policy: RateLimitPolicy, fallback: number): number {
  return request.apiKey?.limits[policy] ?? fallback;
}

/** Units a node holds of a key's window: spent here without asking Redis. */
interface Lease {
  /** Epoch ms at which the window (and the lease) ends. */
  endsAt: number;
  /** Units left to spend. */
  left: number;
  /** The shared counter as this node last read it, its own unspent units included. */
  counted: number;
  max: number;
}

/** What one count answered: the budget headers, or that the key is over budget. */
type Counted = { max: number; remaining: number; resetSeconds: number; exceeded: boolean } | null;

function setHeaders(
  reply: FastifyReply,
  policy: RateLimitPolicy,
  limit: number,
  remaining: number,
  resetSeconds: number,
): void {
  reply.header('ratelimit-policy', `"${policy}";q=${limit};w=${WINDOW_SECONDS}`);
  reply.header('ratelimit', `"${policy}";r=${remaining};t=${resetSeconds}`);
  reply.header('ratelimit-limit', limit);
  reply.header('ratelimit-remaining', remaining);
  reply.header('ratelimit-reset', resetSeconds);
}

/**
 * The limiter of one policy, for the routes that spend it. Counts after authentication, so the
 * budget is the verified key's (a key id read from an unverified header would let anyone spend
 * another customer's budget); a key's own limit (`social-search keys limit`) replaces the policy's
 * default. The count is shared by every API node through Redis, in leases (see {@link leaseOf}).
 *
 * For reads, a count that needs Redis runs alongside the operation rather than before it, so the
 * limit adds no round trip within budget; a request found over budget is answered 429 and its
 * result dropped. An operation that changes something waits for its count (`mutate`). The node
 * then remembers the key as over budget until the window resets and answers its next requests
 * 429 with no engine work, after the node's refusal pause (`refusalPause`): a client hammering
 * past its limit costs one operation per node, not one per request, and a few 429s a second. With
 * Redis unreachable the request goes through uncounted (the limit is protection, not billing).
 *
 * Headers: the IETF httpapi draft's `RateLimit-Policy` and `RateLimit` beside the earlier draft's
 * `RateLimit-Limit`, `-Remaining` and `-Reset`, which clients already read; the policy name tells a
 * client which budget a response spent.
 */
function createRouteRateLimit(
  options: RateLimitOptions,
  policy: RateLimitPolicy,
  subject: BudgetSubject = API_KEY,
): RouteRateLimit {
  const fallback = options.perMinute[policy];
  const pause = options.refusalPause ?? NO_PAUSE;
  const share =
    policy === 'search' && options.searchesPerKey
      ? createFairShare({
          running: options.searchesPerKey,
          waiting: WAITING_PER_KEY,
          pause: (id) => pause.hold(id, 1000),
          refuse: () =>
            new RateLimitExceededError(
              `${subject.name} has ${options.searchesPerKey} searches running and ${WAITING_PER_KEY} waiting on this API node; retry in 1 s`,
              1,
            ),
        })
      : null;
  // Subject → its lease, and subjects this node has seen over budget → when their window ends.
  const leases = new LRUCache<string, Lease>({ max: 10_000 });
  const overBudget = new LRUCache<string, number>({ max: 10_000 });
  const exceeded = (max: number, resetSeconds: number) => {
    const what = policy === 'search' ? 'searches' : 'reads';
    return new RateLimitExceededError(
      `${subject.name} has used its ${max} ${what} per minute; retry in ${resetSeconds} s`,
      resetSeconds,
    );
  };

  /** Takes `cost` units, and a lease beyond them, from the subject's shared counter. */
  async function take(id: string, cost: number, max: number): Promise<Counted> {
    const extra = leaseOf(max);
    let current: number;
    let ttl: number;
    try {
      [current = 0, ttl = 0] = replyOf(
        await options.redis.eval(SPEND, 1, `${options.namespace}${policy}:${id}`, WINDOW_SECONDS * 1000, cost + extra),
        NUMBERS,
      );
    } catch {
      return null;
    }
    const endsAt = Date.now() + ttl;
    const resetSeconds = Math.ceil(ttl / 1000);
    // Of the units just taken (current - cost - extra, current], those within the limit are ours.
    const ours = Math.max(0, Math.min(cost + extra, max - (current - cost - extra)));
    if (ours < cost) {
      leases.delete(id);
      overBudget.set(id, endsAt);
      return { max, remaining: 0, resetSeconds, exceeded: true };
    }
    // Takes that were in flight together (a burst) each bring a lease of the same window: the node
    // holds them all, so no unit it took is lost to the key.
    const held = leases.get(id);
    const carried = held && held.endsAt > Date.now() && held.max === max ? held : null;
    const lease = {
      endsAt,
      left: ours - cost + (carried?.left ?? 0),
      counted: Math.max(current, carried?.counted ?? 0),
      max,
    };
    leases.set(id, lease);
    return { max, remaining: Math.max(0, max - current + lease.left), resetSeconds, exceeded: false };
  }

  /** Counts `cost` units for the request's subject: from its lease when it holds enough, else from Redis. */
  async function spend(request: FastifyRequest, reply: FastifyReply, cost: number): Promise<void> {
    const max = effectiveLimit(request, policy, fallback);
    const id = subject.of(request);
    if (max === 0 || id === undefined) return;
    let now = Date.now();
    const resetsAt = overBudget.get(id);
    if (resetsAt !== undefined) {
      // Told to retry later and asking again: answered after a pause, or counted afresh if the
      // window ends within it.
      if (resetsAt > now) {
        await pause.hold(id, resetsAt - now);
        now = Date.now();
      }
      if (resetsAt > now) {
        const resetSeconds = Math.ceil((resetsAt - now) / 1000);
        setHeaders(reply, policy, max, 0, resetSeconds);
        throw exceeded(max, resetSeconds);
      }
      if (overBudget.get(id) === resetsAt) overBudget.delete(id);
    }
    const lease = leases.get(id);
    if (lease && lease.endsAt > now && lease.max === max && lease.left >= cost) {
      lease.left -= cost;
      setHeaders(
        reply,
        policy,
        max,
        Math.max(0, max - lease.counted + lease.left),
        Math.ceil((lease.endsAt - now) / 1000),
      );
      return;
    }
    const counted = take(id, cost, max).then((answer) => {
      if (!answer) return;
      setHeaders(reply, policy, answer.max, answer.remaining, answer.resetSeconds);
      if (answer.exceeded) throw exceeded(answer.max, answer.resetSeconds);
    });
    // A request that fails validation never awaits its count: keep that rejection handled.
    counted.catch(() => undefined);
    request.rateBudget = counted;
  }

  return {
    count: (request, reply) => spend(request, reply, 1),
    countBy: (cost) => (request, reply) => spend(request, reply, cost(request)),
    async mutate(request, _reply, operation) {
      await request.rateBudget;
      return operation();
    },
    async run(request, _reply, operation) {
      const id = share ? subject.of(request) : undefined;
      // Both settle before the answer: a fast failure (a 404 read) still carries the budget's
      // headers, and a key over budget gets its 429 whatever the operation did.
      const [budget, result] = await Promise.allSettled([
        request.rateBudget,
        share && id !== undefined ? share.run(id, operation) : operation(),
      ]);
      if (budget.status === 'rejected') throw budget.reason;
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    },
  };
}

/** One limiter per policy: what every route of an app spends. */
export type Budgets = Record<RateLimitPolicy, RouteRateLimit>;

/**
 * The app's budgets: one limiter per policy, so every route of a policy shares its leases and its
 * memory of keys over budget. Without options, none is limited.
 */
export function createBudgets(options: RateLimitOptions | undefined, subject: BudgetSubject = API_KEY): Budgets {
  if (!options) return { search: UNLIMITED, read: UNLIMITED };
  return {
    search: createRouteRateLimit(options, 'search', subject),
    read: createRouteRateLimit(options, 'read', subject),
  };
}

/** Routes' limits when none is configured: the operation runs as is. */
export const UNLIMITED: RouteRateLimit = {
  count: async () => undefined,
  countBy: () => async () => undefined,
  run: (_request, _reply, operation) => operation(),
  mutate: (_request, _reply, operation) => operation(),
};
