/**
 * The raw side of the intake bench: the same end state reached with nothing but the engine (and,
 * with embeddings, the model). Every final document the service wrote is read back, projected
 * exactly as the service projects it (the metric history copied as written), and written to a
 * scratch file as `_bulk` bodies of ~5 MB (untimed); then those bodies are bulk-indexed into an identical pair of indices (timed), and
 * the embedding texts of the same records are embedded (timed).
 */
import type { Client } from '@elastic/elasticsearch';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { Pool } from 'undici';
import type { AccountRecord, PostRecord } from '../../src/domain/records.ts';
import type { Embedder } from '../../src/embedding/embedder.ts';
import { scanPages } from '../lib/scan.ts';

/**
 * How the service turns a record into its document and its embedding text: the functions of the
 * service tree that was measured (`projectPost` / `projectAccount`, `postEmbeddingText` /
 * `accountEmbeddingText`), so both sides write the very same documents.
 */
export interface ServiceProjection {
  projectPost: (record: PostRecord) => Record<string, unknown>;
  projectAccount: (record: AccountRecord) => Record<string, unknown>;
  postEmbeddingText: (record: PostRecord) => string;
  accountEmbeddingText: (record: AccountRecord) => string;
  /** A long post's passages (service trees from 2026-11-28 on; absent before: heads only). */
  postPassageTexts?: (record: PostRecord) => string[];
}

/** One `_bulk` body in the scratch file. */
export interface BulkSlice {
  offset: number;
  bytes: number;
  docs: number;
}

/** The final documents, as `_bulk` bodies aimed at the raw prefix's write aliases. */
export interface ExportedDocuments {
  file: string;
  batches: BulkSlice[];
  posts: number;
  accounts: number;
  /** Metric history points, copied as the service wrote them (0 when left out). */
  history: number;
  /** Records with a stored vector (embeddings on). */
  withVectors: number;
  bytes: number;
  /** The embedding texts of the same records (non-empty ones), when asked for. */
  texts: string[];
  elapsedMs: number;
}

const PAGE = 1000;

/**
 * Reads every document of the service's posts and accounts indices (a point in time, search_after
 * on `_shard_doc`), projects each `record` with `projectPost` / `projectAccount` and writes
 * `index` actions into `rawPrefix`'s write aliases, cut into bodies of at least `batchBytes`.
 */
export async function exportFinalDocuments(
  client: Client,
  projection: ServiceProjection,
  options: {
    servicePrefix: string;
    rawPrefix: string;
    file: string;
    batchBytes: number;
    collectTexts: boolean;
    /** The service's metric history indices (`<prefix>-metrics-YYYY.MM`), copied into the raw prefix's. */
    historyIndices: string[];
  },
): Promise<ExportedDocuments> {
  const { projectAccount, projectPost, accountEmbeddingText, postEmbeddingText } = projection;
  const started = performance.now();
  const fd = openSync(options.file, 'w');
  const out: ExportedDocuments = {
    file: options.file,
    batches: [],
    posts: 0,
    accounts: 0,
    history: 0,
    withVectors: 0,
    bytes: 0,
    texts: [],
    elapsedMs: 0,
  };
  let parts: string[] = [];
  let partBytes = 0;
  let partDocs = 0;
  const flush = () => {
    if (partDocs === 0) return;
    const buffer = Buffer.from(parts.join(''), 'utf8');
    writeSync(fd, buffer);
    out.batches.push({ offset: out.bytes, bytes: buffer.length, docs: partDocs });
    out.bytes += buffer.length;
    parts = [];
    partBytes = 0;
    partDocs = 0;
  };
  try {
    for (const name of ['posts', 'accounts'] as const) {
      const target = `${options.rawPrefix}-${name}-write`;
      const pages = scanPages<{ record: PostRecord | AccountRecord }>(
        client,
        `${options.servicePrefix}-${name}`,
        {},
        { size: PAGE },
      );
      for await (const hits of pages) {
        for (const hit of hits) {
          const record = hit._source!.record;
          if (record.embedding) out.withVectors++;
          const doc = name === 'posts' ? projectPost(record as PostRecord) : projectAccount(record as AccountRecord);
          const line = `${JSON.stringify({ index: { _index: target, _id: hit._id } })}\n${JSON.stringify(doc)}\n`;
          parts.push(line);
          partBytes += Buffer.byteLength(line);
          partDocs++;
          if (options.collectTexts) {
            const text =
              name === 'posts'
                ? postEmbeddingText(record as PostRecord)
                : accountEmbeddingText(record as AccountRecord);
            if (text.length > 0) out.texts.push(text);
            if (name === 'posts' && text.length > 0 && projection.postPassageTexts)
              out.texts.push(...projection.postPassageTexts(record as PostRecord));
          }
          if (partBytes >= options.batchBytes) flush();
        }
        out[name] += hits.length;
      }
      flush();
    }
    // The metric history: the service writes a point per observation that moves a counter, and
    // those documents are part of the end state (each month's index, from the same template).
    for (const index of options.historyIndices) {
      const target = `${options.rawPrefix}${index.slice(options.servicePrefix.length)}`;
      for await (const hits of scanPages<Record<string, unknown>>(client, index, {}, { size: PAGE })) {
        for (const hit of hits) {
          const line = `${JSON.stringify({ index: { _index: target, _id: hit._id } })}\n${JSON.stringify(hit._source)}\n`;
          parts.push(line);
          partBytes += Buffer.byteLength(line);
          partDocs++;
          if (partBytes >= options.batchBytes) flush();
        }
        out.history += hits.length;
      }
    }
    flush();
  } finally {
    closeSync(fd);
  }
  out.elapsedMs = performance.now() - started;
  return out;
}

/** What the raw bulk took. */
export interface RawBulkResult {
  /** From the first body sent to the end of the refresh. */
  elapsedMs: number;
  refreshMs: number;
  docs: number;
}

/**
 * Sends every body of `exported` to `POST /_bulk`, `inFlight` at a time, then refreshes
 * `refreshIndices`. Fails on any item error.
 */
export async function rawBulk(
  exported: ExportedDocuments,
  options: { elasticsearchUrl: string; inFlight: number; refreshIndices: string[] },
): Promise<RawBulkResult> {
  const pool = new Pool(options.elasticsearchUrl, {
    connections: options.inFlight,
    pipelining: 1,
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  const fd = openSync(exported.file, 'r');
  let next = 0;
  let docs = 0;
  let failed = false;
  const sender = async () => {
    while (!failed && next < exported.batches.length) {
      const slice = exported.batches[next++]!;
      const body = Buffer.allocUnsafe(slice.bytes);
      readSync(fd, body, 0, slice.bytes, slice.offset);
      const response = await pool.request({
        method: 'POST',
        path: '/_bulk',
        headers: { 'content-type': 'application/x-ndjson' },
        body,
      });
      const answer = (await response.body.json()) as {
        errors: boolean;
        items: Array<Record<string, { status: number; error?: { type: string; reason: string } }>>;
      };
      if (response.statusCode !== 200) throw new Error(`_bulk answered ${response.statusCode}`);
      if (answer.errors) {
        const first = answer.items.map((item) => Object.values(item)[0]!).find((r) => r.error);
        throw new Error(`_bulk item failed: ${first?.error?.type}: ${first?.error?.reason}`);
      }
      docs += answer.items.length;
    }
  };
  const started = performance.now();
  let refreshStarted: number;
  try {
    const senders = Array.from({ length: Math.min(options.inFlight, exported.batches.length) }, () =>
      sender().catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    );
    await Promise.all(senders);
    refreshStarted = performance.now();
    const refresh = await pool.request({ method: 'POST', path: `/${options.refreshIndices.join(',')}/_refresh` });
    await refresh.body.text();
    if (refresh.statusCode !== 200) throw new Error(`_refresh answered ${refresh.statusCode}`);
  } finally {
    closeSync(fd);
    await pool.close();
  }
  const ended = performance.now();
  return { elapsedMs: ended - started, refreshMs: ended - refreshStarted, docs };
}

/** What embedding the texts took. */
export interface RawEmbedResult {
  texts: number;
  elapsedMs: number;
}

/**
 * Embeds `texts` with the embedder's `embedDocuments` (one onnxruntime run per text on the model
 * thread: bench/embeddings.md, "The model thread: query latency and document throughput",
 * measures it at 0.98× raw onnxruntime-node), `chunk` texts per call. The model must already be
 * loaded.
 */
export async function rawEmbed(embedder: Embedder, texts: readonly string[], chunk = 256): Promise<RawEmbedResult> {
  const started = performance.now();
  for (let i = 0; i < texts.length; i += chunk) {
    const vectors = await embedder.embedDocuments(texts.slice(i, i + chunk));
    if (vectors.length !== Math.min(chunk, texts.length - i))
      throw new Error('embedder returned the wrong number of vectors');
  }
  return { texts: texts.length, elapsedMs: performance.now() - started };
}
