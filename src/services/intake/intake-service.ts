import type { Queue, QueueEvents } from 'bullmq';
import { parseObservation, type Observation } from '../../contract/observations.ts';
import {
  DomainError,
  IntakeBacklogFullError,
  IntakeTimeoutError,
  MalformedRequestError,
  PayloadTooLargeError,
  ServiceUnavailableError,
} from '../../internal/errors.ts';
import { jobHandle, OBSERVATIONS_PER_JOB, type ObservationJob, type Producer } from '../../queues/registry.ts';
import { createLane, yieldAfter } from '../../internal/time-slices.ts';

/** At most this many observations in one intake request (contract §2). */
export const MAX_OBSERVATIONS_PER_REQUEST = 5000;
/** At most this many bytes in one intake request (contract §2). */
export const MAX_INTAKE_BYTES = 20 * 1024 * 1024;

/**
 * Longest stretch of validation before the searches queued on this node get their turn: checking
 * a full request (1,000 observations) takes 65–200 ms of CPU on two shared cores, which every
 * search arriving meanwhile waited out (bench/steady-state.md, "Searches first").
 */
const VALIDATION_SLICE_MS = 2;

/** A line of input: its 1-based line number (or array position) and its parsed JSON value. */
export interface IntakeEntry {
  line: number;
  value: unknown;
}

export interface RejectedLine {
  line: number;
  detail: string;
}

export interface IntakeResult {
  accepted: number;
  rejected: RejectedLine[];
  /** IDs of the queued jobs, for {@link IntakeService.waitFor}. */
  jobIds: string[];
}

/** Entries of a JSON-array body; `line` is the 1-based position in the array. */
export function entriesOfArray(body: unknown): IntakeEntry[] {
  if (!Array.isArray(body)) {
    throw new MalformedRequestError('An application/json intake body must be an array of observations.');
  }
  const values: unknown[] = body;
  return values.map((value, i) => ({ line: i + 1, value }));
}

/** Validates and enqueues observations; optionally waits until they are searchable. */
export interface IntakeService {
  /**
   * Validates each entry on its own and queues the valid ones. With `wait`, resolves only once
   * they are indexed and visible; with `refresh` alone, the worker makes them visible but the call
   * returns at once (for callers that wait later with {@link waitFor}); `refresh: 'all'` makes
   * every index visible, each month of the metric history included.
   */
  submit(
    input: { entries: IntakeEntry[]; rejected?: RejectedLine[] },
    options: { wait: boolean; requestId: string; refresh?: boolean | 'all'; embedLater?: boolean },
  ): Promise<IntakeResult>;
  /** Resolves when every listed job has completed; IntakeTimeoutError after `timeoutMs`. */
  waitFor(jobIds: string[], timeoutMs?: number): Promise<void>;
  /**
   * Resolves once the work that completed observations jobs left for later is done: every job
   * that was waiting, delayed or running in the follow-ups queue (and with `vectors`, first in the
   * embeddings queue) has finished. Call it after {@link waitFor}. IntakeTimeoutError after `timeoutMs`.
   */
  settle(options: { vectors: boolean }, timeoutMs?: number): Promise<void>;
}

/** A queue whose jobs {@link IntakeService.settle} waits out. */
export type LaterQueue = Pick<Queue, 'getRanges' | 'getJobState'>;

/** How often {@link IntakeService.settle} looks at the queues. */
const SETTLE_POLL_MS = 200;
/** The states of a job that is still to run or running. */
const UNFINISHED = ['waiting', 'delayed', 'active', 'prioritized', 'waiting-children'] as const;
/** A job's states once it will not run again by itself (`unknown`: removed on completion). */
const FINISHED = new Set(['completed', 'failed', 'unknown']);

/**
 * Creates the intake service. Valid observations are queued in BullMQ (Redis, AOF-persisted)
 * before `submit` returns, so an accepted observation survives a restart of any component.
 */
export function createIntakeService(deps: {
  queue: Producer<'observations'>;
  /** Created on first use: a queue-events listener holds a blocking Redis connection. */
  queueEvents: () => Promise<QueueEvents>;
  waitTimeoutMs: number;
  /** Observations that may wait in the queue; past it a request is refused whole (503). */
  maxQueuedObservations?: number;
  /** The queues that finish what observations leave for later; created on first use. Without them, `settle` has nothing to wait for. */
  laterQueues?: () => { embeddings: LaterQueue; followUps: LaterQueue };
}): IntakeService {
  const maxQueuedJobs =
    deps.maxQueuedObservations === undefined
      ? Infinity
      : Math.max(1, Math.ceil(deps.maxQueuedObservations / OBSERVATIONS_PER_JOB));
  const validation = createLane();
  const service: IntakeService = {
    async waitFor(jobIds, timeoutMs = deps.waitTimeoutMs) {
      if (jobIds.length === 0) return;
      const events = await deps.queueEvents();
      // Jobs are looked up one at a time as the wait reaches them: a stream of thousands of jobs
      // must not fire thousands of lookups at once on the fail-fast connection.
      const jobs = (async function* () {
        for (const id of jobIds) {
          // The job's state, and a handle to wait on, never the job: it holds its batch (up to a
          // megabyte). A completed job may already be removed (removeOnComplete: `unknown`);
          // failed jobs are kept, and the wait reads their reason.
          const state = await waitCall(() => deps.queue.getJobState(id));
          if (state === 'completed' || state === 'unknown') continue;
          yield jobHandle(deps.queue, id);
        }
      })();
      await waitForJobs(jobs, events, timeoutMs);
    },
    async settle(options, timeoutMs = deps.waitTimeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const timedOut = () =>
        new IntakeTimeoutError(
          `The observations were indexed, but the work they left for later (embeddings, follow-ups) was not done within ${timeoutMs} ms; it will be done when the worker catches up.`,
        );
      // In flow order (an embedding may ask for follow-ups before it finishes). Only the jobs
      // present when a queue is looked at are waited for, so that others' steady intake cannot
      // hold this up; twice, because a deduplicated run asked for while another is active is
      // added only when that one ends.
      const later = deps.laterQueues?.();
      const queues = later ? [...(options.vectors ? [later.embeddings] : []), later.followUps] : [];
      for (const queue of queues) {
        for (let round = 0; round < 2; round++) {
          // IDs only: an embeddings job holds its posts' IDs, which this has no use for.
          for (const id of await waitCall(() => queue.getRanges([...UNFINISHED], 0, -1))) {
            while (!FINISHED.has(await waitCall(() => queue.getJobState(id)))) {
              if (Date.now() + SETTLE_POLL_MS > deadline) throw timedOut();
              await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
            }
          }
        }
      }
    },
    async submit(input, options) {
      const total = input.entries.length + (input.rejected?.length ?? 0);
      if (total > MAX_OBSERVATIONS_PER_REQUEST) {
        throw new PayloadTooLargeError(
          `This request carries ${total} observations; send at most ${MAX_OBSERVATIONS_PER_REQUEST} per request.`,
        );
      }
      // One request's validation at a time on this node: searches wait for one slice, not one per request.
      const { accepted, rejected } = await validation(() => validateEntries(input.entries, input.rejected ?? []));

      if (accepted.length > 0) {
        const chunks: ObservationJob[] = [];
        for (let i = 0; i < accepted.length; i += OBSERVATIONS_PER_JOB) {
          chunks.push({
            observations: accepted.slice(i, i + OBSERVATIONS_PER_JOB),
            refresh: options.refresh === 'all' ? 'all' : options.wait || options.refresh === true,
            ...(options.embedLater ? { embed_later: true } : {}),
            request_id: options.requestId,
          });
        }
        if (maxQueuedJobs !== Infinity) {
          // Backpressure before Redis fills up: the workers are behind, so the sender waits, not Redis.
          const waiting = await queueCall(() => deps.queue.getWaitingCount());
          if (waiting + chunks.length > maxQueuedJobs) {
            throw new IntakeBacklogFullError(
              `The intake backlog is full (about ${waiting * OBSERVATIONS_PER_JOB} observations waiting for the workers); nothing from this request was accepted. Retry after a few seconds.`,
            );
          }
        }
        const jobs = await queueCall(() => deps.queue.addBulk(chunks.map((data) => ({ name: 'observations', data }))));
        const jobIds = jobs.map((job) => job.id!);
        // The jobs in hand: no lookup of each job's state by ID, as `waitFor` makes.
        if (options.wait) await waitForJobs(jobs, await deps.queueEvents(), deps.waitTimeoutMs);
        return { accepted: accepted.length, rejected, jobIds };
      }
      return { accepted: accepted.length, rejected, jobIds: [] };
    },
  };
  return service;
}

/**
 * Checks each entry against the observation contract, in slices of {@link VALIDATION_SLICE_MS}
 * so that the searches this node serves are not held behind a large request. `rejected` (lines
 * refused before, e.g. not JSON) joins the answer's, in line order.
 */
export async function validateEntries(
  entries: readonly IntakeEntry[],
  alreadyRejected: readonly RejectedLine[],
): Promise<{ accepted: Observation[]; rejected: RejectedLine[] }> {
  const rejected = [...alreadyRejected];
  const accepted: Observation[] = [];
  let slice = performance.now();
  for (const entry of entries) {
    const parsed = parseObservation(entry.value);
    if (parsed.ok) accepted.push(parsed.value);
    else rejected.push({ line: entry.line, detail: parsed.detail });
    slice = await yieldAfter(slice, VALIDATION_SLICE_MS);
  }
  rejected.sort((a, b) => a.line - b.line);
  return { accepted, rejected };
}

async function waitForJobs(
  jobs:
    | AsyncIterable<{ waitUntilFinished(events: QueueEvents, ttl?: number): Promise<unknown> }>
    | Iterable<{ waitUntilFinished(events: QueueEvents, ttl?: number): Promise<unknown> }>,
  events: QueueEvents,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  try {
    // One at a time under one deadline: a finished job answers at once, and a request waiting on
    // many jobs holds one listener instead of one per job.
    for await (const job of jobs) await job.waitUntilFinished(events, Math.max(1, deadline - Date.now()));
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if (error instanceof Error && /timed out|ttl/i.test(error.message)) {
      throw new IntakeTimeoutError(
        `The observations were accepted and queued, but were not all indexed within ${timeoutMs} ms; they will be indexed when the worker catches up.`,
      );
    }
    // A job whose attempts ran out stays in the failed set; its observations are not lost.
    throw new ServiceUnavailableError(
      'Indexing failed repeatedly; the observations stay queued for an operator to retry.',
      {
        cause: error,
      },
    );
  }
}

/**
 * Bound on queueing one request's jobs. A connection that is down fails at once (no offline
 * queue); this covers a queue whose connection has never been up (a process started during a
 * Redis outage waits for it). A late write after the 503 only duplicates observations, which the
 * merge ignores.
 */
const QUEUE_TIMEOUT_MS = 5000;

async function queueCall<T>(fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the queue did not answer within ${QUEUE_TIMEOUT_MS} ms`)),
      QUEUE_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([fn(), timeout]);
  } catch (error) {
    throw new ServiceUnavailableError(
      // Not "nothing was accepted": a write that times out here may still land (see QUEUE_TIMEOUT_MS).
      'The intake queue is unavailable; send the request again shortly (an observation sent twice changes nothing).',
      {
        cause: error,
      },
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Queue look-ups while waiting: the observations are already accepted, so say so. */
async function waitCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new ServiceUnavailableError(
      'The intake queue became unavailable while waiting; the accepted observations stay queued and will be indexed.',
      { cause: error },
    );
  }
}
