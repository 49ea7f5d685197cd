import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimitExceededError } from '../../internal/errors.ts';

/** The search rate limit: per API key, one fixed window of a minute, shared by every API node. */
export interface SearchRateLimitOptions {
  /** Searches per key per minute; 0 turns the limit off. */
  searchesPerMinute: number;
  /** Where the counters live, so that every API node counts against the same budget. */
  redis: Redis;
  /** Prefix of the counters' Redis keys. */
  namespace: string;
}

/** Runs a search under the key's rate limit. */
export type SearchLimiter = <T>(request: FastifyRequest, reply: FastifyReply, search: () => Promise<T>) => Promise<T>;

/** The search rate limit of a route: the hook that counts, and the runner that honours the count. */
export interface SearchRateLimit {
  /**
   * A `preValidation` hook: counts the request before its body is validated, so an invalid
   * search spends budget like a valid one, and answers a key known to be over budget at once.
   * The count is not awaited here: {@link run} awaits it alongside the search.
   */
  count: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  run: SearchLimiter;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The pending search-budget count of this request (see SearchRateLimit.count). */
    searchBudget?: Promise<void>;
  }
}

/**
 * Registers @fastify/rate-limit (Redis store) and returns the limiter the search routes run their
 * work under. It counts after authentication, so the budget is the verified key's: counting on a
 * key id read from an unverified header would let anyone spend another customer's budget.
 *
 * The Redis count runs alongside the search rather than before it, so the limit adds no round
 * trip to a search within budget; a search found over budget is answered 429 and its result
 * dropped. The node then remembers the key as over budget until the window resets and answers
 * its next searches 429 at once, with no engine work: a client hammering past its limit costs one
 * search per node, not one per request.
 *
 * Every search response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
 * (seconds), the IETF draft's fields; a 429 adds `Retry-After`. If Redis cannot be reached the
 * search goes through (the limit is protection, not billing).
 */
export async function registerSearchRateLimit(app: FastifyInstance, options: SearchRateLimitOptions): Promise<SearchRateLimit | null> {
  if (options.searchesPerMinute === 0) return null;
  await app.register(rateLimit, {
    global: false,
    max: options.searchesPerMinute,
    timeWindow: 60_000,
    redis: options.redis,
    nameSpace: options.namespace,
    skipOnError: true,
    keyGenerator: (request) => request.apiKey?.id ?? 'anonymous',
  });
  const check = app.createRateLimit();
  // Key id → when its window resets (epoch ms), for keys this node has seen over budget.
  const overBudget = new LRUCache<string, number>({ max: 10_000 });
  const exceeded = (reply: FastifyReply, max: number, resetSeconds: number) => {
    reply.header('ratelimit-limit', max);
    reply.header('ratelimit-remaining', 0);
    reply.header('ratelimit-reset', resetSeconds);
    return new RateLimitExceededError(`this API key has used its ${max} searches per minute; retry in ${resetSeconds} s`, resetSeconds);
  };

  return {
    async count(request, reply) {
      const keyId = request.apiKey?.id ?? 'anonymous';
      const resetsAt = overBudget.get(keyId);
      if (resetsAt !== undefined) {
        if (resetsAt > Date.now()) throw exceeded(reply, options.searchesPerMinute, Math.ceil((resetsAt - Date.now()) / 1000));
        overBudget.delete(keyId);
      }
      const counted = check(request).then((limit) => {
        // Allowed outright, or not counted: with Redis unreachable the limiter lets the search go
        // (skipOnError) with a zero window, and there is no budget to report.
        if (limit.isAllowed || limit.ttl <= 0) return;
        if (limit.isExceeded) {
          overBudget.set(keyId, Date.now() + limit.ttl);
          throw exceeded(reply, limit.max, limit.ttlInSeconds);
        }
        reply.header('ratelimit-limit', limit.max);
        reply.header('ratelimit-remaining', limit.remaining);
        reply.header('ratelimit-reset', limit.ttlInSeconds);
      });
      // A request that fails validation never awaits its count: keep that rejection handled.
      counted.catch(() => undefined);
      request.searchBudget = counted;
    },
    async run(request, _reply, search) {
      // A rejection of either ends the request; Promise.all keeps the other's later failure handled.
      const [, result] = await Promise.all([request.searchBudget, search()]);
      return result;
    },
  };
}
