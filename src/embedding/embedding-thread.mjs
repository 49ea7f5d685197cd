// @ts-check
/**
 * The embedding model's thread (see model-thread.ts for the protocol). Plain JavaScript on
 * purpose: a worker thread does not inherit the TypeScript loader of the process that starts it
 * (tsx's register(), vitest), and this file must run the same from sources and from dist/.
 *
 * It owns the only onnxruntime session of its Embedder, so inference never runs on the event loop
 * of the API. Requests run one after another, in arrival order.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { withHalfPrecisionTables } from './half-precision-tables.mjs';

/**
 * @typedef {object} ThreadOptions
 * @property {{ folder: string, weights: string } | { hubId: string }} source a model folder and the weights file in it, or a hub id
 * @property {'q8' | 'fp32'} dtype
 * @property {number} threads onnxruntime intra-op threads (≥ 1)
 * @property {number | null} maxTokens sentence-transformers' max_seq_length when known, else the tokenizer's model_max_length
 * @property {{ distance: number, seed: number } | null} [noise] test-only: see {@link perturb}
 * @property {{ query: string, document: string, sentence: string }} prompts what the model reads before a query, a document and a whole-sentence query ('' for none)
 * @property {'mean' | 'cls'} [pooling] the mean of a text's token states (default), or its first token's ([CLS])
 */
/** @typedef {'query' | 'document' | 'sentence'} TextKind */
/**
 * @typedef {{ type: 'embed', id: number, texts: string[], kind: TextKind, together?: boolean } | { type: 'close' }} Request
 * `together`: the texts in one run of the model (short texts a caller compares with each other), else one run each.
 */
/** @typedef {{ data: unknown, dims: readonly number[], dispose(): void }} Hidden the last hidden state of one text, [1, tokens, dimensions] */
/**
 * @typedef {object} Model
 * @property {(text: string) => number[]} tokenize token ids of one text, special tokens included
 * @property {(rows: number[][]) => Promise<Hidden>} run texts through the model in one run, padded to the longest ([rows, tokens, dimensions])
 * @property {number} maxTokens
 * @property {number} trailingSpecials special tokens after the text ([SEP] for BERT)
 * @property {number} leadingSpecials special tokens before the text ([CLS] for BERT)
 * @property {number | null} unknownId the token of a word the vocabulary lacks ([UNK]), if it has one
 * @property {() => Promise<unknown>} dispose
 */

const options = /** @type {ThreadOptions} */ (workerData);
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/**
 * Inputs of texts in one run, each row padded to the longest with token 0 ([PAD] in BERT's
 * vocabulary) that no token attends to (mask 0), all of one segment (type 0). One text is unpadded.
 * @param {number[][]} rows
 */
function inputsOf(rows) {
  const length = Math.max(...rows.map((r) => r.length));
  const ids = new BigInt64Array(rows.length * length);
  const mask = new BigInt64Array(rows.length * length);
  rows.forEach((row, r) =>
    row.forEach((id, t) => {
      ids[r * length + t] = BigInt(id);
      mask[r * length + t] = 1n;
    }),
  );
  return { inputs: { input_ids: ids, attention_mask: mask, token_type_ids: new BigInt64Array(ids.length) }, length };
}

/**
 * Tokens per text: the configured length, never past the model's position embeddings.
 * @param {number | undefined} tokenizerMax the tokenizer's model_max_length
 * @param {number | undefined} positions the model's max_position_embeddings
 */
function maxTokensOf(tokenizerMax, positions) {
  return Math.min(options.maxTokens ?? tokenizerMax ?? Infinity, positions ?? Infinity);
}

/**
 * How many special tokens a tokenizer puts before and after a text ([CLS] and [SEP] for BERT: 1
 * and 1).
 * @param {(text: string, specials: boolean) => number[]} encode
 */
function specialsOf(encode) {
  const withSpecials = encode('a', true);
  const bare = encode('a', false);
  const leading = Math.max(0, withSpecials.indexOf(/** @type {number} */ (bare[0])));
  return { leadingSpecials: leading, trailingSpecials: Math.max(0, withSpecials.length - leading - bare.length) };
}

/**
 * The id of a tokenizer's unknown token ([UNK]), when its vocabulary has one (a byte-level
 * tokenizer spells anything out and has none).
 * @param {unknown} token the unknown token's text
 * @param {(token: string) => unknown} idOf
 * @returns {number | null}
 */
function unknownIdOf(token, idOf) {
  const id = typeof token === 'string' ? idOf(token) : undefined;
  return typeof id === 'number' ? id : null;
}

/**
 * At least this share of a text's tokens unknown to the vocabulary, and the model cannot read it:
 * emoji runs and scripts outside its vocabulary become [UNK] pieces, and any two texts of them
 * embed alike (🔥🔥🔥 came out close to Japanese captions). Such a text gets no vector.
 */
const UNREADABLE_SHARE = 0.5;

/** @param {string} file */
async function readJson(file) {
  return JSON.parse(await readFile(file, 'utf8'));
}

/**
 * An onnxruntime session of a weights file: q8 weights with their word-embedding table at half
 * precision (half-precision-tables.mjs: ~22 MiB less resident in each process with the model),
 * float32 weights as they are, since they are the reference the q8 ones are measured against.
 * @param {typeof import('onnxruntime-node')} ort
 * @param {string} weights
 */
function sessionOf(ort, weights) {
  if (options.dtype !== 'q8') return ort.InferenceSession.create(weights, sessionOptions);
  return withHalfPrecisionTables(weights, (model) => ort.InferenceSession.create(model, sessionOptions));
}

/**
 * A model folder on disk, through the tokenizer library and onnxruntime directly. transformers.js
 * is not loaded for it: its bundle (image processing included) kept ~20 MiB more resident in each
 * process with the model (bench/embeddings.md, "The model thread without transformers.js"). The
 * vectors are the same, bit for bit: transformers.js runs this tokenizer and an onnxruntime
 * session with these options, and the tests compare with its pipeline.
 * @param {string} folder
 * @param {string} weights the ONNX file of the configured dtype
 * @returns {Promise<Model>}
 */
async function loadFolder(folder, weights) {
  const [{ Tokenizer }, ort, tokenizerJson, tokenizerConfig, modelConfig] = await Promise.all([
    import('@huggingface/tokenizers'),
    import('onnxruntime-node'),
    readJson(join(folder, 'tokenizer.json')),
    readJson(join(folder, 'tokenizer_config.json')),
    readJson(join(folder, 'config.json')),
  ]);
  const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
  // A missing file fails the load (q8: in the conversion thread), as it should: nothing is ever
  // downloaded for a folder.
  const session = await sessionOf(ort, weights);
  const wanted = new Set(session.inputNames);
  const output = session.outputNames.includes('last_hidden_state')
    ? 'last_hidden_state'
    : /** @type {string} */ (session.outputNames[0]);
  return {
    tokenize: (text) => tokenizer.encode(text).ids,
    async run(rows) {
      const { inputs, length } = inputsOf(rows);
      /** @type {Record<string, import('onnxruntime-node').Tensor>} */
      const feeds = {};
      for (const [name, values] of Object.entries(inputs)) {
        if (wanted.has(name)) feeds[name] = new ort.Tensor('int64', values, [rows.length, length]);
      }
      return /** @type {Hidden} */ ((await session.run(feeds))[output]);
    },
    maxTokens: maxTokensOf(tokenizerConfig.model_max_length, modelConfig.max_position_embeddings),
    ...specialsOf((text, specials) => tokenizer.encode(text, { add_special_tokens: specials }).ids),
    unknownId: unknownIdOf(tokenizerJson.model?.unk_token, (token) => tokenizerJson.model?.vocab?.[token]),
    dispose: () => session.release(),
  };
}

/**
 * A model from the Hugging Face hub by id, through transformers.js, which downloads and caches it.
 * @param {string} id
 * @returns {Promise<Model>}
 */
async function loadFromHub(id) {
  const { AutoModel, AutoTokenizer, Tensor, env } = await import('@huggingface/transformers');
  env.allowLocalModels = false;
  env.allowRemoteModels = true;
  const [tokenizer, model] = await Promise.all([
    AutoTokenizer.from_pretrained(id),
    AutoModel.from_pretrained(id, { dtype: options.dtype, device: 'cpu', session_options: sessionOptions }),
  ]);
  const positions = /** @type {{ max_position_embeddings?: number }} */ (model.config).max_position_embeddings;
  return {
    tokenize: (text) => tokenizer.encode(text),
    async run(rows) {
      const { inputs: values, length } = inputsOf(rows);
      /** @type {Record<string, InstanceType<typeof Tensor>>} */
      const inputs = {};
      for (const [name, data] of Object.entries(values))
        inputs[name] = new Tensor('int64', data, [rows.length, length]);
      return /** @type {{ last_hidden_state: Hidden }} */ (await model.forward(inputs)).last_hidden_state;
    },
    maxTokens: maxTokensOf(tokenizer.model_max_length, positions),
    ...specialsOf((text, specials) => tokenizer.encode(text, { add_special_tokens: specials })),
    unknownId: unknownIdOf(tokenizer.model?.unk_token, (token) => tokenizer.model?.tokens_to_ids?.get(token)),
    dispose: () => model.dispose(),
  };
}

/**
 * Session options, measured on 2 cores (bench/embeddings.md, "The model thread: query latency and
 * document throughput" and "onnxruntime's memory arena under the fixed malloc threshold"):
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
  const { source } = options;
  const loaded = 'hubId' in source ? await loadFromHub(source.hubId) : await loadFolder(source.folder, source.weights);
  const dimensions = (await embedOne(loaded, 'warm-up', 'document')).length;
  port.postMessage({ type: 'ready', dimensions, loadMs: Math.round(performance.now() - started) });
  return loaded;
}

/**
 * Keeps the first `maxTokens` tokens of a text, ending as the tokenizer ends a text ([SEP]), as
 * sentence-transformers does. (transformers.js 4.3's own truncation cuts the final [SEP] off.)
 * @param {number[]} ids one text's token ids, special tokens included
 * @param {Model} model
 */
function truncate(ids, model) {
  if (ids.length <= model.maxTokens) return ids;
  const keep = model.maxTokens - model.trailingSpecials;
  return [...ids.slice(0, keep), ...ids.slice(ids.length - model.trailingSpecials)];
}

/**
 * How many tokens each kind's prompt adds before a text (special tokens aside): a word-piece
 * tokenizer splits a prompt such as `query: ` on its own words and punctuation, so the text's
 * tokens follow it unchanged.
 * @type {Map<Model, Record<TextKind, number>>}
 */
const promptTokens = new Map();

/**
 * @param {Model} model
 * @param {TextKind} kind
 */
function promptLength(model, kind) {
  let lengths = promptTokens.get(model);
  if (!lengths) {
    const count = (/** @type {string} */ prompt) =>
      prompt === '' ? 0 : model.tokenize(prompt).length - model.leadingSpecials - model.trailingSpecials;
    lengths = {
      query: count(options.prompts.query),
      document: count(options.prompts.document),
      sentence: count(options.prompts.sentence),
    };
    promptTokens.set(model, lengths);
  }
  return lengths[kind];
}

/**
 * One text in one run, after its kind's prompt (e5's `query: ` / `passage: `), then the
 * sentence-transformers recipe: mean over the tokens (one text, no padding: every token counts,
 * the prompt's too, as the model was trained) and L2 normalisation.
 *
 * One text per run, not batches: batching was slower per text on the 2-core target at every batch
 * size (more so the longer the texts), and with the q8 weights it makes a vector depend on its
 * batch, since activations are quantized with one scale per run: a text embedded beside others
 * (or beside padding) lands at cosine ≈ 0.99 of itself alone.
 * @param {Model} model
 * @param {string} text
 * @param {TextKind} kind
 */
async function embedOne(model, text, kind) {
  return /** @type {Float32Array} */ ((await embedTogether(model, [text], kind))[0]);
}

/**
 * Several texts in one run of the model, padded to the longest, each pooled over its own tokens
 * (the mask), then L2-normalised: for a few short texts a caller compares with one another (a
 * question without each of its words in turn: src/text/question-weights.ts), one run costs about what one
 * of them alone does, where a run each cost as many. Their vectors depend on the run they share
 * (q8 activations take one scale per run), so they are compared with each other, never stored.
 * A text the model cannot read gets an empty vector and no row.
 * @param {Model} model
 * @param {string[]} texts
 * @param {TextKind} kind
 * @returns {Promise<Float32Array[]>}
 */
async function embedTogether(model, texts, kind) {
  const prompt = options.prompts[kind];
  const encoded = texts.map((text) =>
    truncate(model.tokenize(prompt + text.slice(0, model.maxTokens * CHARS_PER_TOKEN_BOUND)), model),
  );
  // Whether a text is readable is the text's own matter: the prompt's tokens are not counted.
  const readable = encoded.map((ids) => !unreadable(ids, model, promptLength(model, kind)));
  const rows = encoded.filter((_, i) => readable[i]);
  const out = texts.map(() => new Float32Array(0));
  if (rows.length === 0) return out;
  const hidden = await model.run(rows);
  const [, tokens, dimensions] = /** @type {[number, number, number]} */ (hidden.dims);
  const states = /** @type {Float32Array} */ (hidden.data);
  let row = 0;
  for (let i = 0; i < texts.length; i++) {
    if (!readable[i]) continue;
    // CLS pooling reads the first token's state alone (the model was trained to put the text there).
    const length = options.pooling === 'cls' ? 1 : /** @type {number[]} */ (rows[row]).length;
    const sum = new Float64Array(dimensions);
    for (let t = 0; t < length; t++) {
      for (let j = 0, offset = (row * tokens + t) * dimensions; j < dimensions; j++)
        sum[j] = /** @type {number} */ (sum[j]) + /** @type {number} */ (states[offset + j]);
    }
    if (options.noise) perturb(sum, /** @type {string} */ (texts[i]), options.noise);
    // The mean's 1/tokens cancels in the normalisation.
    let norm = 0;
    for (const value of sum) norm += value * value;
    norm = Math.max(Math.sqrt(norm), 1e-12);
    const vector = new Float32Array(dimensions);
    for (let j = 0; j < dimensions; j++) vector[j] = /** @type {number} */ (sum[j]) / norm;
    out[i] = vector;
    row++;
  }
  hidden.dispose();
  return out;
}

/**
 * Test-only (config EMBEDDING_NOISE, off by default): moves a text's unnormalised vector to cosine
 * `1 − distance` of itself, along a direction orthogonal to it drawn from a generator seeded by
 * `seed` and the text, so the same text always moves the same way (as one CPU's arithmetic always
 * rounds it the same way) and different texts move independently. It stands for the difference
 * between two CPUs' int8 kernels; the tests on model output run under it too (docs/testing.md,
 * "What the ranking tolerates").
 * @param {Float64Array} vector changed in place
 * @param {string} text
 * @param {{ distance: number, seed: number }} noise
 */
function perturb(vector, text, noise) {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (!(norm > 0) || !(noise.distance > 0)) return;
  const digest = createHash('sha256').update(`${noise.seed}\u0000${text}`).digest();
  const random = xorshift128(digest);
  const direction = new Float64Array(vector.length);
  for (let j = 0; j < direction.length; j += 2) {
    // Box–Muller: two normal deviates from two uniform ones in (0, 1].
    const radius = Math.sqrt(-2 * Math.log(1 - random()));
    const angle = 2 * Math.PI * random();
    direction[j] = radius * Math.cos(angle);
    if (j + 1 < direction.length) direction[j + 1] = radius * Math.sin(angle);
  }
  // Orthogonal to the vector, so the cosine is exactly 1 − distance.
  let along = 0;
  for (let j = 0; j < vector.length; j++)
    along += /** @type {number} */ (direction[j]) * /** @type {number} */ (vector[j]);
  along /= norm * norm;
  let length = 0;
  for (let j = 0; j < vector.length; j++) {
    direction[j] = /** @type {number} */ (direction[j]) - along * /** @type {number} */ (vector[j]);
    length += /** @type {number} */ (direction[j]) ** 2;
  }
  length = Math.sqrt(length);
  if (!(length > 0)) return;
  // cos(v, v + n) = 1 / √(1 + t²) for n ⟂ v with ‖n‖ = t‖v‖.
  const t = Math.sqrt(1 / (1 - noise.distance) ** 2 - 1);
  for (let j = 0; j < vector.length; j++)
    vector[j] = /** @type {number} */ (vector[j]) + (t * norm * /** @type {number} */ (direction[j])) / length;
}

/**
 * xorshift128 (Marsaglia, 2003) seeded by the first 16 bytes of `seed`: uniform numbers in [0, 1).
 * @param {Uint8Array} seed
 */
function xorshift128(seed) {
  const state = new Uint32Array(4);
  const view = new DataView(seed.buffer, seed.byteOffset, 16);
  for (let i = 0; i < 4; i++) state[i] = view.getUint32(i * 4) || 1;
  return () => {
    const [a = 0, b = 0, c = 0, d = 0] = state;
    const t = a ^ (a << 11);
    state.set([b, c, d, d ^ (d >>> 19) ^ t ^ (t >>> 8)]);
    return /** @type {number} */ (state[3]) / 2 ** 32;
  };
}

/**
 * Whether the model cannot read a text: at least {@link UNREADABLE_SHARE} of its tokens (the
 * special ones and the prompt's aside) are unknown to the vocabulary.
 * @param {number[]} ids one text's token ids, special tokens included
 * @param {Model} model
 * @param {number} prompt tokens of the prompt before the text
 */
function unreadable(ids, model, prompt) {
  if (model.unknownId === null) return false;
  const first = model.leadingSpecials + prompt;
  const tokens = ids.length - first - model.trailingSpecials;
  if (tokens <= 0) return false;
  let unknown = 0;
  for (let i = first; i < ids.length - model.trailingSpecials; i++) if (ids[i] === model.unknownId) unknown++;
  return unknown >= tokens * UNREADABLE_SHARE;
}

/**
 * @param {Model} model
 * @param {number} id
 * @param {string[]} texts
 * @param {TextKind} kind
 */
async function embed(model, id, texts, kind, together) {
  try {
    if (together) {
      const vectors = await embedTogether(model, texts, kind);
      vectors.forEach((vector, index) => port.postMessage({ type: 'vector', id, index, vector }, [vector.buffer]));
      port.postMessage({ type: 'done', id });
      return;
    }
    for (let index = 0; index < texts.length; index++) {
      // A close waits for the current text only; the owner has rejected this request already.
      if (closing) return;
      const vector = await embedOne(model, /** @type {string} */ (texts[index]), kind);
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
      (model) => embed(model, request.id, request.texts, request.kind, request.together === true),
      () => port.postMessage({ type: 'error', id: request.id, message: 'the model did not load' }),
    );
  });
});
