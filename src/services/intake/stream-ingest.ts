import {
  MAX_OBSERVATIONS_PER_REQUEST,
  type IntakeEntry,
  type IntakeService,
  type RejectedLine,
} from './intake-service.ts';

/** Totals of a streamed ingest. */
export interface StreamIngestResult {
  accepted: number;
  rejected: number;
  jobs: number;
}

/**
 * Streams entries through the intake service in requests of at most 5,000 observations, the same
 * path and limits as the HTTP intake. With `wait`, resolves once everything is indexed and visible.
 */
export async function ingestStream(
  source: AsyncIterable<IntakeEntry | RejectedLine> | Iterable<IntakeEntry | RejectedLine>,
  intake: IntakeService,
  options: {
    /** Index and refresh as `wait` says, but leave the vectors to the embeddings queue. */
    embedLater?: boolean;
    wait: boolean;
    requestId: string;
    waitTimeoutMs: number;
    onRejected?: (line: RejectedLine) => void;
    onProgress?: (accepted: number) => void;
  },
): Promise<StreamIngestResult> {
  const totals = { accepted: 0, rejected: 0, jobs: 0 };
  const jobIds: string[] = [];
  let entries: IntakeEntry[] = [];
  let rejected: RejectedLine[] = [];

  const flush = async () => {
    if (entries.length === 0 && rejected.length === 0) return;
    const result = await intake.submit(
      { entries, rejected },
      {
        wait: false,
        refresh: options.wait,
        requestId: options.requestId,
        ...(options.embedLater ? { embedLater: true } : {}),
      },
    );
    totals.accepted += result.accepted;
    totals.rejected += result.rejected.length;
    for (const r of result.rejected) options.onRejected?.(r);
    jobIds.push(...result.jobIds);
    options.onProgress?.(totals.accepted);
    entries = [];
    rejected = [];
  };

  for await (const item of source) {
    if ('value' in item) entries.push(item);
    else rejected.push(item);
    if (entries.length + rejected.length >= MAX_OBSERVATIONS_PER_REQUEST) await flush();
  }
  await flush();
  totals.jobs = jobIds.length;
  if (options.wait) await intake.waitFor(jobIds, options.waitTimeoutMs);
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
      yield { line, detail: `not valid JSON: ${(error as Error).message}` };
    }
  }
}
