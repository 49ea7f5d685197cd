import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../internal/paths.ts';

/** What the model thread loads (its workerData; see embedding-thread.mjs). */
export interface ModelThreadOptions {
  /** Where the model is: a folder on disk with the weights file to load from it, or a hub id. */
  source: { folder: string; weights: string } | { hubId: string };
  dtype: 'q8' | 'fp32';
  /** onnxruntime intra-op threads, ≥ 1. */
  threads: number;
  /** Tokens per text: sentence-transformers' max_seq_length when the folder says, at most 256 (model-plan.ts, MAX_TOKENS_PER_RUN). */
  maxTokens: number;
  /**
   * What the model was trained to read before a query and before a document (e5's `query: ` and
   * `passage: `; sentence-transformers' `prompts`); empty for a model that takes texts as they are.
   */
  prompts: Prompts;
  /**
   * How a text's token states become its vector (sentence-transformers' `1_Pooling/config.json`):
   * `mean` over its tokens (all-MiniLM-L6-v2, e5), or the first token's, `cls` (BGE). Absent: mean.
   */
  pooling?: Pooling;
  /** Test-only (config EMBEDDING_NOISE): every vector moved to cosine 1 − distance of itself, seeded by `seed` and its text. */
  noise?: { distance: number; seed: number } | null;
}

/** The text a model reads before each kind of text (empty: none). */
export interface Prompts {
  query: string;
  document: string;
  /**
   * Before a query that is a whole sentence (a question, src/text/question-weights.ts): the query's
   * prompt, unless the model's is an instruction for short queries its authors say a sentence does
   * without (model-plan.ts, `sentencePrompt`).
   */
  sentence: string;
}

/** How a text's token states become one vector, before L2 normalisation. */
export type Pooling = 'mean' | 'cls';

/** Which kind of text a run embeds: queries and documents may carry different prompts. */
export type TextKind = keyof Prompts;

/** What the owner hears from the thread. Each is called at most once, and never after close(). */
export interface ModelThreadEvents {
  ready(info: { dimensions: number; loadMs: number }): void;
  /** The model did not load, or the thread died; every later run rejects. */
  failed(message: string): void;
}

/** The client side of one model thread. */
export interface ModelThread {
  /**
   * Embeds texts one after another: L2-normalised vectors in input order. `onVector` hears each
   * vector as soon as it is made.
   */
  run(
    texts: readonly string[],
    kind: TextKind,
    onVector?: (index: number, vector: Float32Array) => void,
    /** In one run of the model (embedding-thread.mjs, embedTogether), else one run each. */
    together?: boolean,
  ): Promise<Float32Array[]>;
  /** Whether the thread keeps the process alive: only while there is work, so an idle embedder never holds a CLI open. */
  keepAlive(on: boolean): void;
  close(): Promise<void>;
}

type FromThread =
  | { type: 'ready'; dimensions: number; loadMs: number }
  | { type: 'failed'; message: string }
  | { type: 'vector'; id: number; index: number; vector: Float32Array }
  | { type: 'done'; id: number }
  | { type: 'error'; id: number; message: string };

interface Pending {
  vectors: Float32Array[];
  onVector: ((index: number, vector: Float32Array) => void) | undefined;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/**
 * The thread's entry, a plain .mjs file. From dist/ too it is taken from src/: tsc does not copy
 * .mjs files, and the image ships src/ anyway (Dockerfile).
 */
function threadEntry(): string {
  return join(packageRoot(), 'src', 'embedding', 'embedding-thread.mjs');
}

/** How long close() waits for the thread to finish its current run before ending it by force. */
const CLOSE_GRACE_MS = 10_000;

/**
 * The thread's own V8 heap. Its live data is ~20 MiB (transformers.js, the tokenizer) and each
 * run leaves a few KiB of garbage, yet by default it gets the main thread's 16 MiB semi-spaces
 * and a heap limit sized from the machine, so it kept ~35 MiB. A 4 MiB young generation and a
 * 128 MiB old-generation limit (which also makes V8 grow the heap less eagerly) keep ~15 MiB
 * less resident and leave 5x the live data as headroom (bench/memory.md, "Where the memory went").
 */
const THREAD_HEAP_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };

/**
 * onnxruntime 1.29 and later collect usage telemetry on Linux too: its first session writes a
 * device id and an event cache under `~/.cache/Microsoft/DeveloperTools/.onnxruntime` and
 * queues them for upload to `mobile.events.data.microsoft.com`. A search service must not write
 * into its user's home or call out of its network on its own, so telemetry is off unless the
 * operator's environment sets the switch. onnxruntime reads it from the process environment when
 * it initializes, on the model thread; threads share that environment, so setting it here is early
 * enough.
 */
const ORT_TELEMETRY_SWITCH = 'ORT_DISABLE_TELEMETRY';

/** Starts a worker thread that loads the model and then runs inference requests in order. */
export function startModelThread(options: ModelThreadOptions, events: ModelThreadEvents): ModelThread {
  process.env[ORT_TELEMETRY_SWITCH] ??= '1';
  const worker = new Worker(threadEntry(), {
    workerData: options,
    name: 'embedding-model',
    // The entry is plain JavaScript: inheriting `--import tsx` and the like would only load a
    // TypeScript loader into the thread for nothing.
    execArgv: [],
    resourceLimits: THREAD_HEAP_LIMITS,
  });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let closing = false;
  let dead: string | null = null;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let stopping: Promise<void> | null = null;

  /**
   * Asks the thread to leave once its current run is over: worker.terminate() during an
   * onnxruntime run aborts the whole process (a native exception in a torn-down environment).
   * Only a thread that does not leave within the grace period is ended by force.
   */
  function stop(): Promise<void> {
    stopping ??= (async () => {
      // An idle thread is unref'd; leaving cleanly must still hold the process open.
      worker.ref();
      worker.postMessage({ type: 'close' });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), CLOSE_GRACE_MS);
        timer.unref();
      });
      const outcome = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (outcome === 'late') await worker.terminate();
    })();
    return stopping;
  }

  function die(message: string, threadAlive: boolean): void {
    if (dead !== null) return;
    dead = message;
    // The owner learns first, so that the rejections below already see it failed.
    if (!closing) events.failed(message);
    const error = new Error(message);
    for (const request of pending.values()) request.reject(error);
    pending.clear();
    if (threadAlive) void stop();
  }

  worker.on('message', (message: FromThread) => {
    switch (message.type) {
      case 'ready':
        if (!closing) events.ready({ dimensions: message.dimensions, loadMs: message.loadMs });
        break;
      case 'failed':
        die(message.message, true);
        break;
      case 'vector': {
        const request = pending.get(message.id);
        if (!request) break;
        request.vectors[message.index] = message.vector;
        request.onVector?.(message.index, message.vector);
        break;
      }
      case 'done':
      case 'error': {
        const request = pending.get(message.id);
        if (!request) break;
        pending.delete(message.id);
        if (message.type === 'done') request.resolve(request.vectors);
        else request.reject(new Error(`embedding failed: ${message.message}`));
        break;
      }
    }
  });
  worker.on('error', (error) => die(`the model thread crashed: ${error.message}`, false));
  worker.on('messageerror', (error) => die(`the model thread sent an unreadable message: ${error.message}`, true));
  worker.on('exit', (code) =>
    die(closing ? 'the embedder is closed' : `the model thread exited (code ${code})`, false),
  );

  return {
    run(texts, kind, onVector, together = false) {
      if (dead !== null) return Promise.reject(new Error(dead));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { vectors: [], onVector, resolve, reject });
        worker.postMessage({ type: 'embed', id, texts: [...texts], kind, together });
      });
    },
    keepAlive(on) {
      if (on) worker.ref();
      else worker.unref();
    },
    async close() {
      closing = true;
      die('the embedder is closed', true);
      await stop();
      await exited;
    },
  };
}
