import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimitExceededError } from '../../errors.ts';

/** The search rate limit: per API key, one fixed window of a minute, shared by every API node. */
export interface SearchRateLimitOptions {
  /** Searches per key per minute; 0 turns the limit off. */
  searchesPerMinute: number;
  /** Where the counters live, so that every API node counts against the same budget. */
  redis: Redis;
  /** Prefix of the counters' Redis keys. */
  namespace: string;
}

/**
 * Registers @fastify/rate-limit (Redis store) and returns the `preHandler` that enforces it on a
 * route. It runs after authentication, so the budget is the verified key's: counting on a key id
 * read from an unverified header would let anyone spend another customer's budget.
 *
 * Every limited response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
 * (seconds), the IETF draft's fields; a 429 adds `Retry-After`. If Redis cannot be reached the
 * request goes through (searches keep working; the limit is protection, not billing).
 */
export async function registerSearchRateLimit(app: FastifyInstance, options: SearchRateLimitOptions): Promise<preHandlerAsyncHookHandler | null> {
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
  return async (request, reply) => {
    const limit = await check(request);
    if (limit.isAllowed) return;
    reply.header('ratelimit-limit', limit.max);
    reply.header('ratelimit-remaining', limit.remaining);
    reply.header('ratelimit-reset', limit.ttlInSeconds);
    if (limit.isExceeded) {
      throw new RateLimitExceededError(
        `this API key has used its ${limit.max} searches per minute; retry in ${limit.ttlInSeconds} s`,
        limit.ttlInSeconds,
      );
    }
  };
}
