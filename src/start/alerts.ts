import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import type { MediaUrlSigner } from '../media/url-signer.ts';
import type { PostWriteRecorder } from '../domain/records.ts';
import type { Config } from '../internal/config.ts';
import { createProducer, requestAlertPass } from '../queues/registry.ts';
import { openAlertRedis, type AlertRedis } from '../services/alerts/alert-redis.ts';
import { createAlertService, type AlertService } from '../services/alerts/alert-service.ts';
import { startDeliveries } from '../services/alerts/deliveries.ts';
import { createDeliveryStore } from '../services/alerts/delivery-store.ts';
import { createEndpointStore } from '../services/alerts/endpoint-store.ts';
import { createEventStore } from '../services/alerts/event-store.ts';
import { createMatchWrites, createPostWriteRecorder, type MatchResult } from '../services/alerts/matching.ts';
import { createPendingStore } from '../services/alerts/pending-store.ts';
import { createRecoveryPass } from '../services/alerts/recovery-pass.ts';
import { createSearchSet } from '../services/alerts/search-set.ts';
import { createSearchStore } from '../services/alerts/search-store.ts';
import { createSecretBox } from '../services/alerts/secret-box.ts';
import { createWebhookDelivery } from '../services/alerts/webhook-delivery.ts';
import { createWebhookSender } from '../services/alerts/webhook-sender.ts';
import { createVolumeStore } from '../services/alerts/volume-store.ts';
import { createVolumeWatch, type CountBuckets } from '../services/alerts/volume.ts';
import { createPostCountsService } from '../services/search/counts-service.ts';
import { createReferences } from '../services/search/references.ts';
import type { Connections } from './connections.ts';
import { openFollowersMirror, type Closable } from './core.ts';

/** What deliveries say they are (`User-Agent`). */
const USER_AGENT = 'social-search-webhooks/1';

/** The query embedding of a saved search, when the service ranks with vectors and the model is ready. */
function queryEmbedder(config: Config, embedder: Embedder) {
  return async (text: string) =>
    config.SEARCH_RANKING !== 'lexical' && embedder.status().state === 'ready' ? embedder.embedQuery(text) : null;
}

/**
 * What a volume rule's baseline counts: the posts a post search returns by bucket, as
 * `POST /v1/social/posts/counts` counts them (the counts service itself, ranked as the API ranks).
 */
export function baselineCounter(
  config: Pick<Config, 'SEARCH_RANKING' | 'SEARCH_QUESTION_WEIGHTS' | 'CURSOR_TTL_SECONDS'>,
  engine: Pick<ElasticsearchEngine, 'counts' | 'reads'>,
  embedder: Embedder,
): CountBuckets {
  const counts = createPostCountsService({
    engine: engine.counts,
    references: createReferences({ reads: engine.reads, model: () => embedder.status().state }),
    keepAliveSeconds: config.CURSOR_TTL_SECONDS,
    ranking: { mode: config.SEARCH_RANKING, embedder, questionWeights: config.SEARCH_QUESTION_WEIGHTS === 'on' },
  });
  return async (search, window) => (await counts.countPosts(search, window)).buckets.map((b) => b.count);
}

/** How long the worker's alert stores wait on a busy Redis before its job fails (the API's: 2 s). */
export const JOB_ALERT_STORE_TIMEOUT_MS = 10_000;

/** The alert stores over one Redis connection. */
export function openAlertStores(config: Pick<Config, 'REDIS_PREFIX' | 'SAVED_SEARCH_EVENT_LIMIT'>, redis: AlertRedis) {
  const deliveries = createDeliveryStore(redis);
  return {
    endpoints: createEndpointStore(redis),
    searches: createSearchStore(redis),
    events: createEventStore(redis, { deliveries, limit: config.SAVED_SEARCH_EVENT_LIMIT }),
    volume: createVolumeStore(redis, { deliveries, limit: config.SAVED_SEARCH_EVENT_LIMIT }),
    pending: createPendingStore(redis),
    deliveries,
  };
}

/** The alert stores. */
export type AlertStores = ReturnType<typeof openAlertStores>;

/**
 * The alert stores of the worker's jobs (intake, passes, deliveries): on the job connection, waiting
 * out a busy Redis for {@link JOB_ALERT_STORE_TIMEOUT_MS} rather than failing the job, which
 * would be redone whole.
 */
export function openJobAlertStores(
  config: Pick<Config, 'REDIS_PREFIX' | 'SAVED_SEARCH_EVENT_LIMIT'>,
  connections: Connections,
): AlertStores {
  const redis = openAlertRedis({
    redis: connections.jobRedis(),
    prefix: config.REDIS_PREFIX,
    timeoutMs: JOB_ALERT_STORE_TIMEOUT_MS,
  });
  return openAlertStores(config, redis);
}

/** The alert resources of the API. */
export function openAlertService(
  config: Config,
  connections: Connections,
  embedder: Embedder,
): { service: AlertService; stores: AlertStores } {
  const stores = openAlertStores(config, openAlertRedis({ redis: connections.redis(), prefix: config.REDIS_PREFIX }));
  return {
    stores,
    service: createAlertService({
      ...stores,
      box: createSecretBox([config.SIGNING_SECRET, ...config.SIGNING_SECRET_PREVIOUS]),
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
      caps: { searches: config.SAVED_SEARCHES_PER_HOLDER, endpoints: config.WEBHOOK_ENDPOINTS_PER_HOLDER },
      embedQuery: queryEmbedder(config, embedder),
    }),
  };
}

/** The worker's side of alerts: the recorder writers call, the recovery pass and the deliveries. */
export function openAlertWorker(
  config: Config,
  connections: Connections,
  parts: { engine: ElasticsearchEngine; embedder: Embedder; signer: MediaUrlSigner; logger: Logger },
): {
  stores: AlertStores;
  changes: PostWriteRecorder;
  pass: (run: string) => Promise<MatchResult>;
  /** Starts sending webhooks (WEBHOOK_DELIVERIES=on); `close` stops it. */
  startDeliveries(): void;
} & Closable {
  const stores = openJobAlertStores(config, connections);
  const alertQueue = createProducer('alerts', { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX });
  const requestPass = () => requestAlertPass(alertQueue);
  const sender = createWebhookSender({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, userAgent: USER_AGENT });
  const searches = createSearchSet({
    store: stores.searches,
    embedQuery: queryEmbedder(config, parts.embedder),
    logger: parts.logger,
  });
  const matchWrites = createMatchWrites({
    searches,
    engine: parts.engine.alerts,
    reads: openFollowersMirror(config, connections, parts.engine),
    signer: parts.signer,
    events: stores.events,
    volume: createVolumeWatch({
      store: stores.volume,
      countBuckets: baselineCounter(config, parts.engine, parts.embedder),
      logger: parts.logger,
    }),
  });
  const deliver = createWebhookDelivery({
    endpoints: stores.endpoints,
    deliveries: stores.deliveries,
    events: stores.events,
    box: createSecretBox([config.SIGNING_SECRET, ...config.SIGNING_SECRET_PREVIOUS]),
    send: sender.send,
    logger: parts.logger,
  });
  let deliveries: { close(): Promise<void> } | null = null;
  return {
    stores,
    changes: createPostWriteRecorder({
      matchWrites,
      pending: stores.pending,
      searchCount: stores.searches.count,
      requestRecovery: requestPass,
      logger: parts.logger,
    }),
    pass: createRecoveryPass({ pending: stores.pending, reads: parts.engine.reads, matchWrites, requestPass }),
    startDeliveries() {
      deliveries ??= startDeliveries({ store: stores.deliveries, deliver, logger: parts.logger });
    },
    async close() {
      await deliveries?.close();
      await Promise.all([alertQueue.close(), sender.close()].map((p) => p.catch(() => undefined)));
    },
  };
}
