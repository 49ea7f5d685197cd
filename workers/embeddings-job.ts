import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { EmbeddingJob } from '../src/queues/embeddings.ts';
import type { RecordEmbeddings } from '../src/services/intake/record-embeddings.ts';

/**
 * The BullMQ handler of the `embeddings` queue: one job is the records one observations job left
 * without a current vector. Records already current are skipped, so a retry redoes only the rest.
 */
export function createEmbeddingsJobHandler(deps: { records: Pick<RecordEmbeddings, 'embed'>; logger: Logger }) {
  return async (job: Job<EmbeddingJob, number>): Promise<number> => {
    const started = performance.now();
    const written = await deps.records.embed({ posts: job.data.posts, accounts: job.data.accounts });
    deps.logger.debug({ job: job.id, ms: Math.round(performance.now() - started), written }, 'records embedded');
    return written;
  };
}
