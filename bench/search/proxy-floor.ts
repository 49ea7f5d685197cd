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
import Fastify from 'fastify';
import { cli } from '../lib/args.ts';
import { interleave, quantile, round } from '../lib/measure.ts';
import { apiClient, rawEngine, rawPostSearch } from '../lib/sides.ts';
import { SEARCH_QUERIES } from '../lib/query-texts.ts';

const { requests: N } = cli({ positionals: [{ name: 'requests', type: 'int', default: 500, min: 1 }] });
const WARMUP = 30;
const { es, posts } = rawEngine();
const QUERIES = SEARCH_QUERIES.slice(0, 5);
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

const rawSearch = (request: unknown) => rawPostSearch(es, posts, request);

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
const client = apiClient(address, null);
for (const path of ['/search', '/search-ids']) {
  const times = await interleave({
    n: N,
    warmup: WARMUP,
    request: body,
    sides: [
      ['proxy', (request) => client.post(path, request)],
      ['raw', rawSearch],
    ],
  });
  const q = (side: keyof typeof times, at: number) => quantile(times[side], at);
  console.log(
    JSON.stringify({
      proxy: path === '/search' ? 'returns the 20 records' : 'returns 20 ids',
      requests: N,
      proxy_p50_ms: round(q('proxy', 0.5)),
      raw_p50_ms: round(q('raw', 0.5)),
      p50_ratio: round(q('proxy', 0.5) / q('raw', 0.5)),
      proxy_p99_ms: round(q('proxy', 0.99)),
      raw_p99_ms: round(q('raw', 0.99)),
      p99_ratio: round(q('proxy', 0.99) / q('raw', 0.99)),
    }),
  );
}
await client.close();
await app.close();
await es.close();
