/**
 * Embedding benchmark (bench/embeddings.md, "The model thread: query latency and document
 * throughput"): query latency through embedQuery, cached repeats, document throughput against raw
 * onnxruntime-node in the same process (interleaved in rounds so machine noise hits both), and the
 * RSS an Embedder adds to a Node process.
 *
 *   npx tsx bench/embedding/embedding.ts [--docs 2000] [--queries 300]
 *
 * Needs only the model folder (MODEL_DIR, default: the model `npm start` uses) and SciFact
 * (BEIR_SCIFACT_DIR, default ../shared/eval/scifact). Writes bench/results/embedding.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { createEmbedder, type Embedder, type EmbeddingConfig } from '../../src/embedding/embedder.ts';
import { scifactDir } from '../relevance/beir.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';
import { MODEL_DIR } from '../lib/model.ts';
import { writeResult } from '../lib/measure.ts';

const MiB = 2 ** 20;
const rssMiB = () => Math.round(process.memoryUsage().rss / MiB);
const config = (dtype: 'q8' | 'fp32', threads: number): EmbeddingConfig => ({
  MODEL_DIR,
  EMBEDDINGS: 'on',
  EMBEDDING_DTYPE: dtype,
  EMBEDDING_THREADS: threads,
});

const percentile = (values: number[], p: number) => quantile(values, p / 100);
const round2 = (x: number) => Math.round(x * 100) / 100;
const round4 = (x: number) => Math.round(x * 10000) / 10000;

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}
const documents = (n: number) =>
  readJsonl<{ title: string; text: string }>(path.join(scifactDir(), 'corpus.jsonl'))
    .slice(0, n)
    .map((d) => `${d.title}\n\n${d.text}`);
const queries = () => readJsonl<{ text: string }>(path.join(scifactDir(), 'queries.jsonl')).map((q) => q.text);

// ---------------------------------------------------------------------------------------------
// RSS child: `--rss-child <dtype>` loads one Embedder, embeds, and prints its RSS at each step.

async function rssChild(dtype: 'q8' | 'fp32'): Promise<void> {
  const before = rssMiB();
  const embedder = createEmbedder(config(dtype, 0));
  await embedder.ready();
  for (const q of queries().slice(0, 50)) await embedder.embedQuery(q);
  const loaded = rssMiB();
  await embedder.embedDocuments(documents(200));
  const afterDocuments = rssMiB();
  await embedder.close();
  process.stdout.write(JSON.stringify({ before, loaded, afterDocuments }) + '\n');
}

function measureRss(): object {
  const bare = Number(
    execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.memoryUsage().rss))']),
  );
  const runs: Record<string, unknown> = { bareNodeMiB: Math.round(bare / MiB) };
  for (const dtype of ['q8', 'fp32'] as const) {
    for (const [label, extraEnv] of [
      ['default malloc', {}],
      ['MALLOC_MMAP_THRESHOLD_=131072', { MALLOC_MMAP_THRESHOLD_: '131072' }],
    ] as const) {
      const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--rss-child', dtype], {
        env: { ...process.env, ...extraEnv },
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(`rss child failed: ${child.stderr}`);
      const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
        before: number;
        loaded: number;
        afterDocuments: number;
      };
      runs[`${dtype}, ${label}`] = {
        ...r,
        addedLoadedMiB: r.loaded - r.before,
        addedAfterDocumentsMiB: r.afterDocuments - r.before,
      };
      console.log(
        `rss ${dtype} (${label}): process ${r.before} → loaded ${r.loaded} → after 200 abstracts ${r.afterDocuments} MiB`,
      );
    }
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Raw onnxruntime: the same model file, session options and threads, tokenized by the same
// tokenizer (padding + truncation to 256), mean pooling and normalisation in plain JS.

interface Raw {
  embed(texts: string[], batch: number): Promise<Float32Array[]>;
}

async function createRaw(dtype: 'q8' | 'fp32', threads: number): Promise<Raw> {
  // Imported here, so that the RSS child process loads neither (the Embedder loads them in its thread).
  const { AutoTokenizer, env } = await import('@huggingface/transformers');
  const ort = await import('onnxruntime-node');
  env.allowRemoteModels = false;
  env.localModelPath = `${path.dirname(MODEL_DIR)}/`;
  const tokenizer = await AutoTokenizer.from_pretrained(path.basename(MODEL_DIR));
  const file = path.join(MODEL_DIR, dtype === 'q8' ? 'onnx/model_quantized.onnx' : 'onnx/model.onnx');
  // Mirrors embedding-thread.mjs.
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    enableCpuMemArena: true,
    enableMemPattern: false,
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
  return {
    async embed(texts, batch) {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batch) {
        const chunk = texts.slice(start, start + batch);
        const encoded = tokenizer(chunk, { padding: true, truncation: true }) as unknown as Record<
          string,
          { data: BigInt64Array; dims: number[] }
        >;
        const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
        for (const name of session.inputNames)
          feeds[name] = new ort.Tensor('int64', encoded[name]!.data, encoded[name]!.dims);
        const result = await session.run(feeds);
        const hidden = result[session.outputNames[0]!]!;
        const [rows, tokens, dims] = hidden.dims as [number, number, number];
        const states = hidden.data as Float32Array;
        const mask = encoded['attention_mask']!.data;
        for (let r = 0; r < rows; r++) {
          const v = new Float32Array(dims);
          for (let t = 0; t < tokens; t++) {
            if (mask[r * tokens + t] === 0n) continue;
            const offset = (r * tokens + t) * dims;
            for (let j = 0; j < dims; j++) v[j] = v[j]! + states[offset + j]!;
          }
          const norm = Math.hypot(...v) || 1;
          for (let j = 0; j < dims; j++) v[j] = v[j]! / norm;
          out.push(v);
        }
        hidden.dispose();
      }
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function queryLatency(
  embedders: Record<string, Embedder>,
  texts: string[],
  warmup: number,
): Promise<Record<string, object>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(embedders).map((k) => [k, []]));
  // Query by query across the settings, so a noisy moment hits them all.
  for (let i = 0; i < texts.length; i++) {
    for (const [name, embedder] of Object.entries(embedders)) {
      const started = performance.now();
      await embedder.embedQuery(texts[i]!);
      if (i >= warmup) samples[name]!.push(performance.now() - started);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([k, v]) => [
      k,
      { n: v.length, p50Ms: round2(percentile(v, 50)), p99Ms: round2(percentile(v, 99)) },
    ]),
  );
}

/** Bursts of concurrent distinct queries: each query's own latency, and requests to the model thread per burst. */
async function queryBursts(embedder: Embedder, texts: string[], size: number): Promise<object> {
  const samples: number[] = [];
  const callsBefore = embedder.stats().modelCalls;
  let bursts = 0;
  for (let start = 0; start + size <= texts.length; start += size, bursts++) {
    const started = performance.now();
    await Promise.all(
      texts.slice(start, start + size).map(async (text) => {
        await embedder.embedQuery(text);
        samples.push(performance.now() - started);
      }),
    );
  }
  return {
    bursts,
    size,
    modelCallsPerBurst: (embedder.stats().modelCalls - callsBefore) / bursts,
    p50Ms: round2(percentile(samples, 50)),
    p99Ms: round2(percentile(samples, 99)),
  };
}

async function cachedRepeat(embedder: Embedder, text: string, n: number): Promise<object> {
  await embedder.embedQuery(text);
  const calls = embedder.stats().modelCalls;
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await embedder.embedQuery(text);
    samples.push(performance.now() - started);
  }
  if (embedder.stats().modelCalls !== calls) throw new Error('a cached repeat reached the model');
  return {
    n,
    p50Ms: Math.round(percentile(samples, 50) * 1000) / 1000,
    p99Ms: Math.round(percentile(samples, 99) * 1000) / 1000,
  };
}

/** Gaps between ticks of a 5 ms interval: how long the event loop was unavailable. */
function eventLoopGaps() {
  const all: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      let last = performance.now();
      timer = setInterval(() => {
        const now = performance.now();
        all.push(now - last);
        last = now;
      }, 5);
    },
    stop: () => clearInterval(timer),
    summary: () => ({
      intervalMs: 5,
      p50: round2(percentile(all, 50)),
      p99: round2(percentile(all, 99)),
      max: round2(Math.max(...all)),
    }),
  };
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

async function documentThroughput(
  dtype: 'q8' | 'fp32',
  threads: number,
  texts: string[],
  rounds: number,
): Promise<object> {
  const embedder = createEmbedder(config(dtype, threads));
  await embedder.ready();
  const raw = await createRaw(dtype, threads);
  // Warm both up on texts outside the measured set.
  await embedder.embedDocuments(texts.slice(0, 8));
  await raw.embed(texts.slice(0, 8), 1);
  await raw.embed(texts.slice(0, 8), 8);
  const seconds = { embedder: 0, raw: 0, rawBatch32: 0 };
  const gaps = eventLoopGaps();
  const agreement: number[] = [];
  const size = Math.ceil(texts.length / rounds);
  for (let r = 0; r < rounds; r++) {
    const chunk = texts.slice(r * size, (r + 1) * size);
    const steps: Array<[keyof typeof seconds, () => Promise<Float32Array[]>]> = [
      ['embedder', () => embedder.embedDocuments(chunk)],
      ['raw', () => raw.embed(chunk, 1)],
      ['rawBatch32', () => raw.embed(chunk, 32)],
    ];
    // Alternate who goes first, so that warming or cooling of the machine is shared.
    if (r % 2 === 1) steps.reverse();
    const vectors: Partial<Record<keyof typeof seconds, Float32Array[]>> = {};
    for (const [name, run] of steps) {
      // Only while the embedder works: the raw runs tokenize and pool on this thread.
      if (name === 'embedder') gaps.start();
      const started = performance.now();
      vectors[name] = await run();
      seconds[name] += (performance.now() - started) / 1000;
      if (name === 'embedder') gaps.stop();
    }
    chunk.forEach((_, i) => agreement.push(cosine(vectors.embedder![i]!, vectors.raw![i]!)));
    console.log(
      `round ${r + 1}/${rounds}: ${Object.entries(seconds)
        .map(([k, v]) => `${k} ${Math.round(((r + 1) * chunk.length) / v)}/s`)
        .join(', ')}`,
    );
  }
  await embedder.close();
  const perSecond = (s: number) => Math.round((texts.length / s) * 10) / 10;
  return {
    dtype,
    threads,
    texts: texts.length,
    rounds,
    textsPerSecond: {
      embedder: perSecond(seconds.embedder),
      rawOnnxruntime: perSecond(seconds.raw),
      rawOnnxruntimeBatch32: perSecond(seconds.rawBatch32),
    },
    ratioEmbedderToRaw: Math.round((seconds.raw / seconds.embedder) * 1000) / 1000,
    eventLoopGapDuringEmbedderMs: gaps.summary(),
    // Below 1 only for texts over 256 tokens: raw uses transformers.js truncation, which drops the final [SEP].
    cosineEmbedderToRaw: { min: round4(percentile(agreement, 0)), median: round4(percentile(agreement, 50)) },
  };
}

async function main(): Promise<void> {
  const values = cli({
    options: {
      docs: { type: 'int', default: 2000, min: 1 },
      queries: { type: 'int', default: 300, min: 1 },
      'rss-child': { type: 'string', choices: ['q8', 'fp32'] },
    },
  });
  if (values['rss-child']) return rssChild(values['rss-child'] as 'q8' | 'fp32');
  const docCount = values.docs;
  const queryCount = values.queries;
  const started = new Date();
  const cores = availableParallelism();

  console.log('query latency (embedQuery, distinct SciFact queries, sequential)…');
  const settings = {
    'q8, 1 thread': config('q8', 1),
    'q8, 2 threads': config('q8', 2),
    'fp32, 1 thread': config('fp32', 1),
    'fp32, 2 threads': config('fp32', 2),
  };
  const embedders: Record<string, Embedder> = {};
  for (const [name, c] of Object.entries(settings)) {
    embedders[name] = createEmbedder(c);
    await embedders[name].ready();
  }
  const warmup = 30;
  const latency = await queryLatency(embedders, queries().slice(0, queryCount + warmup), warmup);
  console.table(latency);
  const cached = await cachedRepeat(
    embedders['q8, 2 threads']!,
    'night-time skincare routine with a discount code',
    2000,
  );
  console.log('cached repeat', cached);
  const bursts = await queryBursts(
    embedders['q8, 2 threads']!,
    queries().slice(queryCount + warmup, queryCount + warmup + 320),
    16,
  );
  console.log('bursts of concurrent queries', bursts);
  for (const e of Object.values(embedders)) await e.close();

  console.log(`document throughput (${docCount} SciFact abstracts, title + text)…`);
  const texts = documents(docCount);
  const throughput = await documentThroughput('q8', cores, texts, 10);
  console.log(throughput);
  const fp32Texts = texts.slice(0, Math.min(400, texts.length));
  const throughputFp32 = await documentThroughput('fp32', cores, fp32Texts, 4);
  console.log(throughputFp32);
  const throughputQ8OneThread = await documentThroughput('q8', 1, fp32Texts, 4);
  console.log(throughputQ8OneThread);

  console.log('RSS (child processes)…');
  const rss = measureRss();

  const result = {
    date: started.toISOString(),
    machine: {
      cpus: cores,
      model: cpus()[0]?.model,
      totalMemGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverageAtEnd: loadavg().map(round2),
    },
    model: MODEL_DIR,
    queryLatency: latency,
    cachedRepeat: cached,
    concurrentQueryBursts: bursts,
    documentThroughput: [throughput, throughputFp32, throughputQ8OneThread],
    rssMiB: rss,
  };
  const out = writeResult('embedding.json', result);
  console.log(`wrote ${out}`);
}

await main();
