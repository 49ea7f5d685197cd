import { Client } from '@elastic/elasticsearch';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../internal/config.ts';

/**
 * The connections of one process, opened on first use: a command that only touches Redis (`keys
 * list`) never opens an Elasticsearch client, and the reverse. Connections recover by themselves
 * when a service returns; meanwhile requests answer 503.
 */
export interface Connections {
  /** The Elasticsearch client. */
  elasticsearch(): Client;
  /** The fail-fast Redis connection for request-path commands. */
  redis(): Redis;
  /** A new Redis connection for blocking commands (BullMQ workers, queue events, Pub/Sub). */
  blockingRedis(purpose: string): Redis;
  /**
   * Waits (bounded) for the fail-fast Redis connection, so the first command does not race the
   * connect. Resolves false on time-out: the process then runs degraded (503s) until Redis is back.
   */
  redisReady(timeoutMs?: number): Promise<boolean>;
  /** Closes every connection opened so far. */
  close(): Promise<void>;
}

type Log = Pick<Logger, 'warn' | 'info'>;

/** Opens connections lazily. */
export function openConnections(config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_TIMEOUT_MS' | 'REDIS_URL'>, logger?: Log): Connections {
  let es: Client | undefined;
  let redis: Redis | undefined;
  const blocking: Redis[] = [];
  const commandRedis = () => {
    if (!redis) {
      redis = createRedis(config.REDIS_URL, 'command');
      watchConnection(redis, 'Redis', logger);
    }
    return redis;
  };
  return {
    elasticsearch: () => (es ??= createElasticsearchClient(config)),
    redis: commandRedis,
    blockingRedis(purpose) {
      const connection = createRedis(config.REDIS_URL, 'blocking');
      watchConnection(connection, `Redis (${purpose})`, logger);
      blocking.push(connection);
      return connection;
    },
    redisReady: (timeoutMs = 5000) => whenReady(commandRedis(), timeoutMs),
    async close() {
      for (const connection of blocking) connection.disconnect();
      redis?.disconnect();
      await es?.close().catch(() => undefined);
    },
  };
}

/**
 * The Elasticsearch client. Bounded time-outs and one retry, so an unreachable engine turns into a
 * 503 within ELASTICSEARCH_TIMEOUT_MS instead of a hanging request.
 */
function createElasticsearchClient(config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_TIMEOUT_MS'>): Client {
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
function createRedis(url: string, purpose: 'command' | 'blocking'): Redis {
  const common = { connectTimeout: 2000, lazyConnect: false, retryStrategy: (times: number) => Math.min(times * 200, 2000) };
  return purpose === 'command'
    ? new Redis(url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 2000 })
    : new Redis(url, { ...common, maxRetriesPerRequest: null });
}

/** Resolves when the connection is ready, or after `timeoutMs` (the caller keeps going degraded). */
function whenReady(redis: Redis, timeoutMs: number): Promise<boolean> {
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

/**
 * Logs a connection's outage once (not on every reconnect attempt) and its recovery. ioredis
 * reconnects by itself.
 */
function watchConnection(connection: Redis, name: string, logger?: Log): void {
  let down = false;
  connection.on('error', (error: Error) => {
    if (!down) logger?.warn({ err: { message: error.message } }, `${name} unreachable; reconnecting`);
    down = true;
  });
  connection.on('ready', () => {
    if (down) logger?.info(`${name} reachable again`);
    down = false;
  });
}
