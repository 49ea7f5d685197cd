import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { ObservationProcessor } from '../src/services/intake/processor.ts';
import type { ObservationJob, ObservationJobResult } from '../src/queues/observations.ts';

/**
 * The BullMQ handler of the `observations` queue: one job is one chunk of validated observations
 * from one intake request. A throw makes BullMQ retry the job with back-off; merges are
 * idempotent, so a retried job that partly succeeded before is safe to apply again.
 */
export function createObservationsJobHandler(deps: { process: ObservationProcessor; logger: Logger }) {
  return async (job: Job<ObservationJob, ObservationJobResult>): Promise<ObservationJobResult> => {
    const started = performance.now();
    const result = await deps.process(job.data.observations, {
      refresh: job.data.refresh,
      // A job re-run after its worker died (stalled) has no failed attempt, but may have written.
      retry: job.attemptsMade > 0 || job.attemptsStarted > 1,
      embedLater: job.data.embed_later === true,
    });
    deps.logger.debug(
      { job: job.id, request_id: job.data.request_id, ms: Math.round(performance.now() - started), ...result },
      'observations indexed',
    );
    return result;
  };
}
