import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { messageOf, PayloadTooLargeError } from '../../internal/errors.ts';
import type { IntakeEntry, RejectedLine } from './intake-service.ts';

/**
 * Reads an NDJSON body as it arrives: each line is parsed on its own (a line that is not JSON is
 * rejected alone, with its 1-based number; blank lines are skipped but counted), and the text is
 * never held whole, only the parsed entries. Reading stops with a 413 as soon as the body passes
 * `maxBytes` or carries more than `maxEntries` lines, so an oversized body costs no more than the
 * limits.
 */
export async function readNdjson(
  stream: Readable,
  limits: { maxBytes: number; maxEntries: number },
): Promise<{ entries: IntakeEntry[]; rejected: RejectedLine[] }> {
  const entries: IntakeEntry[] = [];
  const rejected: RejectedLine[] = [];
  let bytes = 0;
  // In a holder: `stop` sets it from callbacks that flow analysis does not follow.
  const limit: { tooLarge: PayloadTooLargeError | null } = { tooLarge: null };
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const stop = (error: PayloadTooLargeError) => {
    limit.tooLarge ??= error;
    // Ends the line iterator too: a destroyed input emits no 'end' for readline to see.
    lines.close();
    stream.destroy();
  };
  stream.on('data', (chunk: Buffer | string) => {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (bytes > limits.maxBytes)
      stop(new PayloadTooLargeError(`The request body is larger than ${limits.maxBytes} bytes.`));
  });
  let line = 0;
  try {
    for await (const raw of lines) {
      line += 1;
      const content = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      if (content.trim() === '') continue;
      if (entries.length + rejected.length >= limits.maxEntries) {
        stop(
          new PayloadTooLargeError(
            `This request carries more than ${limits.maxEntries} observations; send at most ${limits.maxEntries} per request.`,
          ),
        );
        break;
      }
      try {
        const value: unknown = JSON.parse(content);
        entries.push({ line, value });
      } catch (error) {
        rejected.push({ line, detail: `not valid JSON: ${messageOf(error)}` });
      }
    }
  } catch (error) {
    if (!limit.tooLarge) throw error;
  } finally {
    lines.close();
  }
  if (limit.tooLarge) throw limit.tooLarge;
  return { entries, rejected };
}
