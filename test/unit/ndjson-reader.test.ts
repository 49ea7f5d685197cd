import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../../src/internal/errors.ts';
import { readNdjson } from '../../src/services/intake/ndjson-reader.ts';

/** A body arriving in chunks that split lines (and a multi-byte character) anywhere. */
function chunked(text: string, size = 7): Readable {
  const bytes = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
  return Readable.from(parts);
}

const limits = { maxBytes: 1024 * 1024, maxEntries: 5 };

describe('readNdjson', () => {
  it('parses each line on its own across chunk boundaries, numbering lines as in the file', async () => {
    const body = '\uFEFF{"a":1}\r\n\n{"b":"é😀"}\nnot json\n{"c":3}';
    const { entries, rejected } = await readNdjson(chunked(body), limits);
    expect(entries).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { b: 'é😀' } },
      { line: 5, value: { c: 3 } },
    ]);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ line: 4, detail: expect.stringMatching(/^not valid JSON: /) });
  });

  it('stops at the first line past the entry limit with a 413', async () => {
    const body = Array.from({ length: 6 }, (_, i) => JSON.stringify({ i })).join('\n');
    await expect(readNdjson(chunked(body), limits)).rejects.toThrow(PayloadTooLargeError);
    const five = Array.from({ length: 5 }, (_, i) => JSON.stringify({ i })).join('\n') + '\n\n';
    expect((await readNdjson(chunked(five), limits)).entries).toHaveLength(5);
  });

  it('stops reading a body past the byte limit with a 413, without reading the rest', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1;
        this.push(produced > 10_000 ? null : '{"x":"' + 'y'.repeat(1000) + '"}\n');
      },
    });
    await expect(readNdjson(endless, { maxBytes: 50_000, maxEntries: 100_000 })).rejects.toThrow(
      /larger than 50000 bytes/,
    );
    expect(produced).toBeLessThan(200);
  });
});
