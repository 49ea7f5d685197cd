/**
 * Queue consumers: the BullMQ `Worker` of each queue a process works on, built from the queue
 * registry. Each checks a job's payload against its queue's schema before the job handler (`src/jobs/`)
 * sees it. ("Worker process" is the `social-search worker` process, `src/start/worker-process.ts`.)
 */
import { fieldOf, keysOf } from '../internal/typed-objects.ts';
import { DelayedError, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { formatIssues } from '../contract/observations.ts';
import { PostponedError, ServiceUnavailableError } from '../internal/errors.ts';
import { isConnectionError, reasonOf } from '../internal/outages.ts';
import { QUEUES, retryDelay, type JobPayload, type JobResults, type QueueName } from './registry.ts';

/** What a handler may know of its job besides the payload. */
export interface JobContext {
  id: string | undefined;
  /** True when an earlier run of this job may have written (it failed, or its worker died mid-job). */
  isRetry: boolean;
  /** This attempt's number, from 1. */
  attempt: number;
  /** When the job was first queued (epoch ms). */
  queuedAt: number;
  /**
   * Aborted when the process starts to stop. A long handler checks it between steps and throws
   * `PostponedError`: the job goes back to the queue with what it did kept, and runs again (as a
   * retry) in this or another worker process, instead of holding shutdown until it ends.
   */
  stopping: AbortSignal;
}

/** Handles one job of queue `N`: a throw makes BullMQ retry it with back-off. */
export type JobHandler<N extends QueueName> = (payload: JobPayload<N>, job: JobContext) => Promise<JobResults[N]>;

/** A handler for each queue a process works on (`src/jobs/` builds them from the services). */
export type JobHandlers = { [N in QueueName]?: JobHandler<N> };

/** The running queue consumers of one process. */
export interface RunningConsumers {
  /**
   * Stops taking jobs, tells running ones to stop (`JobContext.stopping`) and waits for them to
   * finish or postpone; `force` does not wait for them (nor for Redis): a job cut short is picked
   * up again as stalled, and merges are idempotent.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

/** What the consumers log to. */
type ConsumerLogger = Pick<Logger, 'warn' | 'error'>;

/** Dependencies of {@link startQueueConsumers}. */
interface ConsumerDeps {
  connection: () => ConnectionOptions;
  prefix: string;
  configuredConcurrency: number;
  logger: ConsumerLogger;
}

/**
 * Starts one queue consumer (a BullMQ `Worker`) per handler, with the table's concurrency and retry schedule. Each job's
 * payload is checked against the queue's schema first: a payload this version cannot read (left
 * by an older release) fails at once, kept in the failed set for an operator, instead of retrying
 * 80 times or crashing mid-merge.
 */
export function startQueueConsumers(handlers: JobHandlers, deps: ConsumerDeps): RunningConsumers {
  const consumers = keysOf(handlers).map((name) =>
    // `handlers[name]` is typed by the union of names, not by this `name`: TypeScript cannot correlate the two.
    startConsumer(name, handlers[name] as JobHandler<typeof name>, deps),
  );
  return {
    async close(options = {}) {
      // close() first: it stops fetching at once, so no job starts after the running ones are told.
      const closing = consumers.map((c) => c.close(options.force === true));
      for (const c of consumers) c.cancelAllJobs('the process is stopping');
      await Promise.all(closing);
    },
  };
}

function startConsumer<N extends QueueName>(name: N, handler: JobHandler<N>, deps: ConsumerDeps): Worker {
  const entry = QUEUES[name];
  const worker = new Worker<JobPayload<N>, JobResults[N]>(
    name,
    // Three parameters: BullMQ passes the job's abort signal only to a processor that declares it.
    async (job: Job<JobPayload<N>, JobResults[N]>, token: string | undefined, signal: AbortSignal | undefined) => {
      const parsed = entry.payload.safeParse(job.data);
      if (!parsed.success)
        throw new UnrecoverableError(`unreadable ${name} job payload: ${formatIssues(parsed.error.issues)}`);
      // A job re-run after its worker died (stalled) has no failed attempt, but may have written.
      // A postponed one has neither, but has started before: it may have written too.
      const isRetry = job.attemptsMade > 0 || job.attemptsStarted > 1;
      try {
        // The schema of queue N parses to JobPayload<N>; indexing QUEUES by a generic N loses that.
        return await handler(parsed.data as JobPayload<N>, {
          id: job.id,
          isRetry,
          attempt: job.attemptsMade + 1,
          queuedAt: job.timestamp,
          stopping: signal ?? new AbortController().signal,
        });
      } catch (error) {
        if (!(error instanceof PostponedError) || token === undefined) throw error;
        // BullMQ's way to put a job back without counting an attempt: due now, so the next worker
        // to fetch takes it.
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
    },
    {
      connection: deps.connection(),
      prefix: deps.prefix,
      concurrency: entry.concurrency === 'config' ? deps.configuredConcurrency : entry.concurrency,
      settings: { backoffStrategy: (attemptsMade: number) => retryDelay(attemptsMade) },
      // A killed worker's jobs run again within ~20 s instead of ~60 s (BullMQ's defaults), and a
      // job whose workers die repeatedly is not failed after its second stall: a stall is not the
      // job's fault, and re-running it is safe (merges are idempotent).
      lockDuration: 15_000,
      stalledInterval: 5_000,
      maxStalledCount: 5,
    },
  );
  worker.on('failed', (job, error) => logFailure(deps.logger, name, job, error));
  const repeats = new Map<string, number>();
  worker.on('error', (error) => {
    // A connection error is part of an outage its connection has already logged, once
    // (src/start/connections.ts); BullMQ repeats it on every reconnect attempt.
    if (isConnectionError(error)) return;
    // Anything else is unexpected: logged in full, but the same message at most once a minute.
    const last = repeats.get(error.message);
    if (last !== undefined && Date.now() - last < 60_000) return;
    if (repeats.size > 100) repeats.clear();
    repeats.set(error.message, Date.now());
    deps.logger.warn({ err: error, queue: name }, 'queue worker error');
  });
  return worker;
}

/**
 * One line per failed attempt. Whether it will be retried comes from the job's attempts, so a
 * permanent failure says where its observations are kept. Outage errors (the engine or Redis
 * unreachable) and unreadable payloads carry their reason only: their stack says nothing.
 */
function logFailure(logger: ConsumerLogger, queue: QueueName, job: Job | undefined, error: Error): void {
  const attempts = job?.opts.attempts ?? 1;
  const permanent = error instanceof UnrecoverableError || (job?.attemptsMade ?? 0) >= attempts;
  const expected =
    error instanceof ServiceUnavailableError || error instanceof UnrecoverableError || isConnectionError(error);
  const fields = {
    job: job?.id,
    queue,
    request_id: fieldOf(job?.data, 'request_id'),
    attempts: job?.attemptsMade,
    ...(expected ? { reason: reasonOf(error) } : { err: error }),
  };
  if (!permanent) {
    logger.warn(fields, 'job failed; it will be retried');
  } else if (queue === 'observations') {
    logger.error(
      fields,
      'job failed permanently; its observations are kept: `social-search intake failures` lists them, `social-search intake retry` requeues them',
    );
  } else {
    logger.error(fields, 'job failed permanently; it is kept in the failed set');
  }
}
