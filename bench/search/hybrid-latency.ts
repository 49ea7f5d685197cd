/**
 * Hybrid vs BM25-only post search through the API, same queries, interleaved (bench/search.md,
 * "Hybrid latency at 1M posts": hybrid p50 within 25 ms of BM25-only at 1M posts).
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench MODEL_DIR=../shared/models/all-MiniLM-L6-v2 \
 *     npx tsx bench/search/hybrid-latency.ts [N]
 *
 * Two API nodes in this process over the same indices: SEARCH_RANKING=hybrid and =lexical. Every
 * request has a query text never asked before (composed from phrase lists), so each hybrid
 * request pays a real query embedding; a second pass repeats earlier texts (embedding cache hits).
 * Writes bench/results/hybrid-latency.json.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadConfig } from '../../src/internal/config.ts';
import { createApi, type Api } from '../../src/start/api.ts';
import { openServiceProcess, type ServiceProcess } from '../../src/start/process.ts';

const N = Number(process.argv[2] ?? 200);
const WARMUP = 20;
// A rate limit far above the bench's pace: the limiter still runs (its cost is measured), never trips.
const env = {
  NODE_ENV: 'production',
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  RATE_LIMIT_SEARCH_PER_MINUTE: '1000000',
  ...process.env,
};

async function node(
  ranking: 'hybrid' | 'lexical',
): Promise<{ service: ServiceProcess; api: Api; address: string; close(): Promise<void> }> {
  const service = openServiceProcess(loadConfig({ ...env, SEARCH_RANKING: ranking }));
  const { config, connections, engine, embedder } = service;
  await connections.redisReady();
  await embedder.ready();
  const api = createApi(config, connections, { engine, embedder });
  const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    service,
    api,
    address,
    close: async () => {
      await api.close();
      await service.close();
    },
  };
}
const hybrid = await node('hybrid');
const lexical = await node('lexical');
if (hybrid.service.embedder.status().state !== 'ready') throw new Error('set MODEL_DIR: the hybrid node has no model');
const { key } = await hybrid.api.keys.create({
  owner: 'bench@example.com',
  name: 'hybrid latency bench',
  scopes: ['search'],
});
const hybridEs = hybrid.service.connections.elasticsearch();
const counts = await hybridEs.count({
  index: `${hybrid.service.config.INDEX_PREFIX}-posts`,
  query: { exists: { field: 'embedding' } },
});
const total = await hybridEs.count({ index: `${hybrid.service.config.INDEX_PREFIX}-posts` });

const WHO = ['creators', 'a creator', 'beginners', 'people', 'someone', 'a coach', 'a mom', 'students'];
const WHAT = [
  'showing a night-time skincare routine',
  'doing budget meal prep for the week',
  'explaining index funds simply',
  'training a puppy to sit',
  'packing a carry-on for two weeks',
  'building a gaming setup on a budget',
  'baking sourdough at home',
  'doing a home workout without equipment',
  'reviewing drugstore makeup',
  'planning a toddler sleep schedule',
];
const HOW = [
  'with a discount code',
  'in under a minute',
  'for small apartments',
  'with honest results',
  'as a beginner',
  'before and after',
  'step by step',
  'on a tight budget',
];
const queryText = (i: number) =>
  `${WHO[i % WHO.length]} ${WHAT[Math.floor(i / WHO.length) % WHAT.length]} ${HOW[Math.floor(i / (WHO.length * WHAT.length)) % HOW.length]} ${i}`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
function search(address: string, query: string): Promise<void> {
  const payload = JSON.stringify({ post: { query }, limit: 20 });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${address}/v1/social/posts/search`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(void JSON.parse(Buffer.concat(chunks).toString()))
            : reject(new Error(`${response.statusCode}: ${Buffer.concat(chunks).toString()}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
async function pass(name: string, text: (i: number) => string) {
  const times = { hybrid: [] as number[], lexical: [] as number[] };
  for (let i = 0; i < N + WARMUP; i++) {
    for (const side of i % 2 === 0 ? (['hybrid', 'lexical'] as const) : (['lexical', 'hybrid'] as const)) {
      const started = performance.now();
      await search(side === 'hybrid' ? hybrid.address : lexical.address, text(i));
      if (i >= WARMUP) times[side].push(performance.now() - started);
    }
  }
  // Paired by query text (both sides asked it back to back): robust to the machine's drift.
  const paired = times.hybrid.map((h, i) => h - times.lexical[i]!);
  const row = {
    pass: name,
    requests: N,
    paired_difference_p50_ms: +quantile(paired, 0.5).toFixed(1),
    hybrid_p50_ms: +quantile(times.hybrid, 0.5).toFixed(1),
    lexical_p50_ms: +quantile(times.lexical, 0.5).toFixed(1),
    p50_difference_ms: +(quantile(times.hybrid, 0.5) - quantile(times.lexical, 0.5)).toFixed(1),
    hybrid_p99_ms: +quantile(times.hybrid, 0.99).toFixed(1),
    lexical_p99_ms: +quantile(times.lexical, 0.99).toFixed(1),
  };
  console.log(JSON.stringify(row));
  return row;
}
const rows = [
  await pass('distinct queries (embedding each)', (i) => queryText(i)),
  await pass('repeated queries (embedding cached)', (i) => queryText(i)),
];
writeFileSync(
  'bench/results/hybrid-latency.json',
  JSON.stringify({ date: new Date().toISOString(), posts: total.count, with_vectors: counts.count, rows }, null, 2),
);
console.table(rows);
agent.destroy();
await hybrid.close();
await lexical.close();
