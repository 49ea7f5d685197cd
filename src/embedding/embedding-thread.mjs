// @ts-check
/**
 * The embedding model's thread (see model-thread.ts for the protocol). Plain JavaScript on
 * purpose: a worker thread does not inherit the TypeScript loader of the process that starts it
 * (tsx's register(), vitest), and this file must run the same from sources and from dist/.
 *
 * It owns the only onnxruntime session of its Embedder, so inference never runs on the event loop
 * of the API. Requests run one after another, in arrival order.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { AutoModel, AutoTokenizer, Tensor, env } from '@huggingface/transformers';

/**
 * @typedef {object} ThreadOptions
 * @property {string | null} localModelPath folder that holds the model folder, or null to load `model` from the hub
 * @property {string} model model folder name, or hub id
 * @property {'q8' | 'fp32'} dtype
 * @property {number} threads onnxruntime intra-op threads (≥ 1)
 * @property {number | null} maxTokens sentence-transformers' max_seq_length when known, else the tokenizer's model_max_length
 */
/** @typedef {{ type: 'embed', id: number, texts: string[] } | { type: 'close' }} Request */
/** @typedef {Record<string, Tensor>} Encoding */
/**
 * @typedef {object} Model
 * @property {(text: string) => Encoding} tokenize
 * @property {(inputs: Encoding) => Promise<{ last_hidden_state: Tensor }>} run
 * @property {number} maxTokens
 * @property {number} trailingSpecials special tokens after the text ([SEP] for BERT)
 * @property {() => Promise<unknown>} dispose
 */

const options = /** @type {ThreadOptions} */ (workerData);
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

if (options.localModelPath !== null) {
  // A folder on disk: a missing file must fail the load, never trigger a download.
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = options.localModelPath;
  env.useCustomCache = true;
  env.customCache = localFolderCache(options.localModelPath, options.model);
} else {
  env.allowLocalModels = false;
  env.allowRemoteModels = true;
}

/**
 * The model folder's files as transformers.js' cache, so it never opens them itself: its local
 * file response starts streaming the whole file into memory the moment it is created, and nothing
 * ever reads that stream (the weights are loaded by path, the JSON files read again). The 59 MB
 * of model_quantized.onnx then sat in 64 KB chunks in the thread's malloc arena for good: ~60 MiB
 * of resident memory per process with the model (bench/README.md, "Memory under sustained load").
 *
 * transformers.js looks a file up by its local path, then, on a hit, again by its hub URL; both
 * map to the same file. Weights are answered with their path (onnxruntime reads the file itself),
 * other files with their bytes; a file the folder lacks is a miss, and fails the load as before.
 * @param {string} root the folder that holds the model folder
 * @param {string} model the model folder's name
 */
function localFolderCache(root, model) {
  const folder = normalize(join(root, model));
  /** @param {unknown} key */
  const fileOf = (key) => {
    if (typeof key !== 'string') return null;
    const hub = /\/resolve\/[^/]+\/(.+)$/.exec(key);
    const file = normalize(hub ? join(folder, /** @type {string} */ (hub[1])) : key);
    return file.startsWith(folder + sep) && existsSync(file) ? file : null;
  };
  return {
    /** @param {string} key */
    async match(key) {
      const file = fileOf(key);
      if (file === null) return undefined;
      return /\.onnx(_data(_\d+)?)?$/.test(file) ? file : new Response(await readFile(file));
    },
    async put() {},
  };
}

/**
 * Session options, measured on 2 cores (bench/README.md, "Embeddings" and "The model's memory
 * arena under a fixed malloc threshold"):
 * - onnxruntime's CPU memory arena: it keeps the peak of the largest run for good, and one run is
 *   one text of at most 256 tokens, so that peak is bounded (~+15 MiB). Without it, every
 *   activation of 128 KiB or more goes to malloc; under the fixed `MALLOC_MMAP_THRESHOLD_` the
 *   services run with, each is a fresh mmap, zeroed and unmapped at every run, which halved
 *   throughput (32 against 68–88 texts/s). (Batches of long texts once grew it by ~900 MiB.)
 * - no memory pattern: with a text's own length as its shape, patterns are planned per length
 *   and were not faster; without them the peak is a few MiB lower;
 * - no spinning: idle pool threads otherwise busy-wait after each run and take CPU from the event
 *   loop and Elasticsearch; with it, query p99 doubled on a busy machine;
 * - sequential execution: this model is one chain of operators, inter-op threads only add threads.
 */
const sessionOptions = {
  intraOpNumThreads: options.threads,
  interOpNumThreads: 1,
  executionMode: /** @type {const} */ ('sequential'),
  enableCpuMemArena: true,
  enableMemPattern: false,
  extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
};

/**
 * A WordPiece token never spans more than 100 characters (a longer word is one [UNK]), so
 * cutting here never changes the first 256 tokens of ordinary text, and bounds tokenizing time.
 */
const CHARS_PER_TOKEN_BOUND = 100;

/**
 * Loads tokenizer and model and runs them once, so the first real request does not pay for warm-up.
 * @returns {Promise<Model>}
 */
async function load() {
  const started = performance.now();
  const [tokenizer, model] = await Promise.all([
    AutoTokenizer.from_pretrained(options.model),
    AutoModel.from_pretrained(options.model, { dtype: options.dtype, device: 'cpu', session_options: sessionOptions }),
  ]);
  const positions = /** @type {{ max_position_embeddings?: number }} */ (model.config).max_position_embeddings ?? Infinity;
  const withSpecials = tokenizer.encode('a');
  const bare = tokenizer.encode('a', { add_special_tokens: false });
  /** @type {Model} */
  const loaded = {
    tokenize: (text) => /** @type {Encoding} */ (/** @type {unknown} */ (tokenizer(text, { truncation: false, padding: false }))),
    run: (inputs) => /** @type {Promise<{ last_hidden_state: Tensor }>} */ (model.forward(inputs)),
    maxTokens: Math.min(options.maxTokens ?? tokenizer.model_max_length, positions),
    trailingSpecials: Math.max(0, withSpecials.length - withSpecials.indexOf(/** @type {number} */ (bare[0])) - bare.length),
    dispose: () => model.dispose(),
  };
  const dimensions = (await embedOne(loaded, 'warm-up')).length;
  port.postMessage({ type: 'ready', dimensions, loadMs: Math.round(performance.now() - started) });
  return loaded;
}

/**
 * Keeps the first `maxTokens` tokens of an encoding, ending as the tokenizer ends a text ([SEP]),
 * as sentence-transformers does. (transformers.js 4.3's own truncation cuts the final [SEP] off.)
 * @param {Encoding} encoding one text: every tensor is [1, n]
 * @param {Model} model
 * @returns {Encoding}
 */
function truncate(encoding, model) {
  const length = /** @type {number} */ (/** @type {Tensor} */ (encoding['input_ids']).dims[1]);
  if (length <= model.maxTokens) return encoding;
  const keep = model.maxTokens - model.trailingSpecials;
  /** @type {Encoding} */
  const out = {};
  for (const [name, tensor] of Object.entries(encoding)) {
    const data = /** @type {BigInt64Array} */ (tensor.data);
    const cut = new BigInt64Array(model.maxTokens);
    cut.set(data.subarray(0, keep));
    cut.set(data.subarray(length - model.trailingSpecials), keep);
    out[name] = new Tensor(tensor.type, cut, [1, model.maxTokens]);
  }
  return out;
}

/**
 * One text in one run, then the sentence-transformers recipe: mean over the tokens (one text, no
 * padding: every token counts) and L2 normalisation.
 *
 * One text per run, not batches: batching was slower per text on the 2-core target at every batch
 * size (more so the longer the texts), and with the q8 weights it makes a vector depend on its
 * batch, since activations are quantized with one scale per run: a text embedded beside others
 * (or beside padding) lands at cosine ≈ 0.99 of itself alone.
 * @param {Model} model
 * @param {string} text
 */
async function embedOne(model, text) {
  const inputs = truncate(model.tokenize(text.slice(0, model.maxTokens * CHARS_PER_TOKEN_BOUND)), model);
  const { last_hidden_state: hidden } = await model.run(inputs);
  const [, tokens, dimensions] = /** @type {[number, number, number]} */ (hidden.dims);
  const states = /** @type {Float32Array} */ (hidden.data);
  const sum = new Float64Array(dimensions);
  for (let t = 0; t < tokens; t++) {
    for (let j = 0, offset = t * dimensions; j < dimensions; j++) sum[j] = /** @type {number} */ (sum[j]) + /** @type {number} */ (states[offset + j]);
  }
  hidden.dispose();
  // The mean's 1/tokens cancels in the normalisation.
  let norm = 0;
  for (const value of sum) norm += value * value;
  norm = Math.max(Math.sqrt(norm), 1e-12);
  const vector = new Float32Array(dimensions);
  for (let j = 0; j < dimensions; j++) vector[j] = /** @type {number} */ (sum[j]) / norm;
  return vector;
}

/**
 * @param {Model} model
 * @param {number} id
 * @param {string[]} texts
 */
async function embed(model, id, texts) {
  try {
    for (let index = 0; index < texts.length; index++) {
      // A close waits for the current text only; the owner has rejected this request already.
      if (closing) return;
      const vector = await embedOne(model, /** @type {string} */ (texts[index]));
      // As soon as it exists (a query need not wait for the rest of its batch), and without a copy.
      port.postMessage({ type: 'vector', id, index, vector }, [vector.buffer]);
    }
    port.postMessage({ type: 'done', id });
  } catch (error) {
    port.postMessage({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
  }
}

const loaded = load();
let closing = false;
/** @type {Promise<unknown>} */
let queue = loaded.catch((error) => {
  port.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
});

port.on('message', (/** @type {Request} */ request) => {
  if (request.type === 'close') {
    closing = true;
    // Ending the thread while onnxruntime runs aborts the whole process (a native exception in
    // a torn-down environment), so the thread leaves by itself once its current run is over.
    queue = queue.then(async () => {
      const model = await loaded.catch(() => null);
      await model?.dispose().catch(() => undefined);
      process.exit(0);
    });
    return;
  }
  queue = queue.then(() => {
    // The owner has already rejected whatever is still queued when it closes.
    if (closing) return undefined;
    return loaded.then(
      (model) => embed(model, request.id, request.texts),
      () => port.postMessage({ type: 'error', id: request.id, message: 'the model did not load' }),
    );
  });
});
