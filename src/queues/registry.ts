import { Job, Queue, QueueEvents, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import type { Observation } from '../contract/observations.ts';

/**
 * Every queue of the service in one typed table: its name, the schema of its payload, its job
 * options and how many jobs a worker runs at once. Producers (the intake, rebuilds) and workers
 * (`src/jobs/`) are built from it, so a queue's contract lives in one place. Payloads are stored
 * in Redis and may outlive a deploy, so their field names are a wire format (snake_case) and a
 * worker checks each payload against its schema before handling it.
 */

/** Observations per job: large enough for efficient bulk writes, small enough to keep jobs light. */
export const OBSERVATIONS_PER_JOB = 500;

/** One `observations` job: a chunk of validated, normalized observations of one intake request. */
const observationJob = z.strictObject({
  // Validated one by one at intake (the contract's strict schemas); checked here only for shape.
  observations: z.array(z.custom<Observation>((v) => typeof v === 'object' && v !== null && 'kind' in v)).min(1),
  /**
   * Make the results visible to search before completing (`?wait=true`); `all`: every index too,
   * each month of the metric history included (the last job of a streamed load that waits).
   */
  refresh: z.union([z.boolean(), z.literal('all')]),
  /** Queue the embeddings even when refreshing (bulk loads that must not wait on the model). */
  embed_later: z.boolean().optional(),
  request_id: z.string(),
});

/** One `embeddings` job: the records one observations job left without a current vector. */
const embeddingJob = z.strictObject({
  posts: z.array(z.string()),
  accounts: z.array(z.string()),
});

/**
 * One `follow-ups` job: no payload. The work (fan-out, baselines) waits in Redis sets that many
 * batches add to (`services/intake/follow-up-backlog.ts`); a run takes all of it at once.
 */
const followUpJob = z.strictObject({});

/**
 * One `alerts` job: no payload. The recovery pass: posts written but not matched at their write
 * wait in Redis (services/alerts/pending-store.ts); a run matches them against every saved search.
 */
const alertPassJob = z.strictObject({});

/** One `maintenance` job: no payload. A job scheduler adds one every hour (scheduleMaintenance). */
const maintenanceJob = z.strictObject({});

/** What a processed observations job reports. */
export interface ObservationJobResult {
  accounts_written: number;
  posts_written: number;
  fanned_out: number;
  baselines_updated: number;
  /** Accounts whose derived metrics changed (inline follow-ups only). */
  metrics_updated: number;
  /** Records given vectors inline (waiting jobs only; others queue their embeddings). */
  embedded?: number;
  /** Accounts and authors left to the `follow-ups` queue (batches nobody waits on). */
  deferred?: number;
}

/** What a follow-up run reports. */
export interface FollowUpJobResult {
  accounts: number;
  authors: number;
  fanned_out: number;
  baselines_updated: number;
  metrics_updated: number;
}

/** What an alerts run reports. */
export interface AlertPassJobResult {
  posts: number;
  searches: number;
  events: number;
  dropped: number;
}

/** What a maintenance run reports: the metric history's retention pass. */
export interface MaintenanceJobResult {
  dropped: string[];
  thinned: string[];
  points_deleted: number;
}

/**
 * Jobs retry with capped exponential back-off ({@link retryDelay}) for about an hour of outages;
 * after that they stay in the failed set, where operators can retry them: an observation is never
 * dropped. Embedding work is idempotent (current records are skipped) and retries the same way.
 */
const RETRYING: JobsOptions = {
  attempts: 80,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: false,
};

/** Delay before retry `attemptsMade`: 0.5 s doubling up to 60 s. */
export function retryDelay(attemptsMade: number): number {
  return Math.min(60_000, 500 * 2 ** Math.max(0, attemptsMade - 1));
}

/** The queue table. `concurrency: 'config'` takes WORKER_CONCURRENCY. */
export const QUEUES = {
  observations: { payload: observationJob, options: RETRYING, concurrency: 'config' },
  // One model thread does the inference; two jobs in flight overlap one's engine I/O with the other's inference.
  embeddings: { payload: embeddingJob, options: RETRYING, concurrency: 2 },
  // One run at a time across all workers (deduplicated, see requestFollowUp): it takes all pending
  // work. Its input is never bad (it recomputes from stored records), so it retries through outages
  // of any length (every minute after the first few) instead of failing for an operator.
  'follow-ups': {
    payload: followUpJob,
    options: { ...RETRYING, attempts: 100_000, removeOnComplete: { age: 3600, count: 1000 } },
    concurrency: 1,
  },
  // Like follow-ups: one run at a time takes what is pending; it matches the posts as they are
  // stored, so it retries through outages of any length.
  alerts: {
    payload: alertPassJob,
    options: { ...RETRYING, attempts: 100_000, removeOnComplete: { age: 3600, count: 1000 } },
    concurrency: 1,
  },
  // Idempotent housekeeping on a schedule: a failed run is simply the next hour's to do again.
  maintenance: {
    payload: maintenanceJob,
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, removeOnComplete: 100, removeOnFail: 100 },
    concurrency: 1,
  },
} as const satisfies Record<string, { payload: z.ZodType; options: JobsOptions; concurrency: number | 'config' }>;

/** A queue's name. */
export type QueueName = keyof typeof QUEUES;

/** The payload of a job of queue `N`. */
export type JobPayload<N extends QueueName> = z.infer<(typeof QUEUES)[N]['payload']>;

/** What a job of each queue returns. */
export interface JobResults {
  observations: ObservationJobResult;
  embeddings: number;
  'follow-ups': FollowUpJobResult;
  alerts: AlertPassJobResult;
  maintenance: MaintenanceJobResult;
}

/** An observations job's payload. */
export type ObservationJob = JobPayload<'observations'>;
/** An embeddings job's payload. */
export type EmbeddingJob = JobPayload<'embeddings'>;

/** The producer side of queue `N`. */
export type Producer<N extends QueueName> = Queue<JobPayload<N>, JobResults[N]>;

/**
 * How long a follow-up run waits after it is first asked for, gathering the work of the batches
 * that arrive meanwhile: derived metrics of batches nobody waits on trail by about this much.
 */
export const FOLLOW_UP_DELAY_MS = 1000;

/**
 * Asks for a follow-up run, `delayMs` from now (a worker whose intake is behind gathers longer:
 * src/internal/backlog-refresh.ts). While one is pending (delayed or waiting) this is a no-op: the pending
 * run has not started, so it will see the work recorded before this call. While one is active, one
 * more is kept for when it ends (`keepLastIfActive`): work recorded after the active run claimed
 * its share is never left without a run.
 */
export async function requestFollowUp(
  queue: Pick<Producer<'follow-ups'>, 'add'>,
  delayMs: number = FOLLOW_UP_DELAY_MS,
): Promise<void> {
  await queue.add('follow-up', {}, { delay: delayMs, deduplication: { id: 'follow-up', keepLastIfActive: true } });
}

/** How long a recovery pass waits after it is first asked for, gathering the posts left meanwhile. */
export const ALERT_PASS_DELAY_MS = 1000;

/** Asks for a recovery pass (deduplicated like {@link requestFollowUp}). */
export async function requestAlertPass(queue: Pick<Producer<'alerts'>, 'add'>): Promise<void> {
  await queue.add(
    'alerts',
    {},
    { delay: ALERT_PASS_DELAY_MS, deduplication: { id: 'alerts', keepLastIfActive: true } },
  );
}

/**
 * When the oldest job waiting in `queue` was added (ms since the epoch), or null when none waits.
 * Reads IDs and one field of the job's hash, never the job: `getJobs` reads an observations batch
 * (its payload, up to a megabyte) twice, and the backlog refresh asks each second; that was about 5 %
 * of the worker's CPU in a 20,000-post intake bench's profile (2026-12-06).
 */
export async function oldestWaitingAt(
  queue: Pick<Queue, 'getRanges' | 'getBackend' | 'toKey'>,
): Promise<number | null> {
  // A few IDs, not one: an ID whose job was removed after the read has no timestamp left.
  const ids = await queue.getRanges(['wait'], 0, 2, true);
  if (ids.length === 0) return null;
  const client = await queue.getBackend().client;
  const stamps = await Promise.all(ids.map((id) => client.hget(queue.toKey(id), 'timestamp')));
  const first = stamps.find((stamp) => stamp !== null);
  return first === undefined ? null : Number(first);
}

/**
 * A handle on job `id` of `queue` to wait on (`waitUntilFinished`), its payload not read: a job
 * holds its batch (up to a megabyte), and waiting needs only the job's ID and its queue.
 */
export function jobHandle<N extends QueueName>(queue: Producer<N>, id: string): Pick<Job, 'waitUntilFinished'> {
  return new Job<unknown, JobResults[N]>(queue, queue.name, undefined, {}, id);
}

/** How often the maintenance job runs. */
export const MAINTENANCE_EVERY_MS = 60 * 60 * 1000;

/** Installs (or keeps) the hourly maintenance schedule; every worker process may call it. */
export async function scheduleMaintenance(queue: Pick<Producer<'maintenance'>, 'upsertJobScheduler'>): Promise<void> {
  await queue.upsertJobScheduler('maintenance', { every: MAINTENANCE_EVERY_MS }, { name: 'maintenance', data: {} });
}

/** The queues whose jobs write to the indices: what a rebuild pauses. */
export const INDEX_WRITING_QUEUES = [
  'observations',
  'embeddings',
  'follow-ups',
] as const satisfies readonly QueueName[];

/** Where the queues live. */
export interface QueueConnection {
  connection: ConnectionOptions;
  /** REDIS_PREFIX: several deployments (or test files) share one Redis. */
  prefix: string;
}

/** The producer of queue `name`, with the table's job options. */
export function createProducer<N extends QueueName>(name: N, deps: QueueConnection): Producer<N> {
  const queue = new Queue<JobPayload<N>, JobResults[N]>(name, {
    connection: deps.connection,
    prefix: deps.prefix,
    defaultJobOptions: QUEUES[name].options,
  });
  // Connection errors surface on the calls that fail (as 503s); the event would only duplicate them.
  queue.on('error', () => undefined);
  return queue;
}

/** Completion events of queue `name`, for waiting on jobs (`?wait=true`, `ingest --wait`). Needs a blocking connection. */
export function createQueueEvents(name: QueueName, deps: QueueConnection): QueueEvents {
  const events = new QueueEvents(name, { connection: deps.connection, prefix: deps.prefix });
  // Without a listener BullMQ prints every reconnect attempt's error with its stack to stderr.
  // Its connection's outage is logged once by whoever watches that connection; a wait that
  // cannot go on fails on its own call.
  events.on('error', () => undefined);
  return events;
}
