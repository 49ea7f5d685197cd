import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { formatIssues } from '../contract/observations.ts';
import { QUEUES, retryDelay, type JobPayload, type JobResults, type QueueName } from './registry.ts';

/** What a handler may know of its job besides the payload. */
export interface JobContext {
  id: string | undefined;
  /** True when an earlier run of this job may have written (it failed, or its worker died mid-job). */
  isRetry: boolean;
}

/** Handles one job of queue `N`: a throw makes BullMQ retry it with back-off. */
export type JobHandler<N extends QueueName> = (payload: JobPayload<N>, job: JobContext) => Promise<JobResults[N]>;

/** A handler for each queue a process works on (`workers/` builds them from the services). */
export type JobHandlers = { [N in QueueName]?: JobHandler<N> };

/** The running workers of one process. */
export interface RunningWorkers {
  /** Stops taking jobs and lets running ones finish. */
  close(): Promise<void>;
}

/**
 * Starts one BullMQ worker per handler, with the table's concurrency and retry schedule. Each job's
 * payload is checked against the queue's schema first: a payload this version cannot read (left
 * by an older release) fails at once, kept in the failed set for an operator, instead of retrying
 * 80 times or crashing mid-merge.
 */
export function startWorkers(
  handlers: JobHandlers,
  deps: { connection: () => ConnectionOptions; prefix: string; configuredConcurrency: number; logger: Pick<Logger, 'warn'> },
): RunningWorkers {
  const workers = (Object.keys(handlers) as QueueName[]).map((name) => startWorker(name, handlers[name] as JobHandler<typeof name>, deps));
  return {
    async close() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

function startWorker<N extends QueueName>(
  name: N,
  handler: JobHandler<N>,
  deps: { connection: () => ConnectionOptions; prefix: string; configuredConcurrency: number; logger: Pick<Logger, 'warn'> },
): Worker {
  const entry = QUEUES[name];
  const worker = new Worker<JobPayload<N>, JobResults[N]>(
    name,
    async (job: Job<JobPayload<N>, JobResults[N]>) => {
      const parsed = entry.payload.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`unreadable ${name} job payload: ${formatIssues(parsed.error.issues)}`);
      // A job re-run after its worker died (stalled) has no failed attempt, but may have written.
      const isRetry = job.attemptsMade > 0 || job.attemptsStarted > 1;
      return handler(parsed.data as JobPayload<N>, { id: job.id, isRetry });
    },
    {
      connection: deps.connection(),
      prefix: deps.prefix,
      concurrency: entry.concurrency === 'config' ? deps.configuredConcurrency : entry.concurrency,
      settings: { backoffStrategy: retryDelay },
    },
  );
  worker.on('failed', (job, error) =>
    deps.logger.warn(
      { job: job?.id, queue: name, request_id: (job?.data as { request_id?: string } | undefined)?.request_id, attempts: job?.attemptsMade, err: error },
      'job failed; it will be retried',
    ),
  );
  worker.on('error', (error) => deps.logger.warn({ err: error, queue: name }, 'worker connection error'));
  return worker;
}
