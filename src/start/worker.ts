import { Worker } from 'bullmq';
import type { Logger } from 'pino';
import { createEmbeddingQueue, EMBEDDINGS_QUEUE, type EmbeddingJob } from '../queues/embeddings.ts';
import { createRedisKeyedLocks } from '../services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../services/intake/processor.ts';
import {
  OBSERVATIONS_QUEUE,
  observationBackoff,
  type ObservationJob,
  type ObservationJobResult,
} from '../queues/observations.ts';
import { createRecordEmbeddings } from '../services/intake/record-embeddings.ts';
import { createObservationsJobHandler } from '../../workers/observations-job.ts';
import { createEmbeddingsJobHandler } from '../../workers/embeddings-job.ts';
import { resumeAbandonedPause } from '../services/indices/rebuild.ts';
import type { Runtime } from './runtime.ts';

/** The running workers of one process. */
export interface WorkerHandle {
  /** Stops taking jobs, lets running ones finish, then closes the queues. */
  close(): Promise<void>;
}

/**
 * Starts the BullMQ workers: `observations` (indexing, enrichment, derived metrics) and, with
 * embeddings on, `embeddings` (vectors of records whose text changed).
 */
export function startWorker(runtime: Runtime, logger: Logger): WorkerHandle {
  const { config } = runtime;
  const embedder = runtime.embedder();
  const embeddingsOn = embedder.status().state !== 'off';
  const records = embeddingsOn
    ? createRecordEmbeddings({
        engine: runtime.engine,
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
  const embeddingQueue = records ? createEmbeddingQueue({ connection: runtime.redis, prefix: config.REDIS_PREFIX }) : null;
  embeddingQueue?.on('error', () => undefined);

  const process = createObservationProcessor({
    engine: runtime.engine,
    locks: createRedisKeyedLocks({ redis: runtime.redis, prefix: config.REDIS_PREFIX }),
    visibility: runtime.visibility,
    ...(records && embeddingQueue
      ? { embeddings: { records, logger, enqueue: async (work) => void (await embeddingQueue.add('embed', work)) } }
      : {}),
  });
  const settings = { backoffStrategy: (attemptsMade: number) => observationBackoff(attemptsMade) };
  const observations = new Worker<ObservationJob, ObservationJobResult>(
    OBSERVATIONS_QUEUE,
    createObservationsJobHandler({ process, logger }),
    { connection: runtime.blockingRedis(), prefix: config.REDIS_PREFIX, concurrency: config.WORKER_CONCURRENCY, settings },
  );
  watch(observations, logger, 'indexing observations');

  // One model thread does the inference; two jobs in flight overlap one's engine I/O with the other's inference.
  const embeddings = records
    ? new Worker<EmbeddingJob, number>(EMBEDDINGS_QUEUE, createEmbeddingsJobHandler({ records, logger }), {
        connection: runtime.blockingRedis(),
        prefix: config.REDIS_PREFIX,
        concurrency: 2,
        settings,
      })
    : null;
  if (embeddings) watch(embeddings, logger, 'embedding records');
  resumeAbandonedPause(runtime, logger).catch((error: unknown) =>
    logger.warn({ err: error }, 'could not check whether an interrupted rebuild left the queues paused'),
  );

  return {
    async close() {
      await Promise.all([observations.close(), embeddings?.close()]);
      await embeddingQueue?.close().catch(() => undefined);
    },
  };
}

function watch(worker: Worker, logger: Logger, what: string): void {
  worker.on('failed', (job, error) =>
    logger.warn(
      { job: job?.id, queue: worker.name, request_id: job?.data.request_id, attempts: job?.attemptsMade, err: error },
      `${what} failed; the job will be retried`,
    ),
  );
  worker.on('error', (error) => logger.warn({ err: error, queue: worker.name }, 'worker connection error'));
}
