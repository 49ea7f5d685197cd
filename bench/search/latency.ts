/**
 * Search latency benchmark: the API against the same Elasticsearch queries sent directly, in the
 * same run, interleaved request by request so that machine noise hits both sides alike.
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench npx tsx bench/search/latency.ts [requests-per-scenario]
 *
 * Needs a seeded prefix (`social-search seed --posts 1000000 --accounts 100000` under
 * INDEX_PREFIX=bench) and starts its own API in-process on a free port. Writes
 * bench/results/search-latency.json and prints a table of p50/p99 and API/raw ratios.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { loadConfig } from '../../src/internal/config.ts';
import {
  accountSearchQuery,
  accountSearchSort,
  narrowedScope,
  qualifyingRequest,
} from '../../src/engine/elasticsearch/queries/account-query.ts';
import { postSearchQuery, postSearchSort, SEARCH_SOURCE } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { parseAccountSearchRequest, parsePostSearchRequest } from '../../src/query/search-request.ts';
import { openKeys } from '../../src/start/core.ts';
import { createApi } from '../../src/start/api.ts';
import { openServiceProcess } from '../../src/start/process.ts';

const N = Number(process.argv[2] ?? 300);
const WARMUP = 30;
// Production settings (no per-response schema check), unless the environment says otherwise.
// A rate limit far above the bench's pace: the limiter still runs (its cost is measured), never trips.
const config = loadConfig({
  NODE_ENV: 'production',
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  RATE_LIMIT_SEARCH_PER_MINUTE: '1000000',
  ...process.env,
});
const service = openServiceProcess(config);
const { connections, engine, embedder } = service;
await connections.redisReady();
// API_URL: a service running in its own process (as in production: `social-search serve`, same
// INDEX_PREFIX/REDIS_PREFIX), so the load generator and the service do not share one event loop.
const server = process.env.API_URL ? null : createApi(config, connections, { engine, embedder });
const address = process.env.API_URL ?? (await server!.app.listen({ host: '127.0.0.1', port: 0 }));
const keys = openKeys(config, connections, { cached: false });
const { key } = await keys.create({ owner: 'bench@example.com', name: 'latency bench', scopes: ['search'] });
const es = new Client({ node: config.ELASTICSEARCH_URL });
const posts = `${config.INDEX_PREFIX}-posts`;
const accounts = `${config.INDEX_PREFIX}-accounts`;

const QUERIES = [
  'night-time skincare routine with a discount code',
  'budget meal prep for the week',
  'strength training for beginners',
  'how to save money on groceries',
  'travel packing tips carry on',
  'cozy knitting patterns',
  'retinol guide for sensitive skin',
  'home workout without equipment',
  'sourdough bread starter',
  'dog training tips for puppies',
  'film photography beginner',
  'personal finance index funds',
  'gaming setup tour',
  'toddler sleep routine',
  'beat making tutorial',
];
const NICHES = ['skincare', 'fitness', 'home_cooking', 'personal_finance', 'travel', 'fashion', 'gaming', 'beauty'];

type Scenario = { name: string; path: string; body: (i: number) => unknown; raw: (body: any) => Promise<unknown[]> };

async function rawPostSearch(body: unknown) {
  const request = parsePostSearchRequest(body);
  if (request.kind !== 'initial') throw new Error('initial requests only');
  const response = await es.search<{ record: unknown }>({
    index: posts,
    query: postSearchQuery(request.search),
    sort: postSearchSort(request.search),
    size: request.limit + 1,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
  return response.hits.hits.slice(0, request.limit).map((h) => h._source!.record);
}

async function rawAccountSearch(body: unknown) {
  const request = parseAccountSearchRequest(body);
  if (request.kind !== 'initial') throw new Error('initial requests only');
  const search = request.search;
  const filter: estypes.QueryDslQueryContainer[] = [accountSearchQuery(search)];
  if (search.posts) {
    // The engine work the service asks for: the scope narrowed by the account filter's exactly
    // copied facts (account-query.ts, narrowedScope).
    const scope = narrowedScope(search.posts, search.filter);
    // The service's own aggregation body (no shard request cache either: a cached answer would
    // be an artifact of the bench, which asks each scope once per side).
    const agg = await es.search({ index: posts, ...qualifyingRequest(scope) });
    const ids = ((agg.aggregations?.authors as any)?.buckets ?? []).map((b: { key: string }) => b.key);
    filter.push(ids.length ? { terms: { id: ids } } : { match_none: {} });
  }
  const response = await es.search<{ record: unknown }>({
    index: accounts,
    query: { bool: { filter } },
    sort: accountSearchSort(search),
    size: request.limit + 1,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
  return response.hits.hits.slice(0, request.limit).map((h) => h._source!.record);
}

const scenarios: Scenario[] = [
  {
    name: 'posts: query',
    path: '/v1/social/posts/search',
    body: (i) => ({ post: { query: QUERIES[i % QUERIES.length] }, limit: 20 }),
    raw: rawPostSearch,
  },
  {
    name: 'posts: filters + sort',
    path: '/v1/social/posts/search',
    body: (i) => ({
      post: {
        filters: {
          format: { in: ['reel'] },
          views: { gte: 1000 * (1 + (i % 5)) },
          posted_at: { gte: '2026-03-01T00:00:00Z' },
        },
      },
      sort: { by: 'views', order: 'desc' },
      limit: 20,
    }),
    raw: rawPostSearch,
  },
  {
    name: 'posts: query + author filters',
    path: '/v1/social/posts/search',
    body: (i) => ({
      post: {
        query: QUERIES[i % QUERIES.length],
        author: { filters: { followers_count: { gte: 1000 }, niches: { contains_any: [NICHES[i % NICHES.length]] } } },
      },
      limit: 20,
    }),
    raw: rawPostSearch,
  },
  {
    // A bound inside a bucket of the posts' coarse author counters (src/domain/volatile-facts.ts):
    // the API looks up the accounts of that bucket; the raw side filters on exact copies, as posts
    // held them before (the cost of exactness without the fan-out).
    name: 'posts: author bound inside a bucket',
    path: '/v1/social/posts/search',
    body: (i) => ({
      post: {
        filters: { format: { in: ['reel'] } },
        author: { filters: { followers_count: { gte: 10_500 + 100 * (i % 5) } } },
      },
      sort: { by: 'views', order: 'desc' },
      limit: 20,
    }),
    raw: rawPostSearch,
  },
  {
    // A posts scope of its own per request (`views ≥ i`): the API remembers a scope's qualifying
    // accounts per snapshot (for next pages), which must not flatter first pages here.
    name: 'accounts: posts scope',
    path: '/v1/social/accounts/search',
    body: (i) => ({
      account: {
        filters: { niches: { contains_any: [NICHES[i % NICHES.length]] } },
        posts: {
          minimum_matching_posts: 2,
          filters: {
            offer_types: { contains_any: ['discount'] },
            posted_at: { gte: '2026-06-01T00:00:00Z' },
            views: { gte: i },
          },
        },
      },
      sort: { by: 'followers_count', order: 'desc' },
      limit: 20,
    }),
    raw: rawAccountSearch,
  },
];

// The API is called with the HTTP client the Elasticsearch client itself uses for the raw side
// (undici, one keep-alive connection), so both sides pay the same client costs and the ratio
// measures the service. The response is parsed, as the Elasticsearch client parses its own.
const pool = new Pool(address, { connections: 1, pipelining: 1 });
async function api(path: string, body: unknown): Promise<void> {
  const response = await pool.request({
    path,
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}: ${text}`);
  JSON.parse(text);
}

// The floor any HTTP service in front of the engine pays here: a bare Fastify route (no key,
// no validation, no rendering, no cursor, no Redis) that runs the raw side's query and returns
// the records it got. Timed alongside, so every run says how much of the API's cost is the hop.
const floorApp = Fastify({ logger: false });
floorApp.post<{ Params: { scenario: string } }>('/floor/:scenario', async (request) => ({
  data: await scenarios[Number(request.params.scenario)]!.raw(request.body),
}));
const floorPool = new Pool(await floorApp.listen({ host: '127.0.0.1', port: 0 }), { connections: 1, pipelining: 1 });
async function floor(scenario: number, body: unknown): Promise<void> {
  const response = await floorPool.request({
    path: `/floor/${scenario}`,
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  JSON.parse(await response.body.text());
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const results: Record<string, unknown>[] = [];
// ONLY=<substring of a scenario name> runs just the matching scenarios.
for (const [index, s] of scenarios.entries()) {
  if (process.env.ONLY && !s.name.includes(process.env.ONLY)) continue;
  const apiMs: number[] = [];
  const rawMs: number[] = [];
  const floorMs: number[] = [];
  const sides = ['api', 'raw', 'floor'] as const;
  for (let i = 0; i < N + WARMUP; i++) {
    const body = s.body(i);
    // Rotate which side goes first, so none always benefits from a warmer cache.
    const order = [...sides.slice(i % 3), ...sides.slice(0, i % 3)];
    for (const side of order) {
      const t = performance.now();
      if (side === 'api') await api(s.path, body);
      else if (side === 'raw') await s.raw(body);
      else await floor(index, body);
      if (i >= WARMUP) (side === 'api' ? apiMs : side === 'raw' ? rawMs : floorMs).push(performance.now() - t);
    }
  }
  apiMs.sort((a, b) => a - b);
  rawMs.sort((a, b) => a - b);
  floorMs.sort((a, b) => a - b);
  const row = {
    scenario: s.name,
    requests: N,
    api_p50_ms: +quantile(apiMs, 0.5).toFixed(2),
    raw_p50_ms: +quantile(rawMs, 0.5).toFixed(2),
    api_p99_ms: +quantile(apiMs, 0.99).toFixed(2),
    raw_p99_ms: +quantile(rawMs, 0.99).toFixed(2),
    p50_ratio: +(quantile(apiMs, 0.5) / quantile(rawMs, 0.5)).toFixed(2),
    p99_ratio: +(quantile(apiMs, 0.99) / quantile(rawMs, 0.99)).toFixed(2),
    floor_p50_ratio: +(quantile(floorMs, 0.5) / quantile(rawMs, 0.5)).toFixed(2),
    floor_p99_ratio: +(quantile(floorMs, 0.99) / quantile(rawMs, 0.99)).toFixed(2),
  };
  results.push(row);
  console.log(JSON.stringify(row));
}
const counts = {
  posts: (await es.count({ index: posts })).count,
  accounts: (await es.count({ index: accounts })).count,
};
writeFileSync(
  'bench/results/search-latency.json',
  JSON.stringify({ date: new Date().toISOString(), counts, results }, null, 2),
);
console.table(results);
await pool.close();
await floorPool.close();
await floorApp.close();
await server?.close();
await keys.close();
await service.close();
await es.close();
