import { IntakeBacklogFullError, messageOf, ServiceUnavailableError } from '../../internal/errors.ts';
import {
  MAX_OBSERVATIONS_PER_REQUEST,
  type IntakeEntry,
  type IntakeService,
  type RejectedLine,
} from './intake-service.ts';

/** The first wait for a full backlog to drain, doubled up to {@link BACKLOG_MAX_WAIT_MS}. */
const BACKLOG_FIRST_WAIT_MS = 250;
/** The longest wait between two tries (the HTTP intake's Retry-After). */
const BACKLOG_MAX_WAIT_MS = 5000;
/**
 * How long a queue that does not answer (Redis down, or too slow under load: the intake gives up on
 * a call after 5 s) is tried again before the stream gives up: a loader of millions of observations
 * should ride out a moment of overload, not stop half-way.
 */
const UNAVAILABLE_GIVE_UP_MS = 120_000;

/** Totals of a streamed ingest. */
export interface StreamIngestResult {
  accepted: number;
  rejected: number;
  jobs: number;
}

/** How {@link ingestStream} submits and reports. */
export interface StreamIngestOptions {
  /** Index and refresh as `wait` says, but leave the vectors to the embeddings queue. */
  embedLater?: boolean;
  wait: boolean;
  requestId: string;
  waitTimeoutMs: number;
  onRejected?: (line: RejectedLine) => void;
  onProgress?: (accepted: number) => void;
  /** Called each time a request waits for the backlog to drain, with the wait in ms. */
  onBackpressure?: (waitMs: number) => void;
  /** Called each time a request waits for an unreachable queue, with the wait in ms. */
  onUnavailable?: (waitMs: number) => void;
  /** How long in a row an unreachable queue is tried again; default two minutes. */
  unavailableGiveUpMs?: number;
}

/**
 * Streams entries through the intake service in requests of at most 5,000 observations, the same
 * path and limits as the HTTP intake. While the backlog is full it waits for the workers and sends
 * the refused request again (a loader outpaces any worker; nothing is dropped). A queue that
 * cannot be reached is tried again the same way for up to two minutes in a row (sending a request
 * again is safe: an observation applied twice changes nothing). With `wait`, resolves once
 * everything is indexed and visible.
 */
export async function ingestStream(
  source: AsyncIterable<IntakeEntry | RejectedLine> | Iterable<IntakeEntry | RejectedLine>,
  intake: IntakeService,
  options: StreamIngestOptions,
): Promise<StreamIngestResult> {
  const totals = { accepted: 0, rejected: 0, jobs: 0 };
  const jobIds: string[] = [];
  let entries: IntakeEntry[] = [];
  let rejected: RejectedLine[] = [];

  // With `wait`, the requests go without a refresh, as a pipeline's do: each job's follow-ups join
  // the batched runs and no job refreshes the indices (a refresh, and the follow-ups run inline,
  // for each job of 500 observations: docs/operations.md, "Backfills"). The last request carrying
  // observations is held back until every earlier job and the work they left for later are done,
  // then sent with `refresh: 'all'`: its job makes everything visible at once.
  let held: { entries: IntakeEntry[]; rejected: RejectedLine[] } | null = null;
  const send = async (chunk: { entries: IntakeEntry[]; rejected: RejectedLine[] }, refresh: boolean | 'all') => {
    const result = await submitWhenRoom(options, () =>
      intake.submit(chunk, {
        wait: false,
        refresh,
        requestId: options.requestId,
        ...(options.embedLater ? { embedLater: true } : {}),
      }),
    );
    totals.accepted += result.accepted;
    totals.rejected += result.rejected.length;
    for (const r of result.rejected) options.onRejected?.(r);
    options.onProgress?.(totals.accepted);
    return result.jobIds;
  };

  const flush = async () => {
    if (entries.length === 0 && rejected.length === 0) return;
    const chunk = { entries, rejected };
    entries = [];
    rejected = [];
    if (!options.wait || chunk.entries.length === 0) {
      jobIds.push(...(await send(chunk, false)));
      return;
    }
    if (held) jobIds.push(...(await send(held, false)));
    held = chunk;
  };

  for await (const item of source) {
    if ('value' in item) entries.push(item);
    else rejected.push(item);
    if (entries.length + rejected.length >= MAX_OBSERVATIONS_PER_REQUEST) await flush();
  }
  await flush();
  if (options.wait && held) {
    await intake.waitFor(jobIds, options.waitTimeoutMs);
    await intake.settle({ vectors: options.embedLater !== true }, options.waitTimeoutMs);
    const last = await send(held, 'all');
    jobIds.push(...last);
    await intake.waitFor(last, options.waitTimeoutMs);
  }
  totals.jobs = jobIds.length;
  return totals;
}

/** Parses NDJSON lines (1-based numbering, blank lines skipped) into entries or rejections. */
export async function* ndjsonEntries(lines: AsyncIterable<string>): AsyncGenerator<IntakeEntry | RejectedLine> {
  let line = 0;
  for await (const raw of lines) {
    line++;
    if (raw.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(raw) };
    } catch (error) {
      yield { line, detail: `not valid JSON: ${messageOf(error)}` };
    }
  }
}

/**
 * Submits once there is room: a full backlog is waited out for as long as it lasts (doubling
 * waits up to the longest), an unreachable queue for `unavailableGiveUpMs` in a row at most.
 */
async function submitWhenRoom<T>(
  options: Pick<StreamIngestOptions, 'onBackpressure' | 'onUnavailable' | 'unavailableGiveUpMs'>,
  submit: () => Promise<T>,
): Promise<T> {
  const giveUpMs = options.unavailableGiveUpMs ?? UNAVAILABLE_GIVE_UP_MS;
  let unavailableSince: number | null = null;
  for (let waitMs = BACKLOG_FIRST_WAIT_MS; ; waitMs = Math.min(waitMs * 2, BACKLOG_MAX_WAIT_MS)) {
    try {
      return await submit();
    } catch (error) {
      if (error instanceof IntakeBacklogFullError) {
        unavailableSince = null;
        options.onBackpressure?.(waitMs);
      } else if (error instanceof ServiceUnavailableError) {
        unavailableSince ??= Date.now();
        if (Date.now() - unavailableSince + waitMs > giveUpMs) throw error;
        options.onUnavailable?.(waitMs);
      } else throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
