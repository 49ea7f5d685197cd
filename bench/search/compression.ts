/**
 * Compression of search pages: the same search asked with `Accept-Encoding` identity, gzip and br,
 * interleaved request by request over HTTP (undici, keep-alive) to an API in this process.
 * Reports p50/p99 time to the last byte and bytes on the wire per encoding.
 *
 *   INDEX_PREFIX=benchsmall REDIS_PREFIX=benchsmall EMBEDDINGS=off npx tsx bench/search/compression.ts [requests-per-encoding]
 *
 * Needs a seeded prefix (e.g. `social-search seed --posts 20000 --accounts 2000`).
 */
import { Pool } from 'undici';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';

const { requests: N } = cli({ positionals: [{ name: 'requests', type: 'int', default: 300, min: 1 }] });
const node = await startInProcessApi({ name: 'compression bench', defaults: { RATE_LIMIT_SEARCH_PER_MINUTE: '0' } });
const { address, key } = node;
const pool = new Pool(address, { connections: 1 });

const QUERIES = [
  'skincare routine',
  'budget travel tips',
  'home workout',
  'easy pasta recipe',
  'camera settings',
  'morning routine',
  'study tips',
  'discount code',
];
const ENCODINGS = ['identity', 'gzip', 'br'] as const;
const samples = Object.fromEntries(ENCODINGS.map((e) => [e, { ms: [] as number[], bytes: [] as number[] }]));

async function ask(encoding: string, query: string) {
  const started = performance.now();
  const response = await pool.request({
    method: 'POST',
    path: '/v1/social/posts/search',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'accept-encoding': encoding },
    body: JSON.stringify({ post: { query }, limit: 20 }),
  });
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Buffer).length;
  if (response.statusCode !== 200) throw new Error(`search answered ${response.statusCode}`);
  return { ms: performance.now() - started, bytes };
}

for (let i = 0; i < 30; i++) for (const e of ENCODINGS) await ask(e, QUERIES[i % QUERIES.length]!);
for (let i = 0; i < N; i++) {
  // Rotate which encoding goes first, so none always follows a cold query.
  for (let j = 0; j < ENCODINGS.length; j++) {
    const e = ENCODINGS[(i + j) % ENCODINGS.length]!;
    const { ms, bytes } = await ask(e, QUERIES[i % QUERIES.length]!);
    samples[e]!.ms.push(ms);
    samples[e]!.bytes.push(bytes);
  }
}
const pct = quantile;
const base = pct(samples.identity!.ms, 0.5);
console.table(
  ENCODINGS.map((e) => ({
    encoding: e,
    'p50 ms': pct(samples[e]!.ms, 0.5).toFixed(2),
    'p99 ms': pct(samples[e]!.ms, 0.99).toFixed(2),
    'p50 / identity': (pct(samples[e]!.ms, 0.5) / base).toFixed(3),
    'bytes (median)': pct(samples[e]!.bytes, 0.5),
  })),
);
await pool.close();
await node.close();
