/**
 * The floor for any HTTP service in front of Elasticsearch on this machine: a bare Fastify route
 * that sends the filters-only + sort query of latency.ts to Elasticsearch and returns the hits'
 * records as they came (no authentication, no validation, no rendering, no cursor, no Redis),
 * against the same query sent directly, interleaved exactly as latency.ts does.
 *
 *   INDEX_PREFIX=bench npx tsx bench/search/proxy-floor.ts [N]
 *
 * If even this proxy is over 1.25x, the latency target for a query this fast measures the
 * machine's HTTP hop, not the service.
 */
import { Client } from '@elastic/elasticsearch';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { postSearchQuery, postSearchSort, SEARCH_SOURCE } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';

const N = Number(process.argv[2] ?? 500);
const WARMUP = 30;
const posts = `${process.env.INDEX_PREFIX ?? 'bench'}-posts`;
const es = new Client({ node: process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200' });
const QUERIES = [
  'night-time skincare routine with a discount code',
  'budget meal prep for the week',
  'strength training for beginners',
  'how to save money on groceries',
  'travel packing tips carry on',
];
// PROXY_SCENARIO=query: the "posts: query" scenario of latency.ts instead of filters + sort.
const body = (i: number) =>
  process.env.PROXY_SCENARIO === 'query'
    ? { post: { query: QUERIES[i % QUERIES.length] }, limit: 20 }
    : {
        post: {
          filters: {
            format: { in: ['reel'] },
            views: { gte: 1000 * (1 + (i % 5)) },
            posted_at: { gte: '2026-03-01T00:00:00Z' },
          },
        },
        sort: { by: 'views', order: 'desc' },
        limit: 20,
      };

async function rawSearch(request: unknown) {
  const parsed = parsePostSearchRequest(request);
  if (parsed.kind !== 'initial') throw new Error('initial requests only');
  return es.search<{ record: unknown }>({
    index: posts,
    query: postSearchQuery(parsed.search),
    sort: postSearchSort(parsed.search),
    size: parsed.limit + 1,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
}

const app = Fastify({ logger: false });
app.post('/search', async (request) => {
  const response = await rawSearch(request.body);
  return { data: response.hits.hits.slice(0, 20).map((h) => h._source!.record) };
});
// The hop alone: the same engine call, a response of 20 ids.
app.post('/search-ids', async (request) => {
  const response = await rawSearch(request.body);
  return { data: response.hits.hits.slice(0, 20).map((h) => h._id) };
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
const pool = new Pool(address, { connections: 1 });
async function proxied(request: unknown, path = '/search') {
  const response = await pool.request({
    path,
    method: 'POST',
    body: JSON.stringify(request),
    headers: { 'content-type': 'application/json' },
  });
  JSON.parse(await response.body.text());
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
for (const path of ['/search', '/search-ids']) {
  const times = { proxy: [] as number[], raw: [] as number[] };
  for (let i = 0; i < N + WARMUP; i++) {
    for (const side of i % 2 === 0 ? (['proxy', 'raw'] as const) : (['raw', 'proxy'] as const)) {
      const started = performance.now();
      if (side === 'proxy') await proxied(body(i), path);
      else await rawSearch(body(i));
      if (i >= WARMUP) times[side].push(performance.now() - started);
    }
  }
  console.log(
    JSON.stringify({
      proxy: path === '/search' ? 'returns the 20 records' : 'returns 20 ids',
      requests: N,
      proxy_p50_ms: +quantile(times.proxy, 0.5).toFixed(2),
      raw_p50_ms: +quantile(times.raw, 0.5).toFixed(2),
      p50_ratio: +(quantile(times.proxy, 0.5) / quantile(times.raw, 0.5)).toFixed(2),
      proxy_p99_ms: +quantile(times.proxy, 0.99).toFixed(2),
      raw_p99_ms: +quantile(times.raw, 0.99).toFixed(2),
      p99_ratio: +(quantile(times.proxy, 0.99) / quantile(times.raw, 0.99)).toFixed(2),
    }),
  );
}
await pool.close();
await app.close();
await es.close();
