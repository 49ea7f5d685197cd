import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.ts';
import { packageRoot } from '../paths.ts';
import { LRUCache } from 'lru-cache';

/** The embedding settings of the configuration. */
export type EmbeddingConfig = Pick<Config, 'MODEL_DIR' | 'MODEL_ID' | 'EMBEDDINGS' | 'EMBEDDING_DTYPE' | 'EMBEDDING_THREADS'>;

export type EmbedderState = 'off' | 'loading' | 'ready' | 'failed';

/** What `/readyz` and the logs say about the model. */
export interface EmbedderStatus {
  state: EmbedderState;
  /** The model and weights, e.g. `all-MiniLM-L6-v2@q8`; null when off. */
  model: string | null;
  detail: string;
}

/** Counters that make batching and caching observable. */
export interface EmbedderStats {
  /** Inference runs (each is one batch). */
  modelCalls: number;
  queries: number;
  cacheHits: number;
  documents: number;
}

/** Sentence embeddings, computed off the event loop. */
export interface Embedder {
  /** Model and weights, stored beside vectors so a model change is detectable; null when off. */
  readonly modelId: string | null;
  /** Vector length (known once ready; 0 before). */
  readonly dimensions: number;
  status(): EmbedderStatus;
  /** Resolves once loaded (at once when off); rejects if the model cannot load. */
  ready(): Promise<void>;
  /** L2-normalized vectors, in input order. Runs in batches after any waiting queries. */
  embedDocuments(texts: readonly string[]): Promise<Float32Array[]>;
  /** One query's vector. Concurrent queries share inference runs; repeats come from an LRU cache. */
  embedQuery(text: string): Promise<Float32Array>;
  stats(): EmbedderStats;
  close(): Promise<void>;
}

/** Thrown when embeddings are off or the model failed. */
export class EmbeddingsUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsUnavailableError';
  }
}

/** Texts per inference run: large enough to amortize a run, small enough to keep padding cheap. */
const BATCH = 32;
const QUERY_CACHE_ENTRIES = 10_000;

interface Pending {
  texts: string[];
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/** `all-MiniLM-L6-v2@q8` from a folder or hub ID. */
function modelName(config: EmbeddingConfig): string | null {
  const source = config.MODEL_DIR ?? config.MODEL_ID;
  if (!source) return null;
  return `${basename(source.replace(/\/+$/, ''))}@${config.EMBEDDING_DTYPE}`;
}

/**
 * Creates the embedder. With a model configured (MODEL_DIR, or MODEL_ID where the hub is
 * reachable) and EMBEDDINGS not `off`, one worker thread loads it and runs every inference, so the
 * event loop never blocks on the model. Scheduling keeps one batch in flight: queries waiting at
 * that moment go next, together (micro-batching without a timer, so an idle service adds no
 * delay), and only then document batches.
 */
export function createEmbedder(config: EmbeddingConfig, logger?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }): Embedder {
  const model = config.EMBEDDINGS === 'off' ? null : modelName(config);
  const counters: EmbedderStats = { modelCalls: 0, queries: 0, cacheHits: 0, documents: 0 };
  if (model === null) {
    const detail =
      config.EMBEDDINGS === 'off' ? 'EMBEDDINGS=off' : 'no model configured (set MODEL_DIR, or MODEL_ID where the hub is reachable)';
    const unavailable = () => Promise.reject(new EmbeddingsUnavailableError(`embeddings are off: ${detail}`));
    return {
      modelId: null,
      dimensions: 0,
      status: () => ({ state: 'off', model: null, detail }),
      ready: () => Promise.resolve(),
      embedDocuments: unavailable,
      embedQuery: unavailable,
      stats: () => ({ ...counters }),
      close: () => Promise.resolve(),
    };
  }

  const source = config.MODEL_DIR ?? `hub:${config.MODEL_ID}`;
  let state: EmbedderState = 'loading';
  let detail = `loading ${model} from ${source}`;
  let dimensions = 0;
  const cache = new LRUCache<string, Float32Array>({ max: QUERY_CACHE_ENTRIES });
  const inflightQueries = new Map<string, Promise<Float32Array>>();
  const waitingQueries: Array<{ text: string; resolve: (v: Float32Array) => void; reject: (e: Error) => void }> = [];
  const waitingDocuments: Pending[] = [];
  let inFlight: { id: number; pending: Pending } | null = null;
  let nextId = 1;

  let thread: Worker | null = null;
  const loaded = new Promise<void>((resolve, reject) => {
    const fail = (message: string) => {
      state = 'failed';
      detail = `${model} from ${source}: ${message}`;
      reject(new EmbeddingsUnavailableError(detail));
      failAll(new EmbeddingsUnavailableError(detail));
    };
    if (config.MODEL_DIR) {
      try {
        readFileSync(join(config.MODEL_DIR, 'config.json'));
      } catch {
        fail(`no model at ${config.MODEL_DIR} (config.json not found)`);
        return;
      }
    }
    thread = new Worker(join(packageRoot(), 'src/embedding/embedding-thread.mjs'), {
      workerData: { modelDir: config.MODEL_DIR ?? null, modelId: config.MODEL_ID ?? null, dtype: config.EMBEDDING_DTYPE, threads: config.EMBEDDING_THREADS },
    });
    // The thread must not keep a finished process alive (a CLI command, a test file).
    thread.unref();
    thread.on('message', (message: { type: string; id?: number; vectors?: Float32Array; count?: number; dimensions?: number; message?: string }) => {
      if (message.type === 'ready') {
        dimensions = message.dimensions!;
        state = 'ready';
        detail = `${model} (${dimensions} dimensions) from ${source}`;
        logger?.info({ model, source }, 'embedding model loaded');
        resolve();
        pump();
      } else if (message.type === 'failed') {
        fail(message.message ?? 'unknown error');
      } else if (inFlight && message.id === inFlight.id) {
        const { pending } = inFlight;
        inFlight = null;
        if (message.type === 'result') {
          const vectors = message.vectors!;
          const out: Float32Array[] = [];
          for (let i = 0; i < message.count!; i++) out.push(vectors.subarray(i * dimensions, (i + 1) * dimensions));
          pending.resolve(out);
        } else {
          pending.reject(new Error(`embedding failed: ${message.message}`));
        }
        pump();
      }
    });
    thread.on('error', (error) => {
      logger?.warn({ err: error }, 'embedding thread crashed');
      fail(`thread crashed: ${error.message}`);
    });
    thread.on('exit', (code) => {
      if (state !== 'failed' && code !== 0) fail(`thread exited with code ${code}`);
    });
  });
  // Callers observe failures through ready() and status(); an unobserved rejection must not crash.
  loaded.catch(() => undefined);

  function failAll(error: Error) {
    if (inFlight) inFlight.pending.reject(error);
    inFlight = null;
    for (const q of waitingQueries.splice(0)) q.reject(error);
    for (const d of waitingDocuments.splice(0)) d.reject(error);
  }

  function send(pending: Pending) {
    const id = nextId++;
    inFlight = { id, pending };
    counters.modelCalls++;
    thread!.postMessage({ id, texts: pending.texts });
  }

  function pump() {
    if (state !== 'ready' || inFlight) return;
    if (waitingQueries.length > 0) {
      const batch = waitingQueries.splice(0, BATCH);
      send({
        texts: batch.map((q) => q.text),
        resolve: (vectors) => batch.forEach((q, i) => q.resolve(vectors[i]!)),
        reject: (error) => batch.forEach((q) => q.reject(error)),
      });
    } else if (waitingDocuments.length > 0) {
      send(waitingDocuments.shift()!);
    }
  }

  function available(): Error | null {
    return state === 'failed' ? new EmbeddingsUnavailableError(detail) : null;
  }

  return {
    modelId: model,
    get dimensions() {
      return dimensions;
    },
    status: () => ({ state, model, detail }),
    ready: () => loaded,

    async embedDocuments(texts) {
      const error = available();
      if (error) throw error;
      counters.documents += texts.length;
      const batches: Promise<Float32Array[]>[] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        batches.push(
          new Promise((resolve, reject) => {
            waitingDocuments.push({ texts: texts.slice(i, i + BATCH), resolve, reject });
          }),
        );
      }
      pump();
      return (await Promise.all(batches)).flat();
    },

    embedQuery(text) {
      counters.queries++;
      const cached = cache.get(text);
      if (cached) {
        counters.cacheHits++;
        return Promise.resolve(cached);
      }
      const inflight = inflightQueries.get(text);
      if (inflight) return inflight;
      const error = available();
      if (error) return Promise.reject(error);
      const promise = new Promise<Float32Array>((resolve, reject) => {
        waitingQueries.push({ text, resolve, reject });
        pump();
      }).then(
        (vector) => {
          inflightQueries.delete(text);
          cache.set(text, vector);
          return vector;
        },
        (failure: unknown) => {
          inflightQueries.delete(text);
          throw failure;
        },
      );
      inflightQueries.set(text, promise);
      return promise;
    },

    stats: () => ({ ...counters }),

    async close() {
      const running = thread as Worker | null;
      thread = null;
      if (state !== 'failed') {
        state = 'failed';
        detail = 'closed';
      }
      failAll(new EmbeddingsUnavailableError('the embedder is closed'));
      await running?.terminate();
    },
  };
}
