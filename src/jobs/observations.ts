import type { Logger } from 'pino';
import type { JobHandler } from '../queues/consumers.ts';
import type { ObservationProcessor } from '../services/intake/processor.ts';

/**
 * The handler of the `observations` queue: one job is one chunk of validated observations from
 * one intake request. A throw makes BullMQ retry the job with back-off; merges are idempotent,
 * so a retried job that partly succeeded before is safe to apply again.
 */
export function observationsJob(deps: {
  process: ObservationProcessor;
  logger: Pick<Logger, 'debug'>;
}): JobHandler<'observations'> {
  return async (payload, job) => {
    const started = performance.now();
    const result = await deps.process(payload.observations, {
      refresh: payload.refresh !== false,
      ...(payload.refresh === 'all' ? { publishAll: true } : {}),
      retry: job.isRetry,
      embedLater: payload.embed_later === true,
      // Unique across the queue's life (ids restart if an operator obliterates the queue).
      ...(job.id !== undefined ? { job: `${job.id}.${job.queuedAt}` } : {}),
    });
    deps.logger.debug(
      { job: job.id, request_id: payload.request_id, ms: Math.round(performance.now() - started), ...result },
      'observations indexed',
    );
    return result;
  };
}
