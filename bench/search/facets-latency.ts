/**
 * Facets latency: a post facets call with 5 fields against the matching post search, through the
 * API, interleaved request by request, with the raw engine (the same aggregation and the same
 * search query sent to Elasticsearch directly) timed in the same run.
 *
 *   INDEX_PREFIX=bench13 REDIS_PREFIX=bench13 npx tsx bench/search/facets-latency.ts load <posts> [copies]
 *   INDEX_PREFIX=bench13 REDIS_PREFIX=bench13 npx tsx bench/search/facets-latency.ts run [requests]
 *
 * `load` builds the index from the seed generator (bench/lib/generated-posts.ts; `copies` > 1
 * indexes each post that many times under distinct ids). Results: bench/results/facets-latency.json.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Pool } from 'undici';
import { facetAggregations } from '../../src/engine/elasticsearch/reads/facet-search.ts';
import { postSearchQuery, postSearchSort, SEARCH_SOURCE } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { postFacetsRequestSchema } from '../../src/query/facet-request.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { createApi } from '../../src/start/api.ts';
import { openKeys } from '../../src/start/core.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import { loadGeneratedPosts } from '../lib/generated-posts.ts';

const [mode = 'run', arg1, arg2] = process.argv.slice(2);
const config = loadConfig({
  NODE_ENV: 'production',
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  RATE_LIMIT_SEARCH_PER_MINUTE: '1000000',
  EMBEDDINGS: 'off',
  ...process.env,
});
const es = new Client({ node: config.ELASTICSEARCH_URL });
const postsAlias = `${config.INDEX_PREFIX}-posts`;

const QUERIES = [
  'skincare routine',
  'budget meal prep',
  'strength training for beginners',
  'travel packing tips',
  'dog training tips',
  'home workout',
];
const FORMATS = [['reel'], ['carousel'], ['reel', 'image']];
const FACETS = [
  { field: 'format', size: 10 },
  { field: 'topics', size: 10 },
  { field: 'hashtags', size: 10 },
  { field: 'author.niches', size: 10 },
  {
    field: 'views',
    ranges: [{ to: 1000 }, { from: 1000, to: 10_000 }, { from: 10_000, to: 100_000 }, { from: 100_000 }],
  },
];

/** A bound every post meets, distinct per run and request: the request cache outlives a run. */
const RUN_SALT = Math.floor(Math.random() * 1_000_000);
const unique = (i: number) => ({ lt: new Date(Date.UTC(2030, 0, 1) + RUN_SALT * 1000 + i).toISOString() });

/**
 * One scenario: the post scope of request i. Each request is distinct (`views ≥ i`), so neither
 * side is answered from the shard request cache (a `size: 0` request is cacheable, a page is not,
 * which would flatter facets; in production intake refreshes invalidate that cache every second).
 */
const SCENARIOS: Array<{ name: string; scope: (i: number) => Record<string, unknown> }> = [
  {
    name: 'query',
    scope: (i) => ({ query: QUERIES[i % QUERIES.length], filters: { views: { gte: i }, posted_at: unique(i) } }),
  },
  {
    name: 'filters',
    scope: (i) => ({
      filters: { format: { in: FORMATS[i % FORMATS.length] }, views: { gte: 100 + i }, posted_at: unique(i) },
    }),
  },
];

async function run(n: number): Promise<void> {
  const warmup = 20;
  const service = openServiceProcess(config);
  await service.connections.redisReady();
  const server = createApi(config, service.connections, { engine: service.engine, embedder: service.embedder });
  const address = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const keys = openKeys(config, service.connections, { cached: false });
  const { key } = await keys.create({ owner: 'bench@example.com', name: 'facets bench', scopes: ['search'] });
  const pool = new Pool(address, { connections: 1, pipelining: 1 });
  const api = async (path: string, body: unknown) => {
    const response = await pool.request({
      path,
      method: 'POST',
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}: ${text}`);
    return JSON.parse(text);
  };
  const rawSearch = async (scope: unknown) => {
    const request = parsePostSearchRequest({ post: scope, limit: 20 });
    if (request.kind !== 'initial') throw new Error('initial only');
    const query: estypes.QueryDslQueryContainer = postSearchQuery(request.search);
    await es.search({
      index: postsAlias,
      query,
      sort: postSearchSort(request.search),
      size: 21,
      _source: SEARCH_SOURCE,
      track_total_hits: false,
    });
  };
  const rawFacets = async (scope: unknown) => {
    const request = postFacetsRequestSchema.parse({ post: scope, facets: FACETS });
    await es.search({
      index: postsAlias,
      query: postSearchQuery(request.search),
      size: 0,
      track_total_hits: true,
      aggs: facetAggregations(request.facets),
    });
  };
  const quantile = (xs: number[], q: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
  const rows: Record<string, unknown>[] = [];
  for (const scenario of SCENARIOS) {
    const t = { search: [] as number[], facets: [] as number[], rawSearch: [] as number[], rawFacets: [] as number[] };
    const sides: Array<[keyof typeof t, (scope: unknown) => Promise<unknown>]> = [
      ['search', (scope) => api('/v1/social/posts/search', { post: scope, limit: 20 })],
      ['facets', (scope) => api('/v1/social/posts/facets', { post: scope, facets: FACETS })],
      ['rawSearch', rawSearch],
      ['rawFacets', rawFacets],
    ];
    for (let i = 0; i < n + warmup; i++) {
      const scope = scenario.scope(i);
      const order = [...sides.slice(i % 4), ...sides.slice(0, i % 4)];
      for (const [name, call] of order) {
        const start = performance.now();
        await call(scope);
        if (i >= warmup) t[name].push(performance.now() - start);
      }
    }
    const p = (xs: number[], q: number) => +quantile(xs, q).toFixed(2);
    const row = {
      scenario: scenario.name,
      requests: n,
      search_p50: p(t.search, 0.5),
      facets_p50: p(t.facets, 0.5),
      p50_ratio: +(quantile(t.facets, 0.5) / quantile(t.search, 0.5)).toFixed(2),
      search_p99: p(t.search, 0.99),
      facets_p99: p(t.facets, 0.99),
      p99_ratio: +(quantile(t.facets, 0.99) / quantile(t.search, 0.99)).toFixed(2),
      raw_search_p50: p(t.rawSearch, 0.5),
      raw_facets_p50: p(t.rawFacets, 0.5),
      raw_p50_ratio: +(quantile(t.rawFacets, 0.5) / quantile(t.rawSearch, 0.5)).toFixed(2),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  const posts = (await es.count({ index: postsAlias })).count;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    `bench/results/facets-latency-${posts}.json`,
    JSON.stringify({ date: new Date().toISOString(), posts, facets: FACETS, rows }, null, 2),
  );
  console.table(rows);
  await pool.close();
  await server.close();
  await keys.close();
  await service.close();
}

if (mode === 'load') await loadGeneratedPosts(config, Number(arg1 ?? 10_000), Number(arg2 ?? 1));
else await run(Number(arg1 ?? 200));
await es.close();
