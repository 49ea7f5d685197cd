/**
 * Bulk request bodies written as the writes are planned, each document serialized straight into
 * its request's buffer.
 *
 * Why: a planned document kept as a JSON string (~8 KB for a post) until its bulk request is sent
 * outlives the worker's young generation, is copied and promoted by the collector, then copied once
 * more into the request body. Written at once, each string dies young and the bytes live outside
 * the JS heap (bench/intake.md, "Bulk bodies built as planned, and follow-up merge slices").
 */

/** Bounds of one bulk request: Elasticsearch's guidance is a few MB per request. */
export interface BulkLimits {
  maxDocs: number;
  maxBytes: number;
}

/** One bulk request: its NDJSON body and what each of its lines is, in order. */
export interface BulkChunk<T> {
  body: Buffer;
  items: T[];
}

const INITIAL_CAPACITY = 64 * 1024;

/**
 * Collects writes into bulk requests of at most `maxDocs` documents and about `maxBytes` (a request
 * closes before a document that would take it past the bound; a single larger document goes alone).
 */
export function createBulkBodies<T>(limits: BulkLimits) {
  const chunks: BulkChunk<T>[] = [];
  let buffer = Buffer.alloc(0);
  let at = 0;
  let items: T[] = [];

  function seal(): void {
    if (items.length === 0) return;
    chunks.push({ body: buffer.subarray(0, at), items });
    buffer = Buffer.alloc(0);
    at = 0;
    items = [];
  }

  /** Room for `bytes` more: the buffer doubles, keeping what is written. */
  function reserve(bytes: number): void {
    if (at + bytes <= buffer.length) return;
    let capacity = Math.max(INITIAL_CAPACITY, buffer.length * 2);
    while (capacity < at + bytes) capacity *= 2;
    const grown = Buffer.allocUnsafe(capacity);
    buffer.copy(grown, 0, 0, at);
    buffer = grown;
  }

  return {
    /**
     * Adds one write: its action line (`{"index": …}`) and its document, already serialized; a
     * `delete` has no document (null).
     */
    add(item: T, action: object, doc: string | null): void {
      const line = JSON.stringify(action);
      // UTF-8 takes at most 3 bytes per UTF-16 code unit: an upper bound without scanning the text.
      const bound = 3 * (line.length + (doc?.length ?? 0)) + 2;
      if (items.length > 0 && (items.length >= limits.maxDocs || at + bound > limits.maxBytes)) {
        // Close on the exact size when the bound is pessimistic (non-ASCII text), not on the bound.
        const exact = Buffer.byteLength(line) + (doc === null ? 0 : Buffer.byteLength(doc)) + 2;
        if (items.length >= limits.maxDocs || at + exact > limits.maxBytes) seal();
      }
      reserve(bound);
      at += buffer.write(line, at);
      buffer[at++] = 0x0a;
      if (doc !== null) {
        at += buffer.write(doc, at);
        buffer[at++] = 0x0a;
      }
      items.push(item);
    },

    /** The requests, the last one closed; the collector is empty afterwards. */
    finish(): BulkChunk<T>[] {
      seal();
      return chunks.splice(0);
    },
  };
}
