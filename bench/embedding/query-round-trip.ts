/**
 * Query embedding in the API's own model thread against a round trip through a BullMQ queue to a
 * worker process that embeds it (docs/architecture.md, "Where the code departs from the card", b).
 * Both sides embed the same SciFact queries with the same model and settings, interleaved one by
 * one so that machine noise hits both; the cache is off on both sides (every query is a miss).
 *
 *   npx tsx bench/embedding/query-round-trip.ts [--queries 300] [--busy]
 *
 * `--busy`: the worker process also embeds documents (SciFact abstracts, 16 per job, as intake with
 * embeddings keeps it busy), so a query job waits for the model like it would during intake.
 *
 * Needs Redis (REDIS_URL, default redis://127.0.0.1:6379) and the model folder (MODEL_DIR).
 * Writes bench/results/query-round-trip.json.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { createEmbedder, type EmbeddingConfig } from '../../src/embedding/embedder.ts';
import { scifactDir } from '../relevance/beir.ts';
import { cli } from '../lib/args.ts';
import { writeResult, quantile } from '../lib/measure.ts';
import { MODEL_DIR } from '../lib/model.ts';

const REDIS_URL = new URL(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const connection = { host: REDIS_URL.hostname, port: Number(REDIS_URL.port || 6379) };
const QUEUE = 'bench-query-embedding';
const DOC_QUEUE = 'bench-document-embedding';
const PREFIX = `bench-rt-${process.pid}`;
const config: EmbeddingConfig = { MODEL_DIR, EMBEDDINGS: 'on', EMBEDDING_DTYPE: 'q8', EMBEDDING_THREADS: 2 };

const percentile = (values: number[], p: number) => quantile(values, p / 100);
const round2 = (x: number) => Math.round(x * 100) / 100;

/** The worker process: embeds each job's text and returns the vector, as a queue round trip would. */
async function workerChild(prefix: string): Promise<void> {
  const embedder = createEmbedder({ ...config, EMBEDDING_QUERY_CACHE_MB: 0 });
  await embedder.ready();
  const worker = new Worker<{ text: string }, number[]>(
    QUEUE,
    async (job) => Array.from(await embedder.embedQuery(job.data.text)),
    { connection, prefix, concurrency: 1 },
  );
  const documents = new Worker<{ texts: string[] }, number>(
    DOC_QUEUE,
    async (job) => (await embedder.embedDocuments(job.data.texts)).length,
    { connection, prefix, concurrency: 1 },
  );
  await Promise.all([worker.waitUntilReady(), documents.waitUntilReady()]);
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => {
    void Promise.all([worker.close(), documents.close()])
      .then(() => embedder.close())
      .then(() => process.exit(0));
  });
}

async function main(): Promise<void> {
  const n = args.queries;
  const texts = readFileSync(path.join(scifactDir(), 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { text: string }).text)
    .slice(0, n);

  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--worker', PREFIX], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  const queue = new Queue<{ text: string }, number[]>(QUEUE, { connection, prefix: PREFIX });
  const events = new QueueEvents(QUEUE, { connection, prefix: PREFIX });
  await events.waitUntilReady();
  const embedder = createEmbedder({ ...config, EMBEDDING_QUERY_CACHE_MB: 0 });
  await embedder.ready();

  const inProcess: number[] = [];
  const roundTrip: number[] = [];
  const docQueue = new Queue<{ texts: string[] }, number>(DOC_QUEUE, { connection, prefix: PREFIX });
  if (args.busy) {
    const abstracts = readFileSync(path.join(scifactDir(), 'corpus.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(0, 16 * 400)
      .map((l) => (JSON.parse(l) as { text: string }).text);
    const jobs = [];
    for (let i = 0; i < abstracts.length; i += 16)
      jobs.push({ name: 'docs', data: { texts: abstracts.slice(i, i + 16) } });
    await docQueue.addBulk(jobs);
  }
  try {
    // Warm both sides up, then interleave one by one.
    for (const text of texts.slice(0, 10)) {
      await embedder.embedQuery(text);
      await (await queue.add('embed', { text }, { removeOnComplete: true })).waitUntilFinished(events);
    }
    for (const text of texts) {
      let t = performance.now();
      await embedder.embedQuery(text);
      inProcess.push(performance.now() - t);
      t = performance.now();
      const job = await queue.add('embed', { text }, { removeOnComplete: true });
      const vector = await job.waitUntilFinished(events);
      roundTrip.push(performance.now() - t);
      if (vector.length !== 384) throw new Error(`unexpected vector length ${vector.length}`);
    }
  } finally {
    child.kill('SIGTERM');
    await embedder.close();
    for (const q of [queue, docQueue]) await q.obliterate({ force: true }).catch(() => undefined);
    await Promise.all([queue.close(), docQueue.close(), events.close()]);
  }
  const stats = (xs: number[]) => ({
    p50: round2(percentile(xs, 50)),
    p90: round2(percentile(xs, 90)),
    p99: round2(percentile(xs, 99)),
  });
  const result = {
    queries: texts.length,
    worker_busy_with_documents: args.busy,
    in_process_ms: stats(inProcess),
    queue_round_trip_ms: stats(roundTrip),
    ratio_p50: round2(percentile(roundTrip, 50) / percentile(inProcess, 50)),
    ratio_p99: round2(percentile(roundTrip, 99) / percentile(inProcess, 99)),
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('query-round-trip.json', result);
}

// `--worker <prefix>`: the child process the round trip goes to.
const args = cli({
  options: {
    queries: { type: 'int', default: 300, min: 1 },
    busy: { type: 'boolean' },
    worker: { type: 'string' },
  },
});
if (args.worker) await workerChild(args.worker);
else await main();
