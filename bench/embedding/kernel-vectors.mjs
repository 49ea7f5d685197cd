// @ts-check
/**
 * The vectors of a list of texts under one set of onnxruntime settings, for kernel-noise.ts
 * (bench/embeddings.md, "Kernel noise"). Plain JavaScript with no TypeScript loader, so that it
 * also runs under QEMU's user-mode emulation with another CPU model (`qemu-x86_64 -cpu Haswell
 * node kernel-vectors.mjs …`): onnxruntime then picks that CPU's kernels.
 *
 *   node bench/embedding/kernel-vectors.mjs <settings JSON> <texts.json> <out.json>
 *
 * Settings: `{ model, dtype: 'q8' | 'fp32', weights: 'service' | 'eight-bit', threads,
 * graphOptimizationLevel?, check? }`. `service` loads as the model thread does (q8: seven-bit
 * weights, half-precision tables); `eight-bit` as it did before the seven-bit weights (half-precision
 * tables only). Vectors are one text per run, mean-pooled and L2-normalised as the model thread
 * makes them; `check: true` also asks the service's own model thread and fails unless its vectors
 * are these, bit for bit. Writes `{ cpu, ms, vectors }` (each vector base64 float32).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';
import { withHalfPrecisionTables } from '../../src/embedding/half-precision-tables.mjs';

const [settingsJson, textsFile, outFile] = process.argv.slice(2);
if (!settingsJson || !textsFile || !outFile) throw new Error('usage: kernel-vectors.mjs <settings> <texts> <out>');
/** @type {{ model: string, dtype: 'q8' | 'fp32', weights: 'service' | 'eight-bit', threads: number, graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all', check?: boolean }} */
const settings = JSON.parse(settingsJson);
const texts = /** @type {string[]} */ (JSON.parse(await readFile(textsFile, 'utf8')));
const file = join(settings.model, 'onnx', settings.dtype === 'q8' ? 'model_quantized.onnx' : 'model.onnx');
process.env['ORT_DISABLE_TELEMETRY'] = '1';

/** The model thread's session options (src/embedding/embedding-thread.mjs), and the level asked for. */
const sessionOptions = {
  intraOpNumThreads: settings.threads,
  interOpNumThreads: 1,
  executionMode: /** @type {const} */ ('sequential'),
  enableCpuMemArena: true,
  enableMemPattern: false,
  extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  ...(settings.graphOptimizationLevel ? { graphOptimizationLevel: settings.graphOptimizationLevel } : {}),
};

/** @returns {Promise<ort.InferenceSession>} */
async function session() {
  if (settings.dtype !== 'q8') return ort.InferenceSession.create(file, sessionOptions);
  if (settings.weights === 'service')
    return withHalfPrecisionTables(file, (model) => ort.InferenceSession.create(model, sessionOptions));
  // Before the seven-bit weights: the tables converted, the weights as the file has them.
  const { halfPrecisionTables } = await import('../../src/embedding/half-precision-tables.mjs');
  return ort.InferenceSession.create(halfPrecisionTables(await readFile(file)).model, sessionOptions);
}

const [tokenizerJson, tokenizerConfig] = await Promise.all(
  ['tokenizer.json', 'tokenizer_config.json'].map(async (name) =>
    JSON.parse(await readFile(join(settings.model, name), 'utf8')),
  ),
);
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const model = await session();
const MAX_TOKENS = 256;

/** @param {string} text */
async function embed(text) {
  let ids = tokenizer.encode(text).ids;
  if (ids.length > MAX_TOKENS) ids = [...ids.slice(0, MAX_TOKENS - 1), /** @type {number} */ (ids.at(-1))];
  const tensor = (/** @type {BigInt64Array} */ values) => new ort.Tensor('int64', values, [1, ids.length]);
  const feeds = {
    input_ids: tensor(BigInt64Array.from(ids, (id) => BigInt(id))),
    attention_mask: tensor(new BigInt64Array(ids.length).fill(1n)),
    token_type_ids: tensor(new BigInt64Array(ids.length)),
  };
  const hidden = (await model.run(feeds))['last_hidden_state'];
  if (!hidden) throw new Error('no last_hidden_state');
  const [, tokens = 0, dimensions = 0] = hidden.dims;
  const states = /** @type {Float32Array} */ (hidden.data);
  const sum = new Float64Array(dimensions);
  for (let t = 0; t < tokens; t++)
    for (let j = 0; j < dimensions; j++)
      sum[j] = /** @type {number} */ (sum[j]) + /** @type {number} */ (states[t * dimensions + j]);
  let norm = 0;
  for (const value of sum) norm += value * value;
  norm = Math.max(Math.sqrt(norm), 1e-12);
  return Float32Array.from(sum, (value) => value / norm);
}

/**
 * The service's model thread's vectors of the same texts.
 * @returns {Promise<Float32Array[]>}
 */
function serviceVectors() {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL('../../src/embedding/embedding-thread.mjs', import.meta.url), {
      workerData: {
        source: { folder: settings.model, weights: file },
        dtype: settings.dtype,
        threads: settings.threads,
        maxTokens: MAX_TOKENS,
      },
    });
    /** @type {Float32Array[]} */
    const out = [];
    thread.on('error', reject);
    thread.on('message', (/** @type {any} */ message) => {
      if (message.type === 'ready') thread.postMessage({ type: 'embed', id: 1, texts });
      else if (message.type === 'vector') out[message.index] = message.vector;
      else if (message.type === 'done') {
        thread.postMessage({ type: 'close' });
        resolve(out);
      } else if (message.type === 'failed' || message.type === 'error') reject(new Error(message.message));
    });
  });
}

const started = performance.now();
/** @type {Float32Array[]} */
const vectors = [];
for (const text of texts) vectors.push(await embed(text));
const ms = Math.round(performance.now() - started);
if (settings.check) {
  const theirs = await serviceVectors();
  const differing = vectors.filter((v, i) => v.some((x, j) => x !== theirs[i]?.[j])).length;
  if (differing > 0) throw new Error(`${differing} of ${texts.length} vectors differ from the model thread's`);
}
await model.release();
const encode = (/** @type {Float32Array} */ v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
await writeFile(outFile, JSON.stringify({ cpu: cpus()[0]?.model ?? 'unknown', ms, vectors: vectors.map(encode) }));
