import type { Job } from 'bullmq';
import type { Producer } from '../../queues/registry.ts';
import { fieldOf } from '../../internal/typed-objects.ts';

/**
 * The observations that could not be indexed. A job retries with back-off for about an hour
 * (queue registry); a job whose attempts ran out, or that can never succeed (a payload this
 * version cannot read), stays in the queue's failed set with its observations. Operators list
 * them here and requeue them once the cause is fixed: nothing accepted is dropped.
 */

/** What an operator needs to act on one failed observations job (one intake chunk, ≤ 500 observations). */
export interface FailedObservationJob {
  id: string;
  /** The intake request the observations came in with (its `request_id`), when the payload has one. */
  requestId: string | null;
  observationCount: number;
  /** Attempts made before it failed for good. */
  attempts: number;
  failedReason: string;
  failedAt: Date | null;
  /** How many observations of each kind (`unreadable` for entries that are not observations). */
  kinds: Record<string, number>;
  /** Each observation's kind and the platform id it is about (`null` when it has none). */
  observations: Array<{ kind: string; platformId: string | null }>;
}

/** What {@link IntakeFailures.retry} did. */
export interface RetryOutcome {
  /** Requeued, with a fresh set of attempts. */
  retried: string[];
  /** Not in the failed set (unknown, already retried, or completed meanwhile). */
  notFailed: string[];
}

/** Lists and requeues failed observations jobs. */
export interface IntakeFailures {
  /** How many jobs are in the failed set. */
  count(): Promise<number>;
  /** Every failed job, oldest failure first, read a page at a time. */
  list(): AsyncIterable<FailedObservationJob>;
  /** Requeues the given jobs, or every failed one. */
  retry(target: string[] | 'all'): Promise<RetryOutcome>;
}

/** Jobs read from Redis at once while listing: each may hold 500 observations. */
const PAGE = 50;

/** Creates the failed-jobs service on the observations producer. */
export function createIntakeFailures(deps: { queue: Producer<'observations'> }): IntakeFailures {
  const { queue } = deps;
  // A snapshot of the ids, so jobs requeued or failing while we walk are neither skipped nor repeated.
  const failedIds = () => queue.getRanges(['failed'], 0, -1, true);
  return {
    count: () => queue.getFailedCount(),
    async *list() {
      const ids = await failedIds();
      for (let i = 0; i < ids.length; i += PAGE) {
        const jobs = await Promise.all(ids.slice(i, i + PAGE).map((id) => queue.getJob(id)));
        for (const job of jobs) if (job) yield describe(job);
      }
    },
    async retry(target) {
      const ids = target === 'all' ? await failedIds() : [...new Set(target)];
      const outcome: RetryOutcome = { retried: [], notFailed: [] };
      for (const id of ids) {
        const job = await queue.getJob(id);
        if (!job || !(await job.isFailed())) {
          outcome.notFailed.push(id);
          continue;
        }
        try {
          // Fresh attempts, but `attemptsStarted` is kept: the handler then knows an earlier run
          // may have written part of the job, and redoes what that run may have skipped.
          await job.retry('failed', { resetAttemptsMade: true });
          outcome.retried.push(id);
        } catch {
          // Moved out of the failed set between the check and the retry (another operator).
          outcome.notFailed.push(id);
        }
      }
      return outcome;
    },
  };
}

function describe(job: Job): FailedObservationJob {
  // The payload is read defensively: an unreadable one is exactly what may sit here.
  const stored = fieldOf(job.data, 'observations');
  const requestId = fieldOf(job.data, 'request_id');
  const entries: unknown[] = Array.isArray(stored) ? stored : [];
  const observations = entries.map(subjectOf);
  const kinds: Record<string, number> = {};
  for (const { kind } of observations) kinds[kind] = (kinds[kind] ?? 0) + 1;
  return {
    id: job.id ?? '',
    requestId: typeof requestId === 'string' ? requestId : null,
    observationCount: entries.length,
    attempts: job.attemptsMade,
    failedReason: job.failedReason ?? '',
    failedAt: job.finishedOn ? new Date(job.finishedOn) : null,
    kinds,
    observations,
  };
}

/** The kind of an observation and the id of the account or post it is about. */
function subjectOf(entry: unknown): { kind: string; platformId: string | null } {
  if (typeof entry !== 'object' || entry === null) return { kind: 'unreadable', platformId: null };
  const kind = fieldOf(entry, 'kind');
  const id =
    fieldOf(entry, 'platform_id') ?? fieldOf(entry, 'post_platform_id') ?? fieldOf(entry, 'account_platform_id');
  return { kind: typeof kind === 'string' ? kind : 'unreadable', platformId: typeof id === 'string' ? id : null };
}
