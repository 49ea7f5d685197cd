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
import { Client } from '@elastic/elasticsearch';
import Fastify from 'fastify';
import { cli } from '../lib/args.ts';
import { interleave, quantile, round, writeResult } from '../lib/measure.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';
import { apiClient, rawAccountRecords, rawPostRecords } from '../lib/sides.ts';
import { SEARCH_QUERIES as QUERIES } from '../lib/query-texts.ts';

const { requests: N } = cli({ positionals: [{ name: 'requests', type: 'int', default: 300, min: 1 }] });
const WARMUP = 30;
// API_URL: a service running in its own process (as in production: `social-search serve`, same
// INDEX_PREFIX/REDIS_PREFIX), so the load generator and the service do not share one event loop.
const node = await startInProcessApi({
  name: 'latency bench',
  defaults: { RATE_LIMIT_SEARCH_PER_MINUTE: '1000000', SEARCH_IN_FLIGHT_PER_KEY: '0' },
  ...(process.env.API_URL ? { apiUrl: process.env.API_URL } : {}),
});
const { config } = node;
const es = new Client({ node: config.ELASTICSEARCH_URL });
const posts = `${config.INDEX_PREFIX}-posts`;
const accounts = `${config.INDEX_PREFIX}-accounts`;

const NICHES = ['skincare', 'fitness', 'home_cooking', 'personal_finance', 'travel', 'fashion', 'gaming', 'beauty'];

type Scenario = { name: string; path: string; body: (i: number) => unknown; raw: (body: any) => Promise<unknown[]> };

const rawPostSearch = (body: unknown) => rawPostRecords(es, posts, body);
// With a posts scope, the engine work the service asks for: the scope narrowed by the account
// filter's exactly copied facts (account-query.ts, narrowedScope), then the accounts.
const rawAccountSearch = (body: unknown) => rawAccountRecords(es, { posts, accounts }, body);

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

// The API through one keep-alive connection, as the raw side's client (bench/lib/sides.ts).
const client = apiClient(node.address, node.key);

// The floor any HTTP service in front of the engine pays here: a bare Fastify route (no key,
// no validation, no rendering, no cursor, no Redis) that runs the raw side's query and returns
// the records it got. Timed alongside, so every run says how much of the API's cost is the hop.
const floorApp = Fastify({ logger: false });
floorApp.post<{ Params: { scenario: string } }>('/floor/:scenario', async (request) => ({
  data: await scenarios[Number(request.params.scenario)]!.raw(request.body),
}));
const floorClient = apiClient(await floorApp.listen({ host: '127.0.0.1', port: 0 }), null);

const results: Record<string, unknown>[] = [];
// ONLY=<substring of a scenario name> runs just the matching scenarios.
for (const [index, s] of scenarios.entries()) {
  if (process.env.ONLY && !s.name.includes(process.env.ONLY)) continue;
  const t = await interleave({
    n: N,
    warmup: WARMUP,
    request: s.body,
    sides: [
      ['api', (body) => client.post(s.path, body)],
      ['raw', (body) => s.raw(body)],
      ['floor', (body) => floorClient.post(`/floor/${index}`, body)],
    ],
  });
  const q = (side: keyof typeof t, at: number) => quantile(t[side], at);
  const row = {
    scenario: s.name,
    requests: N,
    api_p50_ms: round(q('api', 0.5)),
    raw_p50_ms: round(q('raw', 0.5)),
    api_p99_ms: round(q('api', 0.99)),
    raw_p99_ms: round(q('raw', 0.99)),
    p50_ratio: round(q('api', 0.5) / q('raw', 0.5)),
    p99_ratio: round(q('api', 0.99) / q('raw', 0.99)),
    floor_p50_ratio: round(q('floor', 0.5) / q('raw', 0.5)),
    floor_p99_ratio: round(q('floor', 0.99) / q('raw', 0.99)),
  };
  results.push(row);
  console.log(JSON.stringify(row));
}
const counts = {
  posts: (await es.count({ index: posts })).count,
  accounts: (await es.count({ index: accounts })).count,
};
writeResult('search-latency.json', { date: new Date().toISOString(), counts, results });
console.table(results);
await client.close();
await floorClient.close();
await floorApp.close();
await node.close();
await es.close();
