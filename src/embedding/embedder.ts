import { LRUCache } from 'lru-cache';
import { startModelThread, type ModelThread, type TextKind } from './model-thread.ts';
import { planEmbedder, type EmbeddingConfig, type Plan } from './model-plan.ts';

export type { EmbeddingConfig } from './model-plan.ts';

export type EmbedderState = 'off' | 'loading' | 'ready' | 'failed';

/** What `/readyz` and the logs say about the model. */
export interface EmbedderStatus {
  state: EmbedderState;
  /** Model and weights, e.g. `all-MiniLM-L6-v2@q8`; null when off. */
  model: string | null;
  /** For people: `all-MiniLM-L6-v2 (q8, 384 dimensions, 2 threads) from /models/all-MiniLM-L6-v2`, why it is off, or the load error. */
  detail: string;
}

/** Counters since creation, so batching and caching are observable (tests, benchmarks). */
export interface EmbedderStats {
  /** Requests to the model thread; each carries one batch (concurrent queries, or a slice of a document list). */
  modelCalls: number;
  /** Texts that went through the model (documents and uncached queries); each is one onnxruntime run. */
  textsEmbedded: number;
  /** embedQuery calls. */
  queries: number;
  /** embedQuery calls answered from the cache, without the model. */
  cacheHits: number;
  /** Seconds the model thread spent on the calls (their sum: divided by modelCalls, the mean latency). */
  modelSeconds: number;
}

/** Sentence embeddings, computed on a worker thread so the event loop never waits on the model. */
export interface Embedder {
  /** Identifies model + weights, stored beside vectors so a model change is detectable, e.g. `all-MiniLM-L6-v2@q8`. Null when off. */
  readonly modelId: string | null;
  /** Vector length: `hidden_size` of the model folder's config.json (384 for all-MiniLM-L6-v2); for a hub model, 0 until ready. */
  readonly dimensions: number;
  status(): EmbedderStatus;
  /** Resolves when loaded (at once when off); rejects with {@link EmbeddingsUnavailableError} if loading failed. */
  ready(): Promise<void>;
  /**
   * L2-normalised vectors, one per text, in input order; an empty one for a text the model cannot
   * read (mostly word pieces its vocabulary lacks: emoji runs, scripts outside it), which must
   * never count as similar to anything. Texts longer than the model's 256 tokens are truncated.
   * Waits for the model while it loads; rejects with {@link EmbeddingsUnavailableError} when off
   * or failed.
   */
  embedDocuments(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * One query's vector (empty when the model cannot read it, as in embedDocuments). Concurrent queries travel to the model thread together (ahead of waiting
   * document batches); repeats of the exact text come from an LRU cache without touching the model.
   */
  embedQuery(text: string): Promise<Float32Array>;
  /**
   * Short query texts in one run of the model, for comparing with each other (a question without
   * each of its words in turn, src/text/question-weights.ts): about the cost of one of them alone.
   * Each is read as a whole sentence (Prompts.sentence: without bge-small-en-v1.5's instruction for
   * short queries). Their vectors depend on the run they share, so they are cached as that run,
   * under all its texts (a repeated question runs no model), never one by one; served ahead of
   * waiting documents, like queries.
   */
  embedQueriesTogether(texts: readonly string[]): Promise<Float32Array[]>;
  stats(): EmbedderStats;
  /** Ends the thread; later calls reject with {@link EmbeddingsUnavailableError}. */
  close(): Promise<void>;
}

/** Thrown when embeddings are off, the model failed to load, its thread died, or the embedder is closed. */
export class EmbeddingsUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EmbeddingsUnavailableError';
  }
}

/** What createEmbedder logs. */
export interface EmbedderLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Texts per request to the model thread. The thread runs each text on its own and answers text by
 * text (see embedding-thread.mjs), so a batch saves round trips and sets how long a query can wait
 * behind documents (8 texts of 256 tokens ≈ 0.4 s), not how much onnxruntime does per run.
 */
const QUERY_BATCH = 32;
const DOCUMENT_BATCH = 8;
/** What an entry costs besides its vector and key (measured: 10,000 entries took ~17.9 MiB). */
const QUERY_CACHE_ENTRY_OVERHEAD = 200;

/**
 * Creates the embedder the configuration asks for: off, failed (a model folder that cannot load;
 * `ready()` rejects), or loading on its own worker thread. Never throws; start-up code awaits
 * `ready()` and decides.
 */
export function createEmbedder(config: EmbeddingConfig, logger?: EmbedderLogger): Embedder {
  const decided = planEmbedder(config);
  if (decided.kind === 'thread') return createThreadEmbedder(decided, logger);
  const stats: EmbedderStats = { modelCalls: 0, textsEmbedded: 0, queries: 0, cacheHits: 0, modelSeconds: 0 };
  const state: EmbedderState = decided.kind;
  const modelId = decided.kind === 'failed' ? decided.modelId : null;
  if (decided.kind === 'failed')
    logger?.warn({ embeddings: { state, model: modelId, detail: decided.detail } }, 'embedding model unavailable');
  const unavailable = () => new EmbeddingsUnavailableError(decided.detail);
  return {
    modelId,
    dimensions: 0,
    status: () => ({ state, model: modelId, detail: decided.detail }),
    ready: () => (state === 'off' ? Promise.resolve() : Promise.reject(unavailable())),
    embedDocuments: () => Promise.reject(unavailable()),
    embedQuery: () => {
      stats.queries++;
      return Promise.reject(unavailable());
    },
    embedQueriesTogether: () => Promise.reject(unavailable()),
    stats: () => ({ ...stats }),
    close: () => Promise.resolve(),
  };
}

interface Job {
  texts: string[];
  kind: TextKind;
  together?: boolean;
  onVector?: (index: number, vector: Float32Array) => void;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

function createThreadEmbedder(planned: Extract<Plan, { kind: 'thread' }>, logger?: EmbedderLogger): Embedder {
  const { modelId, source } = planned;
  const { dtype, threads } = planned.thread;
  let state: EmbedderState = 'loading';
  let detail = `loading ${modelId} from ${source}`;
  let dimensions = planned.dimensions;
  const stats: EmbedderStats = { modelCalls: 0, textsEmbedded: 0, queries: 0, cacheHits: 0, modelSeconds: 0 };
  // Bounded in bytes (a query text may be long); 0 turns the cache off. A text's key is the text;
  // texts run together are one entry, keyed by all of them after a NUL (which no single key starts
  // with: see togetherKey).
  const cache = new LRUCache<string, Float32Array | Float32Array[]>({
    maxSize: Math.max(1, planned.cacheBytes),
    sizeCalculation: (value, key) =>
      (Array.isArray(value) ? value.reduce((sum, v) => sum + v.byteLength, 0) : value.byteLength) +
      2 * key.length +
      QUERY_CACHE_ENTRY_OVERHEAD,
  });
  const togetherKey = (texts: readonly string[]) => `\u0000${texts.join('\u0000')}`;
  const caching = planned.cacheBytes > 0;
  /** Uncached queries on their way, so that concurrent callers of one text share a single slot. */
  const queriesUnderway = new Map<string, Promise<Float32Array>>();
  const queryQueue: Array<{ text: string; resolve: (vector: Float32Array) => void; reject: (error: Error) => void }> =
    [];
  const documentQueue: Job[] = [];
  /** Texts asked together (embedQueriesTogether), served after waiting queries, before documents. */
  const togetherQueue: Job[] = [];
  let running = false;
  let flushScheduled = false;

  let settleLoad!: (error?: Error) => void;
  const loaded = new Promise<void>((resolveLoad, rejectLoad) => {
    settleLoad = (error) => (error ? rejectLoad(error) : resolveLoad());
  });
  // Start-up code observes a failed load through ready() and status(); nobody awaiting is fine.
  loaded.catch(() => undefined);

  function fail(message: string): void {
    if (state === 'failed') return;
    const wasLoading = state === 'loading';
    state = 'failed';
    detail = message === CLOSED ? `${modelId}: closed` : `${modelId} from ${source}: ${message}`;
    const error = new EmbeddingsUnavailableError(detail);
    settleLoad(error);
    for (const query of queryQueue.splice(0)) query.reject(error);
    for (const job of [...togetherQueue.splice(0), ...documentQueue.splice(0)]) job.reject(error);
    if (message !== CLOSED)
      logger?.warn(
        { embeddings: { state, model: modelId, detail } },
        wasLoading ? 'embedding model failed to load' : 'embedding model failed',
      );
    thread.keepAlive(false);
  }

  const thread: ModelThread = startModelThread(planned.thread, {
    ready({ dimensions: reported, loadMs }) {
      if (dimensions !== 0 && reported !== dimensions) {
        fail(`the model returns ${reported} dimensions but its config.json says hidden_size ${dimensions}`);
        return;
      }
      dimensions = reported;
      state = 'ready';
      const noise = planned.thread.noise;
      // The test-only perturbation says so wherever the model is described (/readyz, the log).
      const perturbed = noise ? `, perturbed by EMBEDDING_NOISE ${noise.distance}:${noise.seed}` : '';
      detail = `${modelId.split('@')[0]} (${dtype}, ${dimensions} dimensions, ${threads} thread${threads === 1 ? '' : 's'}${perturbed}) from ${source}`;
      logger?.info({ embeddings: { state, model: modelId, detail }, loadMs }, 'embedding model loaded');
      settleLoad();
      pump();
    },
    failed: (message) => fail(message),
  });
  // Loading keeps the process alive (a CLI awaiting ready() must not exit under it); see pump().
  thread.keepAlive(true);

  /** Sends the next request if the thread is free: waiting queries first, all together, then one document batch. */
  function pump(): void {
    if (state !== 'ready' || running) return;
    let job: Job | undefined;
    if (queryQueue.length > 0) {
      const batch = queryQueue.splice(0, QUERY_BATCH);
      job = {
        texts: batch.map((q) => q.text),
        kind: 'query',
        // Each query is answered as soon as its own vector arrives (resolving twice is a no-op).
        onVector: (i, vector) => batch[i]!.resolve(vector),
        resolve: (vectors) => batch.forEach((q, i) => q.resolve(vectors[i]!)),
        reject: (error) => batch.forEach((q) => q.reject(error)),
      };
    } else {
      job = togetherQueue.shift() ?? documentQueue.shift();
    }
    thread.keepAlive(job !== undefined);
    if (!job) return;
    const { texts, kind, onVector, together, resolve: done, reject } = job;
    running = true;
    stats.modelCalls++;
    stats.textsEmbedded += texts.length;
    const started = performance.now();
    thread
      .run(texts, kind, onVector, together === true)
      .then(done, (error: Error) =>
        reject(state === 'failed' ? new EmbeddingsUnavailableError(detail, { cause: error }) : error),
      )
      .finally(() => {
        stats.modelSeconds += (performance.now() - started) / 1000;
        running = false;
        pump();
      });
  }

  /**
   * Runs the queue once the current event-loop turn is over, so callers of the same turn (a burst
   * of requests) share one run. An idle embedder adds no delay beyond that turn; a busy one
   * collects everything that arrives during the current run, which is where batching pays.
   */
  function schedule(): void {
    if (flushScheduled || running) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      pump();
    });
  }

  function unavailable(): EmbeddingsUnavailableError | null {
    return state === 'failed' ? new EmbeddingsUnavailableError(detail) : null;
  }

  return {
    modelId,
    get dimensions() {
      return dimensions;
    },
    status: () => ({ state, model: modelId, detail }),
    ready: () => loaded,

    async embedDocuments(texts) {
      const error = unavailable();
      if (error) throw error;
      const batches: Promise<Float32Array[]>[] = [];
      for (let start = 0; start < texts.length; start += DOCUMENT_BATCH) {
        batches.push(
          new Promise((resolveBatch, rejectBatch) => {
            documentQueue.push({
              texts: texts.slice(start, start + DOCUMENT_BATCH),
              kind: 'document',
              resolve: resolveBatch,
              reject: rejectBatch,
            });
          }),
        );
      }
      schedule();
      return (await Promise.all(batches)).flat();
    },

    embedQuery(text) {
      stats.queries++;
      const cached = text.startsWith('\u0000') ? undefined : cache.get(text);
      if (cached && !Array.isArray(cached)) {
        stats.cacheHits++;
        // A copy: a caller that scales or reuses its vector must not change the cache.
        return Promise.resolve(cached.slice());
      }
      const error = unavailable();
      if (error) return Promise.reject(error);
      let underway = queriesUnderway.get(text);
      if (!underway) {
        underway = new Promise<Float32Array>((resolveQuery, rejectQuery) => {
          queryQueue.push({ text, resolve: resolveQuery, reject: rejectQuery });
          schedule();
        }).then(
          (vector) => {
            queriesUnderway.delete(text);
            if (caching) cache.set(text, vector);
            return vector;
          },
          (failure: unknown) => {
            queriesUnderway.delete(text);
            throw failure;
          },
        );
        queriesUnderway.set(text, underway);
      }
      return underway.then((vector) => vector.slice());
    },

    embedQueriesTogether(texts) {
      const error = unavailable();
      if (error) return Promise.reject(error);
      if (texts.length === 0) return Promise.resolve([]);
      stats.queries += texts.length;
      const key = togetherKey(texts);
      const cached = cache.get(key);
      if (Array.isArray(cached)) {
        stats.cacheHits += texts.length;
        return Promise.resolve(cached.map((v) => v.slice()));
      }
      return new Promise<Float32Array[]>((resolve, reject) => {
        togetherQueue.push({ texts: [...texts], kind: 'sentence', together: true, resolve, reject });
        schedule();
      }).then((vectors) => {
        if (caching)
          cache.set(
            key,
            vectors.map((v) => v.slice()),
          );
        return vectors;
      });
    },

    stats: () => ({ ...stats }),

    async close() {
      fail(CLOSED);
      await thread.close();
    },
  };
}

const CLOSED = 'closed';
