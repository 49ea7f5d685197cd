import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import type { DeliverySigner } from '../delivery/signer.ts';
import type { Config } from '../internal/config.ts';
import { createProducer, requestAlertPass, type Producer } from '../queues/registry.ts';
import { createAlertService, type AlertService } from '../services/alerts/alert-service.ts';
import { createAlertStore, type AlertStore } from '../services/alerts/alert-store.ts';
import { deliveryBatches, type QueuedDelivery } from '../services/alerts/delivery-batches.ts';
import { createMatchPass } from '../services/alerts/match-pass.ts';
import { createPendingChanges, type PendingChanges } from '../services/alerts/pending-changes.ts';
import { createSearchSet } from '../services/alerts/search-set.ts';
import { createSecretBox } from '../services/alerts/secret-box.ts';
import { createWebhookDelivery } from '../services/alerts/webhook-delivery.ts';
import { createWebhookSender } from '../services/alerts/webhook-sender.ts';
import { createWriteMatching } from '../services/alerts/write-matching.ts';
import type { Connections } from './connections.ts';
import { openFollowersMirror, type Closable } from './core.ts';

/** What deliveries say they are (`User-Agent`). */
const USER_AGENT = 'social-search-webhooks/1';

/** Queues deliveries: batched per endpoint (delivery-batches.ts), each job's id naming its events so a re-queue is a no-op. */
function deliveryQueue(queue: Producer<'webhooks'>) {
  return async (deliveries: QueuedDelivery[]) => {
    const jobs = deliveryBatches(deliveries);
    for (let i = 0; i < jobs.length; i += 100)
      await queue.addBulk(
        jobs.slice(i, i + 100).map(({ id, job }) => ({ name: 'deliver', data: job, opts: { jobId: id } })),
      );
  };
}

/** The query embedding of a saved search, when the service ranks with vectors and the model is ready. */
function queryEmbedder(config: Config, embedder: Embedder) {
  return async (text: string) =>
    config.SEARCH_RANKING !== 'lexical' && embedder.status().state === 'ready' ? embedder.embedQuery(text) : null;
}

/** How long the worker's alert store waits on a busy Redis before its job fails (the API's: 2 s). */
export const JOB_ALERT_STORE_TIMEOUT_MS = 10_000;

/**
 * The alert store of the worker's jobs (intake, passes, deliveries): on the job connection, waiting
 * out a busy Redis for {@link JOB_ALERT_STORE_TIMEOUT_MS} rather than failing the job, which
 * would be redone whole.
 */
export function openJobAlertStore(config: Pick<Config, 'REDIS_PREFIX'>, connections: Connections): AlertStore {
  return createAlertStore({
    redis: connections.jobRedis(),
    prefix: config.REDIS_PREFIX,
    timeoutMs: JOB_ALERT_STORE_TIMEOUT_MS,
  });
}

/** The alert resources of the API. */
export function openAlertService(
  config: Config,
  connections: Connections,
  embedder: Embedder,
): { service: AlertService } & Closable {
  const store = createAlertStore({ redis: connections.redis(), prefix: config.REDIS_PREFIX });
  const webhooks = createProducer('webhooks', { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX });
  const enqueue = deliveryQueue(webhooks);
  return {
    service: createAlertService({
      store,
      box: createSecretBox(config.SIGNING_SECRET),
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
      caps: { searches: config.SAVED_SEARCHES_PER_HOLDER, endpoints: config.WEBHOOK_ENDPOINTS_PER_HOLDER },
      embedQuery: queryEmbedder(config, embedder),
      enqueueDelivery: (delivery) => enqueue([delivery]),
    }),
    close: () => webhooks.close().catch(() => undefined),
  };
}

/** The worker's side of alerts: the recorder writers call, the matching pass and the delivery. */
export function openAlertWorker(
  config: Config,
  connections: Connections,
  parts: { engine: ElasticsearchEngine; embedder: Embedder; signer: DeliverySigner; logger: Logger },
): {
  store: AlertStore;
  changes: PendingChanges;
  pass: ReturnType<typeof createMatchPass>;
  deliver: ReturnType<typeof createWebhookDelivery>;
} & Closable {
  const queues = { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX };
  const store = openJobAlertStore(config, connections);
  const alertQueue = createProducer('alerts', queues);
  const webhooks = createProducer('webhooks', queues);
  const sender = createWebhookSender();
  const searches = createSearchSet({ store, embedQuery: queryEmbedder(config, parts.embedder) });
  const reads = openFollowersMirror(config, connections, parts.engine);
  return {
    store,
    changes: createPendingChanges({
      store,
      requestPass: () => requestAlertPass(alertQueue),
      matchWrites:
        config.ALERTS_MATCHING === 'write'
          ? createWriteMatching({ searches, engine: parts.engine.alerts, reads, signer: parts.signer })
          : undefined,
      logger: parts.logger,
    }),
    pass: createMatchPass({
      store,
      searches,
      engine: parts.engine.alerts,
      reads,
      signer: parts.signer,
      enqueueDeliveries: deliveryQueue(webhooks),
      logger: parts.logger,
    }),
    deliver: createWebhookDelivery({
      store,
      box: createSecretBox(config.SIGNING_SECRET),
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
      userAgent: USER_AGENT,
      send: sender.send,
      logger: parts.logger,
    }),
    async close() {
      await Promise.all([alertQueue.close(), webhooks.close(), sender.close()].map((p) => p.catch(() => undefined)));
    },
  };
}
