/**
 * The service side's load: the seed generator's observations, written once to a scratch NDJSON
 * file cut into intake requests (untimed, so generating them never competes with the service for
 * the two cores), then sent through the HTTP intake with a few requests in flight.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { Pool } from 'undici';
import { generateObservations, type SeedOptions } from '../../src/seed/generator.ts';

/** One intake request's slice of the scratch file. */
export interface RequestSlice {
  offset: number;
  bytes: number;
  lines: number;
}

/** The generated dataset, as requests. */
export interface GeneratedLoad {
  file: string;
  requests: RequestSlice[];
  observations: number;
  bytes: number;
  kinds: Record<string, number>;
}

/** Writes the dataset of `options` to `file`, `perRequest` observations per request. */
export function generateLoad(options: SeedOptions, perRequest: number, file: string): GeneratedLoad {
  return writeLoad(generateObservations(options), perRequest, file);
}

/** Writes `source`'s observations to `file` as intake requests of `perRequest` observations each. */
export function writeLoad(source: Iterable<Record<string, unknown>>, perRequest: number, file: string): GeneratedLoad {
  const fd = openSync(file, 'w');
  const requests: RequestSlice[] = [];
  const kinds: Record<string, number> = {};
  let offset = 0;
  let observations = 0;
  let lines: string[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    const buffer = Buffer.from(lines.join('\n') + '\n', 'utf8');
    writeSync(fd, buffer);
    requests.push({ offset, bytes: buffer.length, lines: lines.length });
    offset += buffer.length;
    lines = [];
  };
  try {
    for (const observation of source) {
      const kind = String(observation['kind']);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      observations++;
      lines.push(JSON.stringify(observation));
      if (lines.length === perRequest) flush();
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { file, requests, observations, bytes: offset, kinds };
}

/** What sending the load through the HTTP intake took. */
export interface SendResult {
  accepted: number;
  /** From the first request sent to the last answer received. */
  elapsedMs: number;
  /** performance.now() when the first request was sent. */
  startedAt: number;
  requestMs: number[];
  /** Requests answered 503 (the intake's backpressure) and sent again after Retry-After. */
  refused: number;
}

/**
 * Sends every request of `load` to `POST /internal/v1/social/observations` (202, no wait), at most
 * `inFlight` at once over as many keep-alive connections. Fails unless every line is accepted.
 */
export async function sendLoad(
  load: GeneratedLoad,
  options: { baseUrl: string; key: string; inFlight: number; onProgress?: (accepted: number) => void },
): Promise<SendResult> {
  const pool = new Pool(options.baseUrl, {
    connections: options.inFlight,
    pipelining: 1,
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  const fd = openSync(load.file, 'r');
  const requestMs: number[] = [];
  let next = 0;
  let accepted = 0;
  /** Requests answered 503 (backpressure) and sent again. */
  let refused = 0;
  let failed = false;
  const read = (slice: RequestSlice) => {
    const buffer = Buffer.allocUnsafe(slice.bytes);
    readSync(fd, buffer, 0, slice.bytes, slice.offset);
    return buffer;
  };
  const sender = async () => {
    while (!failed && next < load.requests.length) {
      const slice = load.requests[next++]!;
      const body = read(slice);
      let response: Awaited<ReturnType<typeof pool.request>>;
      let text: string;
      for (;;) {
        const sent = performance.now();
        response = await pool.request({
          method: 'POST',
          path: '/internal/v1/social/observations',
          headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/x-ndjson' },
          body,
        });
        text = await response.body.text();
        requestMs.push(performance.now() - sent);
        // 503 means "nothing accepted, retry": a pipeline waits Retry-After and sends it again
        // (the intake's backpressure when the workers are behind).
        if (response.statusCode !== 503) break;
        refused++;
        await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers['retry-after'] ?? 1)));
      }
      if (response.statusCode !== 202) throw new Error(`intake answered ${response.statusCode}: ${text.slice(0, 500)}`);
      const answer = JSON.parse(text) as { accepted: number; rejected: Array<{ line: number; detail: string }> };
      if (answer.accepted !== slice.lines || answer.rejected.length > 0) {
        throw new Error(
          `intake accepted ${answer.accepted} of ${slice.lines}: ${JSON.stringify(answer.rejected.slice(0, 3))}`,
        );
      }
      accepted += answer.accepted;
      options.onProgress?.(accepted);
    }
  };
  const startedAt = performance.now();
  try {
    const senders = Array.from({ length: Math.min(options.inFlight, load.requests.length) }, () =>
      sender().catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    );
    await Promise.all(senders);
  } finally {
    closeSync(fd);
    await pool.close();
  }
  return { accepted, elapsedMs: performance.now() - startedAt, startedAt, requestMs, refused };
}
