// @ts-check
// The embedding model's thread. Plain JavaScript on purpose: worker threads do not inherit the
// TypeScript loader of the process that starts them (tsx, vitest), and this file must run the
// same from sources and from the compiled build.
import { basename, dirname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { env, pipeline } from '@huggingface/transformers';

/** @type {{ modelDir: string | null, modelId: string | null, dtype: 'q8' | 'fp32', threads: number }} */
const options = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

let name;
if (options.modelDir) {
  // A local folder: never reach for the network.
  env.allowRemoteModels = false;
  env.localModelPath = `${dirname(options.modelDir)}/`;
  name = basename(options.modelDir);
} else {
  env.allowRemoteModels = true;
  env.allowLocalModels = false;
  name = /** @type {string} */ (options.modelId);
}

/** @type {any} */
let extractor;
try {
  extractor = await pipeline('feature-extraction', name, {
    dtype: options.dtype,
    device: 'cpu',
    session_options: {
      ...(options.threads > 0 ? { intraOpNumThreads: options.threads } : {}),
      interOpNumThreads: 1,
    },
  });
  const probe = await extractor(['probe'], { pooling: 'mean', normalize: true });
  port.postMessage({ type: 'ready', dimensions: probe.dims[1] });
} catch (error) {
  port.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
}

// One batch at a time: onnxruntime already uses every intra-op thread on one run.
/** @type {Array<{ id: number, texts: string[] }>} */
const queue = [];
let busy = false;

async function pump() {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    const { id, texts } = /** @type {{ id: number, texts: string[] }} */ (queue.shift());
    try {
      const output = await extractor(texts, { pooling: 'mean', normalize: true });
      const data = /** @type {Float32Array} */ (output.data);
      // A copy the thread can hand over without cloning: the tensor's buffer may be shared.
      const vectors = new Float32Array(data);
      port.postMessage({ type: 'result', id, vectors, count: texts.length }, [vectors.buffer]);
    } catch (error) {
      port.postMessage({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
    }
  }
  busy = false;
}

port.on('message', (message) => {
  queue.push(message);
  void pump();
});
