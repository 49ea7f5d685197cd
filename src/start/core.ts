import type { QueueEvents } from 'bullmq';
import type { Logger } from 'pino';
import { createEmbedder, type Embedder } from '../embedding/embedder.ts';
import { relevanceFloors } from '../embedding/model-floors.ts';
import { createElasticsearchEngine, type ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import type { Config } from '../internal/config.ts';
import type { WritePacing } from '../internal/write-pacing.ts';
import { ServiceUnavailableError } from '../internal/errors.ts';
import { templatesDir } from '../internal/paths.ts';
import { createProducer, createQueueEvents, type Producer } from '../queues/registry.ts';
import { createFollowersMirror, type FollowersMirror } from '../services/accounts/followers-mirror.ts';
import { createIntakeFailures, type IntakeFailures } from '../services/intake/failures.ts';
import { createIntakeService, type IntakeService } from '../services/intake/intake-service.ts';
import { createCachedKeyStore } from '../services/keys/key-cache.ts';
import { createKeyService, type KeyService } from '../services/keys/key-service.ts';
import { createKeyStore, revocationChannel } from '../services/keys/key-store.ts';
import { createHolderService, type HolderService } from '../services/keys/holder-service.ts';
import { createHolderStore } from '../services/keys/holder-store.ts';
import { createSignInAttempts } from '../services/keys/sign-in-attempts.ts';
import type { Connections } from './connections.ts';
import { createRedisVisibilityEpoch } from './visibility-epoch.ts';

/**
 * The parts that several entry points build the same way. Each takes only the configuration and
 * connections it uses; entry points compose them (src/start/api.ts, worker.ts, the CLI commands).
 */

/** Something that must be closed when its process stops. */
export interface Closable {
  close(): Promise<void>;
}

/** The engine adapter, with the deployment's shared visibility epoch. */
/** The accounts' current followers as posts render them: mirrored in Redis, read through to the engine. */
export function openFollowersMirror(
  config: Config,
  connections: Connections,
  engine: Pick<ElasticsearchEngine, 'reads'>,
): FollowersMirror {
  return createFollowersMirror({ redis: connections.redis(), prefix: config.REDIS_PREFIX, reads: engine.reads });
}

export function openEngine(
  config: Config,
  connections: Connections,
  options: { writePacing?: WritePacing } = {},
): ElasticsearchEngine {
  const floors = relevanceFloors(config);
  return createElasticsearchEngine({
    ...options,
    client: connections.elasticsearch(),
    indexPrefix: config.INDEX_PREFIX,
    templatesDir: templatesDir(),
    visibility: createRedisVisibilityEpoch({ redis: connections.redis(), prefix: config.REDIS_PREFIX }),
    snapshotMaxAgeMs: config.SEARCH_SNAPSHOT_MAX_AGE_MS,
    // The configured floors, else the model's (model-floors.ts).
    similarityFloor: floors.similarity,
    ...(floors.unmatched !== undefined && { unmatchedFloor: floors.unmatched }),
    ...(floors.sentence !== undefined && { sentenceFloor: floors.sentence }),
    relatedFloor: floors.related ?? null,
    vectorFeedback: config.SEARCH_VECTOR_FEEDBACK,
    queryTerms: config.SEARCH_QUERY_TERMS === 'on',
    layout: {
      shards: config.INDEX_SHARDS,
      replicas: config.INDEX_REPLICAS,
      refreshInterval: config.INDEX_REFRESH_INTERVAL,
    },
    requestTimeoutMs: config.ELASTICSEARCH_TIMEOUT_MS,
    metricHistory: config.METRIC_HISTORY === 'on',
    historyRetentionDays: config.METRIC_HISTORY_RETENTION_DAYS,
  });
}

/** The embedder (its status says `off` when no model is configured); the model loads on first use. */
export function openEmbedder(config: Config, logger?: Pick<Logger, 'warn' | 'info'>): Embedder {
  return createEmbedder(config, logger);
}

/**
 * The key service. `cached`: API nodes trust a recently verified key for KEY_CACHE_TTL_MS and hear
 * revocations over Pub/Sub, and keep accepting it for KEY_CACHE_STALE_IF_ERROR_MS while Redis is
 * unreachable; commands read Redis each time.
 */
export function openKeys(
  config: Config,
  connections: Connections,
  options: { cached: boolean },
): KeyService & Closable {
  const prefix = `${config.REDIS_PREFIX}:apikeys`;
  const store = createKeyStore({ redis: connections.redis(), prefix });
  const cached =
    options.cached && config.KEY_CACHE_TTL_MS > 0
      ? createCachedKeyStore({
          store,
          channel: revocationChannel(prefix),
          ttlMs: config.KEY_CACHE_TTL_MS,
          staleIfErrorMs: config.KEY_CACHE_STALE_IF_ERROR_MS,
          subscriber: () => connections.blockingRedis('key revocation listener'),
        })
      : null;
  return Object.assign(createKeyService({ store: cached ?? store, holders: openHolders(config, connections) }), {
    async close() {
      cached?.close();
    },
  });
}

/** Account holders (the dashboard's accounts): sign-up, sign-in, invitations; all in Redis. */
export function openHolders(config: Config, connections: Connections): HolderService {
  const prefix = `${config.REDIS_PREFIX}:holders`;
  return createHolderService({
    store: createHolderStore({ redis: connections.redis(), prefix }),
    attempts: createSignInAttempts({
      redis: connections.redis(),
      prefix,
      limits: {
        perAccount: config.SIGNIN_MAX_FAILURES_PER_ACCOUNT,
        perAddress: config.SIGNIN_MAX_FAILURES_PER_ADDRESS,
      },
    }),
    signUpMode: config.DASHBOARD_SIGNUP,
  });
}

/** The intake: the observations producer, and a queue-events listener opened on the first wait. */
export function openIntake(
  config: Config,
  connections: Connections,
): { intake: IntakeService; queue: Producer<'observations'> } & Closable {
  const queues = { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX };
  const queue = createProducer('observations', queues);
  let events: QueueEvents | undefined;
  let later: { embeddings: Producer<'embeddings'>; followUps: Producer<'follow-ups'> } | undefined;
  const intake = createIntakeService({
    queue,
    laterQueues: () =>
      (later ??= { embeddings: createProducer('embeddings', queues), followUps: createProducer('follow-ups', queues) }),
    waitTimeoutMs: config.INTAKE_WAIT_TIMEOUT_MS,
    maxQueuedObservations: config.INTAKE_MAX_QUEUED_OBSERVATIONS,
    queueEvents: async () => {
      events ??= createQueueEvents('observations', { ...queues, connection: connections.queueRedis('intake wait') });
      // The listener's connection waits for Redis forever; a request must not.
      await within(events.waitUntilReady(), REDIS_WAIT_MS).catch((cause) => {
        throw new ServiceUnavailableError('The intake queue is unavailable; retry shortly.', { cause });
      });
      return events;
    },
  });
  return {
    intake,
    queue,
    async close() {
      // Closing politely needs Redis. Without it there is nothing to wait for: the process's
      // connections are disconnected after (Connections.close).
      if (!connections.redisUp()) return;
      await within(
        Promise.all([events?.close(), queue.close(), later?.embeddings.close(), later?.followUps.close()]),
        REDIS_WAIT_MS,
      ).catch(() => undefined);
    },
  };
}

/** Failed observation jobs, for operators (`social-search intake failures | retry`). */
export function openIntakeFailures(config: Config, connections: Connections): IntakeFailures & Closable {
  const queue = createProducer('observations', {
    connection: connections.producerRedis(),
    prefix: config.REDIS_PREFIX,
  });
  return Object.assign(createIntakeFailures({ queue }), {
    async close() {
      await within(queue.close(), REDIS_WAIT_MS).catch(() => undefined);
    },
  });
}

/** How long a request or a shutdown step waits on Redis before giving up (the command time-out). */
const REDIS_WAIT_MS = 2000;

/** `promise`, or a rejection after `ms`. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
