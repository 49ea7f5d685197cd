import { Worker } from 'bullmq';
import type { Logger } from 'pino';
import { createRedisKeyedLocks } from '../intake/keyed-locks.ts';
import { createObservationProcessor } from '../intake/processor.ts';
import {
  OBSERVATIONS_QUEUE,
  observationBackoff,
  type ObservationJob,
  type ObservationJobResult,
} from '../intake/queue.ts';
import { createObservationsJobHandler } from '../../workers/observations-job.ts';
import type { Runtime } from './runtime.ts';

/** Starts the BullMQ worker that indexes observations. */
export function startWorker(runtime: Runtime, logger: Logger): Worker<ObservationJob, ObservationJobResult> {
  const process = createObservationProcessor({
    engine: runtime.engine,
    locks: createRedisKeyedLocks({ redis: runtime.redis, prefix: runtime.config.REDIS_PREFIX }),
    visibility: runtime.visibility,
  });
  const worker = new Worker<ObservationJob, ObservationJobResult>(
    OBSERVATIONS_QUEUE,
    createObservationsJobHandler({ process, logger }),
    {
      connection: runtime.blockingRedis(),
      prefix: runtime.config.REDIS_PREFIX,
      concurrency: runtime.config.WORKER_CONCURRENCY,
      settings: { backoffStrategy: (attemptsMade: number) => observationBackoff(attemptsMade) },
    },
  );
  worker.on('failed', (job, error) =>
    logger.warn(
      { job: job?.id, request_id: job?.data.request_id, attempts: job?.attemptsMade, err: error },
      'indexing observations failed; the job will be retried',
    ),
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'worker connection error'));
  return worker;
}
