import type { Client } from '@elastic/elasticsearch';
import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createAccountService, type AccountService } from '../services/accounts/account-service.ts';
import type { Config } from '../internal/config.ts';
import { createDeliverySigner, type DeliverySigner } from '../delivery/signer.ts';
import type { Engine } from '../engine/engine.ts';
import { createElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import { createIndexAdmin, type IndexAdmin } from '../engine/elasticsearch/index-admin.ts';
import { ServiceUnavailableError } from '../internal/errors.ts';
import { createIntakeService, type IntakeService } from '../services/intake/intake-service.ts';
import { createObservationQueue, createObservationQueueEvents, type ObservationJob, type ObservationJobResult } from '../queues/observations.ts';
import { createKeyService, type KeyService } from '../services/keys/key-service.ts';
import { createCachedKeyStore, type CachedKeyStore } from '../services/keys/key-cache.ts';
import { createKeyStore, revocationChannel } from '../services/keys/key-store.ts';
import { templatesDir } from '../internal/paths.ts';
import { createAccountSearchService, createPostSearchService, type AccountSearchService, type PostSearchService } from '../services/search/search-service.ts';
import { createPostService, type PostService } from '../services/posts/post-service.ts';
import { createCursorCodec } from '../query/cursor-codec.ts';
import { createSearchVisibility, type SearchVisibility } from '../services/search/visibility.ts';
import { createEmbedder, type Embedder } from '../embedding/embedder.ts';
import { createElasticsearchClient, createRedis, redisReady } from './infrastructure.ts';

/** The objects every entry point (API, worker, CLI) is built from, created once per process. */
export interface Runtime {
  config: Config;
  es: Client;
  /** Fail-fast Redis connection for request-path commands. */
  redis: Redis;
  engine: Engine;
  /** Advanced when writes are made visible on demand; lets search nodes share snapshots. */
  visibility: SearchVisibility;
  indexAdmin: IndexAdmin;
  keys: KeyService;
  queue: Queue<ObservationJob, ObservationJobResult>;
  signer: DeliverySigner;
  posts: PostService;
  postSearch: PostSearchService;
  accounts: AccountService;
  accountSearch: AccountSearchService;
  /** Intake; creates the queue-events listener on first wait. */
  intake: IntakeService;
  /**
   * The embedder (created on first use: only the API and the worker load the model). Its status
   * says `off` when no model is configured.
   */
  embedder(): Embedder;
  /** A Redis connection for BullMQ's blocking commands (created on demand). */
  blockingRedis(): Redis;
  /**
   * Waits (bounded) for the fail-fast Redis connection, so the first command does not race the
   * connect. Resolves false on time-out: the process then runs degraded (503s) until Redis is back.
   */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Logs a connection's outage once (not on every reconnect attempt) and its recovery. ioredis
 * reconnects by itself; meanwhile requests answer 503.
 */
function watchConnection(connection: Redis, name: string, logger?: Pick<Logger, 'warn' | 'info'>): void {
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

/** Creates the runtime. Connections open lazily and recover by themselves when a service returns. */
export function createRuntime(config: Config, logger?: Pick<Logger, 'warn' | 'info'>): Runtime {
  const es = createElasticsearchClient(config);
  const redis = createRedis(config.REDIS_URL, 'command');
  watchConnection(redis, 'Redis', logger);
  const blocking: Redis[] = [];
  const blockingRedis = () => {
    const connection = createRedis(config.REDIS_URL, 'blocking');
    watchConnection(connection, 'Redis (blocking connection)', logger);
    blocking.push(connection);
    return connection;
  };
  const engine = createElasticsearchEngine({
    client: es,
    indexPrefix: config.INDEX_PREFIX,
    snapshotMaxAgeMs: config.SEARCH_SNAPSHOT_MAX_AGE_MS,
  });
  const visibility = createSearchVisibility({ redis, prefix: config.REDIS_PREFIX });
  const queue = createObservationQueue({ connection: redis, prefix: config.REDIS_PREFIX });
  queue.on('error', () => undefined);
  let queueEvents: QueueEvents | undefined;
  const events = () => (queueEvents ??= createObservationQueueEvents({ connection: blockingRedis(), prefix: config.REDIS_PREFIX }));
  const signer = createDeliverySigner({
    baseUrl: config.PUBLIC_BASE_URL,
    secret: config.SIGNING_SECRET,
    ttlSeconds: config.DELIVERY_URL_TTL_SECONDS,
  });
  const intake = createIntakeService({
    queue,
    waitTimeoutMs: config.INTAKE_WAIT_TIMEOUT_MS,
    queueEvents: async () => {
      const queueEvents = events();
      await queueEvents.waitUntilReady().catch((cause) => {
        throw new ServiceUnavailableError('The intake queue is unavailable; retry shortly.', { cause });
      });
      return queueEvents;
    },
  });

  let embedder: Embedder | undefined;
  const getEmbedder = () => (embedder ??= createEmbedder(config, logger));

  const keyPrefix = `${config.REDIS_PREFIX}:apikeys`;
  const keyStore = createKeyStore({ redis, prefix: keyPrefix });
  const cachedKeys: CachedKeyStore | null =
    config.KEY_CACHE_TTL_MS > 0
      ? createCachedKeyStore({
          store: keyStore,
          channel: revocationChannel(keyPrefix),
          ttlMs: config.KEY_CACHE_TTL_MS,
          subscriber: () => {
            const connection = createRedis(config.REDIS_URL, 'blocking');
            watchConnection(connection, 'Redis (key revocation listener)', logger);
            return connection;
          },
        })
      : null;

  const searchDeps = {
    engine,
    signer,
    cursors: createCursorCodec({ secret: config.SIGNING_SECRET, ttlSeconds: config.CURSOR_TTL_SECONDS }),
    cursorTtlSeconds: config.CURSOR_TTL_SECONDS,
    visibility,
  };

  return {
    config,
    es,
    redis,
    engine,
    visibility,
    indexAdmin: createIndexAdmin({ client: es, indexPrefix: config.INDEX_PREFIX, templatesDir: templatesDir() }),
    keys: createKeyService({ store: cachedKeys ?? keyStore }),
    queue,
    signer,
    posts: createPostService({ engine, signer }),
    postSearch: createPostSearchService({
      ...searchDeps,
      ranking: { mode: config.SEARCH_RANKING, embedder: getEmbedder, ...(logger ? { logger } : {}) },
    }),
    embedder: getEmbedder,
    accountSearch: createAccountSearchService(searchDeps),
    accounts: createAccountService({ engine, signer }),
    intake,
    blockingRedis,
    ready: (timeoutMs = 5000) => redisReady(redis, timeoutMs),
    async close() {
      await queueEvents?.close().catch(() => undefined);
      await queue.close().catch(() => undefined);
      for (const connection of blocking) connection.disconnect();
      cachedKeys?.close();
      redis.disconnect();
      await es.close().catch(() => undefined);
      await embedder?.close().catch(() => undefined);
    },
  };
}
