import { describe, expect, it } from 'vitest';
import { createBulkBodies } from '../../src/engine/elasticsearch/documents/bulk-bodies.ts';

/** The NDJSON lines of a body, parsed. */
function lines(body: Buffer): unknown[] {
  const text = body.toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

describe('bulk bodies', () => {
  it('writes an action line and a document line per write, in order, each request naming its writes', () => {
    const bodies = createBulkBodies<string>({ maxDocs: 2, maxBytes: 1024 * 1024 });
    for (const id of ['a', 'b', 'c'])
      bodies.add(id, { index: { _id: id } }, JSON.stringify({ id, caption: `café ${id} 日本語 🎉` }));
    const chunks = bodies.finish();
    expect(chunks.map((c) => c.items)).toEqual([['a', 'b'], ['c']]);
    expect(lines(chunks[0]!.body)).toEqual([
      { index: { _id: 'a' } },
      { id: 'a', caption: 'café a 日本語 🎉' },
      { index: { _id: 'b' } },
      { id: 'b', caption: 'café b 日本語 🎉' },
    ]);
    expect(lines(chunks[1]!.body)).toEqual([{ index: { _id: 'c' } }, { id: 'c', caption: 'café c 日本語 🎉' }]);
    expect(bodies.finish()).toEqual([]);
  });

  it('closes a request before the document that would take it past the byte bound, and sends an oversized document alone', () => {
    const maxBytes = 4096;
    const bodies = createBulkBodies<number>({ maxDocs: 500, maxBytes });
    // Multi-byte text: the exact UTF-8 size decides, not the pessimistic bound.
    const doc = (n: number, chars: number) => JSON.stringify({ n, text: 'é'.repeat(chars) });
    for (let n = 0; n < 12; n++) bodies.add(n, { index: { _id: String(n) } }, doc(n, 300));
    bodies.add(12, { index: { _id: '12' } }, doc(12, 5000));
    bodies.add(13, { index: { _id: '13' } }, doc(13, 10));
    const chunks = bodies.finish();
    for (const chunk of chunks.slice(0, -2)) {
      expect(chunk.body.length).toBeLessThanOrEqual(maxBytes);
      // Full up to the bound: one more ~650-byte write would not have fitted.
      expect(chunk.body.length).toBeGreaterThan(maxBytes - 700);
    }
    expect(chunks.flatMap((c) => c.items)).toEqual([...Array(14).keys()]);
    expect(chunks.at(-2)!.items).toEqual([12]);
    expect(chunks.at(-2)!.body.length).toBeGreaterThan(maxBytes);
    expect(chunks.at(-1)!.items).toEqual([13]);
    const parsed = chunks.flatMap((c) => lines(c.body));
    expect(parsed.filter((_, i) => i % 2 === 1).map((d) => (d as { n: number }).n)).toEqual([...Array(14).keys()]);
  });

  it('grows its buffer past the initial capacity without losing what was written', () => {
    const bodies = createBulkBodies<number>({ maxDocs: 1000, maxBytes: 10 * 1024 * 1024 });
    const text = 'x'.repeat(50_000);
    for (let n = 0; n < 5; n++) bodies.add(n, { create: { _id: String(n) } }, JSON.stringify({ n, text }));
    const [chunk] = bodies.finish();
    expect(lines(chunk!.body)).toEqual(
      [...Array(5).keys()].flatMap((n) => [{ create: { _id: String(n) } }, { n, text }]),
    );
  });
});
