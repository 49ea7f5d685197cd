import type { Logger } from 'pino';
import { embeddingsJob } from '../jobs/embeddings.ts';
import { followUpsJob } from '../jobs/follow-ups.ts';
import { maintenanceJob } from '../jobs/maintenance.ts';
import { observationsJob } from '../jobs/observations.ts';
import { alertsJob } from '../jobs/alerts.ts';
import { createMediaUrlSigner } from '../media/url-signer.ts';
import { openAlertWorker } from './alerts.ts';
import type { Embedder } from '../embedding/embedder.ts';
import type { ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import type { Config } from '../internal/config.ts';
import { isConnectionError, reasonOf } from '../internal/outages.ts';
import {
  createProducer,
  FOLLOW_UP_DELAY_MS,
  INDEX_WRITING_QUEUES,
  requestFollowUp,
  scheduleMaintenance,
} from '../queues/registry.ts';
import { startQueueConsumers, type JobHandlers } from '../queues/consumers.ts';
import { createHistoryRetention } from '../services/indices/history-retention.ts';
import { createIndexRebuilds } from '../services/indices/rebuild.ts';
import { createFollowUpBacklog } from '../services/intake/follow-up-backlog.ts';
import { createFollowUps } from '../services/intake/follow-ups.ts';
import { createRedisKeyedLocks } from '../services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../services/intake/processor.ts';
import { createRecordEmbeddings } from '../services/intake/record-embeddings.ts';
import { openBacklogRefresh } from './backlog-refresh.ts';
import type { Connections } from './connections.ts';
import { openFollowersMirror, within, type Closable } from './core.ts';

/**
 * Composes the worker process (`social-search worker`): the queue consumers of the registry's
 * queues with their job handlers: `observations` (indexing, enrichment), `follow-ups`
 * (fan-out and baselines of the batches nobody waits on), `alerts` (saved searches' recovery
 * pass), `maintenance` and, with embeddings on, `embeddings` (vectors of records whose text
 * changed); and the webhook deliveries (services/alerts/deliveries.ts). Shares
 * the engine and embedder the process owns; `close` stops taking jobs and lets running ones finish.
 * `started` settles once its start-up check has run: queues an interrupted index rebuild left
 * paused are resumed (a caller that pauses a queue itself does so after it).
 */
export function startWorkerProcess(
  config: Config,
  connections: Connections,
  parts: { engine: ElasticsearchEngine; embedder: Embedder; logger: Logger },
): Closable & { started: Promise<void> } {
  const { engine, embedder, logger } = parts;
  const queues = { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX };
  const embeddingsOn = embedder.status().state !== 'off';
  const signer = createMediaUrlSigner({
    baseUrl: config.PUBLIC_BASE_URL,
    secret: config.SIGNING_SECRET,
    ttlSeconds: config.DELIVERY_URL_TTL_SECONDS,
  });
  const alerts = openAlertWorker(config, connections, { engine, embedder, signer, logger });
  const records = embeddingsOn
    ? createRecordEmbeddings({
        store: engine.intake,
        changes: alerts.changes,
        embedder: {
          modelId: embedder.modelId,
          // Jobs that arrive while the model loads wait for it rather than fail.
          embedDocuments: async (texts) => {
            await embedder.ready();
            return embedder.embedDocuments(texts);
          },
        },
      })
    : null;
  const embeddingQueue = records ? createProducer('embeddings', queues) : null;
  const followUpQueue = createProducer('follow-ups', queues);
  const observationQueue = createProducer('observations', queues);
  const refresh = openBacklogRefresh(
    config,
    { observations: observationQueue, followUps: followUpQueue },
    engine.admin,
    logger,
  );
  const locks = createRedisKeyedLocks({ redis: connections.redis(), prefix: config.REDIS_PREFIX });
  const backlog = createFollowUpBacklog({
    redis: connections.redis(),
    prefix: config.REDIS_PREFIX,
    requestRun: () => requestFollowUp(followUpQueue, refresh?.followUpDelayMs(FOLLOW_UP_DELAY_MS)),
  });
  const processBatch = createObservationProcessor({
    store: engine.intake,
    locks,
    followUps: backlog,
    changes: alerts.changes,
    followers: openFollowersMirror(config, connections, engine),
    ...(records && embeddingQueue
      ? { embeddings: { records, logger, enqueue: async (work) => void (await embeddingQueue.add('embed', work)) } }
      : {}),
  });
  const handlers: JobHandlers = {
    observations: observationsJob({ process: processBatch, logger }),
    'follow-ups': followUpsJob({ backlog, followUps: createFollowUps({ store: engine.intake, locks }), logger }),
    ...(records ? { embeddings: embeddingsJob({ records, logger }) } : {}),
    maintenance: maintenanceJob({ retention: createHistoryRetention({ admin: engine.admin }), logger }),
    alerts: alertsJob({ pass: alerts.pass, logger }),
  };
  const consumers = startQueueConsumers(handlers, {
    connection: () => connections.queueRedis('queue worker'),
    prefix: config.REDIS_PREFIX,
    configuredConcurrency: config.WORKER_CONCURRENCY,
    logger,
  });
  if (config.WEBHOOK_DELIVERIES === 'on') alerts.startDeliveries();

  const maintenanceQueue = createProducer('maintenance', queues);
  scheduleMaintenance(maintenanceQueue).catch((error: unknown) =>
    logger.warn(
      isConnectionError(error) ? { reason: reasonOf(error) } : { err: error },
      'could not schedule the hourly maintenance (metric history retention); the next start tries again',
    ),
  );

  // A rebuild killed outright leaves the queues paused: resume them when none runs.
  const pausable = INDEX_WRITING_QUEUES.map((name) =>
    name === 'follow-ups'
      ? followUpQueue
      : name === 'observations'
        ? observationQueue
        : name === 'embeddings' && embeddingQueue
          ? embeddingQueue
          : createProducer(name, queues),
  );
  const started = createIndexRebuilds({
    admin: engine.admin,
    redis: connections.redis(),
    prefix: config.REDIS_PREFIX,
    queues: pausable,
    records: async () => records,
    logger,
  })
    .resumeAbandonedPause()
    .catch((error: unknown) =>
      // Redis down at start is already in the log, once; a stack only when something else went wrong.
      logger.warn(
        isConnectionError(error) ? { reason: reasonOf(error) } : { err: error },
        'could not check whether an interrupted rebuild left the queues paused',
      ),
    )
    .then(() => undefined);

  return {
    started,
    async close() {
      refresh?.close();
      // With Redis down a running job cannot report its end anyway: stop at once, and it runs
      // again as stalled when Redis is back (merges are idempotent).
      await consumers.close({ force: !connections.redisUp() });
      await within(
        Promise.all([...[...pausable, maintenanceQueue].map((q) => q.close().catch(() => undefined)), alerts.close()]),
        2000,
      ).catch(() => undefined);
    },
  };
}
