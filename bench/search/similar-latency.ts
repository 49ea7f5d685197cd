/**
 * Lookalike latency through the API (bench/search.md, "Lookalikes: latency"), each against the
 * search it replaces in a user's flow, same run, interleaved request by request:
 * - similar accounts (`account.similar_to` with filters) against the same filters alone;
 * - similar posts (`post.similar_to`) against a hybrid post search (a query text never asked
 *   before, so each pays its embedding).
 * Targets: similar accounts p50 and p99 ≤ 1.5× the filters-only search; similar posts ≤ 1.25× the
 * hybrid search.
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench MODEL_DIR=../shared/models/all-MiniLM-L6-v2 \
 *     npx tsx bench/search/similar-latency.ts [N]
 *
 * Needs an index with post vectors and accounts' lookalike vectors (bench/search.md says how the
 * 1M-post one is made). Writes bench/results/similar-latency.json.
 */
import { randomBytes } from 'node:crypto';
import type { estypes } from '@elastic/elasticsearch';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadConfig } from '../../src/internal/config.ts';
import { createApi } from '../../src/start/api.ts';
import { openServiceProcess } from '../../src/start/process.ts';

const N = Number(process.argv[2] ?? 300);
const WARMUP = 30;
const LIMIT = 20;
const config = loadConfig({
  NODE_ENV: 'production',
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  // Far above the bench's pace: the limiter runs (its cost is measured) but never trips.
  RATE_LIMIT_SEARCH_PER_MINUTE: '1000000',
  ...process.env,
  SEARCH_RANKING: 'hybrid',
});
const service = openServiceProcess(config);
const { connections, engine, embedder } = service;
await connections.redisReady();
await embedder.ready();
if (embedder.status().state !== 'ready') throw new Error('set MODEL_DIR: hybrid search needs the model');
const api = createApi(config, connections, { engine, embedder });
const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
const { key } = await api.keys.create({ owner: 'bench@example.com', name: 'similar latency', scopes: ['search'] });
const es = connections.elasticsearch();

/** `count` random IDs of documents matching `filter` (seeded: the same index gives the same sample). */
async function sample(index: string, filter: estypes.QueryDslQueryContainer[], count: number): Promise<string[]> {
  const response = await es.search({
    index,
    query: {
      function_score: {
        query: { bool: { filter } },
        functions: [{ random_score: { seed: 20261126, field: '_seq_no' } }],
      },
    },
    size: count,
    _source: false,
  });
  const ids = response.hits.hits.map((h) => h._id!);
  if (ids.length < count) throw new Error(`${index}: only ${ids.length} documents for ${count} references`);
  return ids;
}
const prefix = config.INDEX_PREFIX;
const accountRefs = await sample(
  `${prefix}-accounts`,
  [{ exists: { field: 'lookalike_embedding' } }, { term: { servable: true } }],
  N + WARMUP,
);
const postRefs = await sample(
  `${prefix}-posts`,
  [{ exists: { field: 'embedding' } }, { term: { servable: true } }],
  N + WARMUP,
);
const totals = {
  posts: (await es.count({ index: `${prefix}-posts` })).count,
  posts_with_vectors: (await es.count({ index: `${prefix}-posts`, query: { exists: { field: 'embedding' } } })).count,
  accounts: (await es.count({ index: `${prefix}-accounts`, query: { exists: { field: 'handle_observed_at' } } })).count,
  accounts_with_lookalikes: (
    await es.count({ index: `${prefix}-accounts`, query: { exists: { field: 'lookalike_embedding' } } })
  ).count,
};
console.log(JSON.stringify(totals));

/** What a brand filters creators by: reach, language, both with verification. */
const ACCOUNT_FILTERS = [
  { followers_count: { gte: 10_000 } },
  { followers_count: { gte: 1_000 }, publishing_languages: { contains_any: ['en'] } },
  { followers_count: { gte: 50_000 }, is_verified: { eq: false } },
];
const WHAT = [
  'night-time skincare routine',
  'budget meal prep for the week',
  'index funds explained simply',
  'training a puppy to sit',
  'packing a carry-on for two weeks',
  'gaming setup on a budget',
  'sourdough at home',
  'home workout without equipment',
];
const HOW = ['for beginners', 'in under a minute', 'with honest results', 'step by step', 'on a tight budget'];
const queryText = (i: number) => `${WHAT[i % WHAT.length]} ${HOW[Math.floor(i / WHAT.length) % HOW.length]} ${i}`;

async function search(kind: 'accounts' | 'posts', body: object): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${address}/v1/social/${kind}/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`${kind} ${JSON.stringify(body)}: ${response.status} ${text}`);
  return elapsed;
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/** N pairs after WARMUP, the two sides of each pair back to back in alternating order. */
async function compare(name: string, kind: 'accounts' | 'posts', pair: (i: number) => [object, object]) {
  const times = { similar: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < N + WARMUP; i++) {
    const [similar, baseline] = pair(i);
    const order = i % 2 === 0 ? (['similar', 'baseline'] as const) : (['baseline', 'similar'] as const);
    for (const side of order) {
      const elapsed = await search(kind, side === 'similar' ? similar : baseline);
      if (i >= WARMUP) times[side].push(elapsed);
    }
  }
  const at = (side: 'similar' | 'baseline', q: number) => +quantile(times[side], q).toFixed(1);
  const row = {
    measure: name,
    requests: N,
    similar_p50_ms: at('similar', 0.5),
    baseline_p50_ms: at('baseline', 0.5),
    ratio_p50: +(at('similar', 0.5) / at('baseline', 0.5)).toFixed(2),
    similar_p99_ms: at('similar', 0.99),
    baseline_p99_ms: at('baseline', 0.99),
    ratio_p99: +(at('similar', 0.99) / at('baseline', 0.99)).toFixed(2),
  };
  console.log(JSON.stringify(row));
  return row;
}

const rows = [
  await compare('similar accounts / the same filters alone', 'accounts', (i) => {
    const filters = ACCOUNT_FILTERS[i % ACCOUNT_FILTERS.length]!;
    return [
      { account: { similar_to: accountRefs[i], filters }, limit: LIMIT },
      { account: { filters }, limit: LIMIT },
    ];
  }),
  await compare('similar posts / hybrid post search', 'posts', (i) => [
    { post: { similar_to: postRefs[i] }, limit: LIMIT },
    { post: { query: queryText(i) }, limit: LIMIT },
  ]),
];
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/similar-latency.json',
  JSON.stringify({ date: new Date().toISOString(), ...totals, rows }, null, 2) + '\n',
);
console.table(rows);
await api.close();
await service.close();
