import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimitExceededError } from '../../internal/errors.ts';
import type { KeyLimits } from '../../services/keys/key-store.ts';
import { NUMBERS, replyOf } from '../../internal/redis-replies.ts';

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
}

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
 * @fastify/rate-limit's own Redis script (store/RedisStore.js, continueExceeding and exponential
 * back-off off) with INCRBY for INCR: a request of cost n spends n of the same counter, in the same
 * window, as n requests would.
 */
const WEIGHTED_COUNT = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`;

/** The limit that applies to this request's key: its own, else the policy's default. */
function effectiveLimit(request: FastifyRequest, policy: RateLimitPolicy, fallback: number): number {
  return request.apiKey?.limits[policy] ?? fallback;
}

/**
 * Sets the IETF httpapi draft's structured headers (`RateLimit-Policy`, `RateLimit`) beside the
 * earlier draft's `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, which clients
 * already read; the policy name tells a client which budget a response spent.
 */
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
 * Registers @fastify/rate-limit (Redis store) for one policy and returns the limiter its routes
 * run their work under. It counts after authentication, so the budget is the verified key's:
 * counting on a key id read from an unverified header would let anyone spend another customer's
 * budget. A key's own limit (`social-search keys limit`) replaces the policy's default.
 *
 * For reads, the Redis count runs alongside the operation rather than before it, so the limit adds
 * no round trip within budget; a request found over budget is answered 429 and its result
 * dropped. An operation that changes something waits for its count (`mutate`). The
 * node then remembers the key as over budget until the window resets and answers its next
 * requests 429 at once, with no engine work: a client hammering past its limit costs one
 * operation per node, not one per request.
 *
 * If Redis cannot be reached the request goes through (the limit is protection, not billing).
 */
export async function registerRateLimit(
  app: FastifyInstance,
  options: RateLimitOptions,
  policy: RateLimitPolicy,
  subject: BudgetSubject = API_KEY,
): Promise<RouteRateLimit> {
  const fallback = options.perMinute[policy];
  // Each policy in a scope of its own: the plugin decorates the context it is registered in once,
  // so a second registration in the same context would silently reuse the first one's counters.
  let check!: ReturnType<FastifyInstance['createRateLimit']>;
  await app.register(async (scope) => {
    await scope.register(rateLimit, {
      global: false,
      max: (request) => effectiveLimit(request, policy, fallback),
      timeWindow: WINDOW_SECONDS * 1000,
      redis: options.redis,
      nameSpace: `${options.namespace}${policy}:`,
      skipOnError: true,
      keyGenerator: (request) => subject.of(request) ?? 'anonymous',
    });
    check = scope.createRateLimit();
  });
  // Key id → when its window resets (epoch ms), for keys this node has seen over budget.
  const overBudget = new LRUCache<string, number>({ max: 10_000 });
  const exceeded = (reply: FastifyReply, max: number, resetSeconds: number) => {
    setHeaders(reply, policy, max, 0, resetSeconds);
    const what = policy === 'search' ? 'searches' : 'reads';
    return new RateLimitExceededError(
      `${subject.name} has used its ${max} ${what} per minute; retry in ${resetSeconds} s`,
      resetSeconds,
    );
  };

  /** Counts `cost` units for the request's key: the plugin's counter for one, the weighted script for more. */
  async function spend(request: FastifyRequest, reply: FastifyReply, cost: number): Promise<void> {
    const max = effectiveLimit(request, policy, fallback);
    const keyId = subject.of(request);
    if (max === 0 || keyId === undefined) return;
    const resetsAt = overBudget.get(keyId);
    if (resetsAt !== undefined) {
      if (resetsAt > Date.now()) throw exceeded(reply, max, Math.ceil((resetsAt - Date.now()) / 1000));
      overBudget.delete(keyId);
    }
    const limited = cost <= 1 ? check(request) : weighted(keyId, cost, max);
    const counted = limited.then((limit) => {
      // Not counted: with Redis unreachable the limiter lets the request go (skipOnError) with a
      // zero window, and there is no budget to report.
      if (limit.isAllowed || limit.ttl <= 0) return;
      if (limit.isExceeded) {
        overBudget.set(keyId, Date.now() + limit.ttl);
        throw exceeded(reply, limit.max, limit.ttlInSeconds);
      }
      setHeaders(reply, policy, limit.max, limit.remaining, limit.ttlInSeconds);
    });
    // A request that fails validation never awaits its count: keep that rejection handled.
    counted.catch(() => undefined);
    request.rateBudget = counted;
  }

  /** The plugin's answer for a count of `cost` on the plugin's own counter (same key, same window). */
  async function weighted(keyId: string, cost: number, max: number) {
    try {
      const [current = 0, ttl = 0] = replyOf(
        await options.redis.eval(
          WEIGHTED_COUNT,
          1,
          `${options.namespace}${policy}:${keyId}`,
          WINDOW_SECONDS * 1000,
          cost,
        ),
        NUMBERS,
      );
      return {
        isAllowed: false,
        max,
        remaining: Math.max(0, max - current),
        ttl,
        ttlInSeconds: Math.ceil(ttl / 1000),
        isExceeded: current > max,
      };
    } catch {
      // As the plugin's skipOnError: Redis unreachable, the request goes uncounted.
      return { isAllowed: false, max, remaining: max, ttl: 0, ttlInSeconds: 0, isExceeded: false };
    }
  }

  return {
    count: (request, reply) => spend(request, reply, 1),
    countBy: (cost) => (request, reply) => spend(request, reply, cost(request)),
    async mutate(request, _reply, operation) {
      await request.rateBudget;
      return operation();
    },
    async run(request, _reply, operation) {
      // Both settle before the answer: a fast failure (a 404 read) still carries the budget's
      // headers, and a key over budget gets its 429 whatever the operation did.
      const [budget, result] = await Promise.allSettled([request.rateBudget, operation()]);
      if (budget.status === 'rejected') throw budget.reason;
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    },
  };
}

/** Routes' limits when none is configured: the operation runs as is. */
export const UNLIMITED: RouteRateLimit = {
  count: async () => undefined,
  countBy: () => async () => undefined,
  run: (_request, _reply, operation) => operation(),
  mutate: (_request, _reply, operation) => operation(),
};
