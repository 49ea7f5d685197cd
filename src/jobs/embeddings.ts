import type { Logger } from 'pino';
import type { JobHandler } from '../queues/consumers.ts';
import type { RecordEmbeddings } from '../services/intake/record-embeddings.ts';

/**
 * The handler of the `embeddings` queue: one job is the records one observations job left without
 * a current vector. Records already current are skipped, so a retry redoes only the rest; a
 * worker that stops mid-job postpones it between two slices of posts (`job.stopping`).
 */
export function embeddingsJob(deps: {
  records: Pick<RecordEmbeddings, 'embed'>;
  logger: Pick<Logger, 'debug'>;
}): JobHandler<'embeddings'> {
  return async (payload, job) => {
    const started = performance.now();
    const written = await deps.records.embed(payload, { retry: job.isRetry, stopping: job.stopping });
    deps.logger.debug({ job: job.id, ms: Math.round(performance.now() - started), written }, 'records embedded');
    return written;
  };
}
