import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { EmbeddingWork } from '../services/intake/record-embeddings.ts';

/** Name of the BullMQ queue that carries records to (re-)embed. */
export const EMBEDDINGS_QUEUE = 'embeddings';

/** One job: the records one observations job left without a current vector. */
export type EmbeddingJob = EmbeddingWork;

/**
 * Embedding jobs retry like observation jobs (a lost vector only degrades ranking, but an outage
 * must not lose the work); the work is idempotent: already current records are skipped.
 */
export const EMBEDDING_JOB_OPTIONS: JobsOptions = {
  attempts: 80,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: false,
};

/** The queue as the observations worker fills it. */
export function createEmbeddingQueue(deps: { connection: ConnectionOptions; prefix: string }): Queue<EmbeddingJob, number> {
  return new Queue<EmbeddingJob, number>(EMBEDDINGS_QUEUE, {
    connection: deps.connection,
    prefix: deps.prefix,
    defaultJobOptions: EMBEDDING_JOB_OPTIONS,
  });
}
