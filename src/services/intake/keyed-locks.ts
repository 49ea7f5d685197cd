import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceUnavailableError } from '../../internal/errors.ts';

/** Mutual exclusion per key across every worker process. */
export interface KeyedLocks {
  /**
   * Runs `fn` on subsets of `keys`, each while holding the locks of that subset, until every key
   * has been processed. Never holds a lock while waiting for another, so it cannot deadlock.
   */
  forEachLocked(keys: readonly string[], fn: (locked: string[]) => Promise<void>): Promise<void>;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/**
 * Redis locks (`SET NX PX` with a token, released by compare-and-delete). They live briefly and
 * are extended while their holder works: a lock whose holder died, or whose release was lost in a
 * Redis outage, frees itself within `ttlMs` instead of stalling every batch of those authors.
 */
export function createRedisKeyedLocks(deps: {
  redis: Redis;
  prefix: string;
  ttlMs?: number;
  maxWaitMs?: number;
}): KeyedLocks {
  const ttl = deps.ttlMs ?? 15_000;
  const maxWait = deps.maxWaitMs ?? 120_000;
  const name = (key: string) => `${deps.prefix}:lock:${key}`;
  return {
    async forEachLocked(keys, fn) {
      let remaining = [...new Set(keys)];
      const started = Date.now();
      while (remaining.length > 0) {
        const token = randomUUID();
        const pipeline = deps.redis.pipeline();
        for (const key of remaining) pipeline.set(name(key), token, 'PX', ttl, 'NX');
        const results = (await pipeline.exec()) ?? [];
        const locked = remaining.filter((_, i) => results[i]?.[1] === 'OK');
        remaining = remaining.filter((_, i) => results[i]?.[1] !== 'OK');
        if (locked.length > 0) {
          const heartbeat = setInterval(() => {
            const extend = deps.redis.pipeline();
            for (const key of locked) extend.eval(EXTEND, 1, name(key), token, ttl);
            extend.exec().catch(() => undefined);
          }, ttl / 3);
          heartbeat.unref();
          try {
            await fn(locked);
          } finally {
            clearInterval(heartbeat);
            const release = deps.redis.pipeline();
            for (const key of locked) release.eval(RELEASE, 1, name(key), token);
            await release.exec();
          }
        } else {
          if (Date.now() - started > maxWait) {
            throw new ServiceUnavailableError(`timed out waiting for ${remaining.length} locks`);
          }
          await sleep(20 + Math.random() * 80);
        }
      }
    },
  };
}
