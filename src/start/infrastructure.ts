import { Client } from '@elastic/elasticsearch';
import { Redis } from 'ioredis';
import type { Config } from '../internal/config.ts';

/**
 * The Elasticsearch client. Bounded time-outs and one retry, so an unreachable engine turns into a
 * 503 within ELASTICSEARCH_TIMEOUT_MS instead of a hanging request.
 */
export function createElasticsearchClient(config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_TIMEOUT_MS'>): Client {
  return new Client({
    node: config.ELASTICSEARCH_URL,
    requestTimeout: config.ELASTICSEARCH_TIMEOUT_MS,
    maxRetries: 1,
    sniffOnStart: false,
    compression: false,
  });
}

/**
 * A Redis connection. `command` connections fail fast while Redis is down (no offline queue, one
 * retry), so requests answer 503 promptly; `blocking` connections are what BullMQ workers and
 * queue-event listeners require (they wait and reconnect forever).
 */
export function createRedis(url: string, purpose: 'command' | 'blocking'): Redis {
  const common = { connectTimeout: 2000, lazyConnect: false, retryStrategy: (times: number) => Math.min(times * 200, 2000) };
  return purpose === 'command'
    ? new Redis(url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 2000 })
    : new Redis(url, { ...common, maxRetriesPerRequest: null });
}

/** Resolves when the connection is ready, or after `timeoutMs` (the caller keeps going degraded). */
export function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
