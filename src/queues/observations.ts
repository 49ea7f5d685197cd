import { Queue, QueueEvents, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Observation } from '../contract/observations.ts';

/** Name of the BullMQ queue that carries validated observations to the worker. */
export const OBSERVATIONS_QUEUE = 'observations';

/** Observations per job: large enough for efficient bulk writes, small enough to keep jobs light. */
export const OBSERVATIONS_PER_JOB = 500;

/** One job: a chunk of validated, normalized observations of one intake request. */
export interface ObservationJob {
  observations: Observation[];
  /** Make the results visible to search before completing (`?wait=true`). */
  refresh: boolean;
  /** Queue the embeddings even when refreshing (bulk loads that must not wait on the model). */
  embed_later?: boolean;
  request_id: string;
}

/** What a processed job reports. */
export interface ObservationJobResult {
  accounts_written: number;
  posts_written: number;
  fanned_out: number;
  baselines_updated: number;
  /** Records given vectors inline (waiting jobs only; others queue their embeddings). */
  embedded?: number;
}

/**
 * Jobs retry with capped exponential back-off (see the worker's backoff strategy) for about an
 * hour of outages; after that they stay in the failed set, where `social-search` operators can
 * retry them: an observation is never dropped.
 */
export const OBSERVATION_JOB_OPTIONS: JobsOptions = {
  attempts: 80,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: false,
};

/** Delay before retry `attemptsMade`: 0.5 s doubling up to 60 s. */
export function observationBackoff(attemptsMade: number): number {
  return Math.min(60_000, 500 * 2 ** Math.max(0, attemptsMade - 1));
}

/** The queue as producers (API, CLI) use it. */
export function createObservationQueue(deps: { connection: ConnectionOptions; prefix: string }): Queue<ObservationJob, ObservationJobResult> {
  return new Queue<ObservationJob, ObservationJobResult>(OBSERVATIONS_QUEUE, {
    connection: deps.connection,
    prefix: deps.prefix,
    defaultJobOptions: OBSERVATION_JOB_OPTIONS,
  });
}

/** Queue events, for waiting on jobs (`?wait=true`, `ingest --wait`). */
export function createObservationQueueEvents(deps: { connection: ConnectionOptions; prefix: string }): QueueEvents {
  return new QueueEvents(OBSERVATIONS_QUEUE, { connection: deps.connection, prefix: deps.prefix });
}
