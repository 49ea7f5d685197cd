/**
 * Post counts latency (bench/counts.md): `POST /v1/social/posts/counts` through the API against the
 * same date histogram sent straight to Elasticsearch, with and without a breakdown, interleaved
 * request by request in a rotating order so that machine noise hits every side alike.
 *
 *   INDEX_PREFIX=counts1m REDIS_PREFIX=counts1m npx tsx bench/search/counts-latency.ts load 100000 10
 *   INDEX_PREFIX=counts1m REDIS_PREFIX=counts1m npx tsx bench/search/counts-latency.ts run [requests]
 *
 * `load` builds the index from the seed generator (bench/lib/generated-posts.ts). `run` starts the
 * API in-process (production mode, lexical ranking, the rate limit on but never tripping). The
 * raw side sends what the engine adapter sends: the search's query within the window
 * (`windowQuery`) and `histogramAggregations`; with a breakdown, the top values first, then the
 * histogram counting them per bucket, as two requests. Results: bench/results/counts-latency-<posts>.json.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Pool } from 'undici';
import { histogramAggregations, windowQuery } from '../../src/engine/elasticsearch/reads/count-search.ts';
import { esPath } from '../../src/engine/elasticsearch/queries/filter-compiler.ts';
import { postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { bucketStarts, countWindow } from '../../src/query/count-window.ts';
import { postCountsRequestSchema } from '../../src/query/counts-request.ts';
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
const DAY = 86_400_000;
/** The seed's clock: its posts end on 2026-11-01 (src/seed/generator.ts). */
const SEED_END = Date.parse('2026-11-01T00:00:00Z');
const BREAKDOWN = { by: 'niches', size: 5 };

/** Every request distinct (a bound drawn per request), so that no side is answered from the shard request cache. */
const SCENARIOS = [
  {
    name: 'query',
    body: (i: number) => ({
      post: {
        query: 'skincare routine',
        filters: {
          views: { gte: i % 50 },
          posted_at: { gte: iso(SEED_END - (30 + (i % 7)) * DAY), lt: iso(SEED_END) },
        },
      },
      interval: 'day',
      time_zone: 'Europe/Paris',
    }),
  },
  {
    name: 'filters',
    body: (i: number) => ({
      post: {
        filters: {
          format: { in: ['reel'] },
          views: { gte: i % 50 },
          posted_at: { gte: iso(SEED_END - (90 + (i % 7)) * DAY), lt: iso(SEED_END) },
        },
      },
      interval: 'week',
      time_zone: 'UTC',
    }),
  },
];

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

async function run(n: number): Promise<void> {
  const warmup = 20;
  const service = openServiceProcess(config);
  await service.connections.redisReady();
  const server = createApi(config, service.connections, { engine: service.engine, embedder: service.embedder });
  const address = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const keys = openKeys(config, service.connections, { cached: false });
  const { key } = await keys.create({ owner: 'bench@example.com', name: 'counts bench', scopes: ['search'] });
  const pool = new Pool(address, { connections: 1, pipelining: 1 });
  const api = async (body: unknown) => {
    const response = await pool.request({
      path: '/v1/social/posts/counts',
      method: 'POST',
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`counts answered ${response.statusCode}: ${text}`);
    return JSON.parse(text) as { total: number };
  };
  /** The engine adapter's requests, sent straight to Elasticsearch (no point in time). */
  const raw = async (body: unknown, breakdown: boolean) => {
    const request = postCountsRequestSchema.parse(body);
    const window = countWindow(request.search.filter, { ...request, now: Date.now() });
    const starts = bucketStarts(window);
    const query: estypes.QueryDslQueryContainer = windowQuery(postSearchQuery(request.search), window);
    if (!breakdown) {
      const r = await es.search({
        index: postsAlias,
        query,
        size: 0,
        track_total_hits: true,
        aggs: histogramAggregations(window, starts),
      });
      return (r.hits.total as { value: number }).value;
    }
    const field = postCountsRequestSchema.parse({ ...(body as object), breakdown: BREAKDOWN }).breakdown!.field;
    const top = await es.search({
      index: postsAlias,
      query,
      size: 0,
      track_total_hits: true,
      aggs: {
        top: {
          terms: { field: esPath(field.field), size: BREAKDOWN.size, order: [{ _count: 'desc' }, { _key: 'asc' }] },
        },
      },
    });
    const values = (top.aggregations?.['top'] as { buckets: Array<{ key: string }> }).buckets.map((b) => String(b.key));
    await es.search({
      index: postsAlias,
      query,
      size: 0,
      track_total_hits: false,
      aggs: histogramAggregations(window, starts, { field, values }),
    });
    return (top.hits.total as { value: number }).value;
  };
  const quantile = (xs: number[], q: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
  const rows: Record<string, unknown>[] = [];
  for (const scenario of SCENARIOS) {
    const t = { counts: [] as number[], raw: [] as number[], breakdown: [] as number[], rawBreakdown: [] as number[] };
    const matched: number[] = [];
    const sides: Array<[keyof typeof t, (body: object) => Promise<unknown>]> = [
      ['counts', (body) => api(body)],
      ['raw', (body) => raw(body, false)],
      ['breakdown', (body) => api({ ...body, breakdown: BREAKDOWN })],
      ['rawBreakdown', (body) => raw(body, true)],
    ];
    for (let i = 0; i < n + warmup; i++) {
      const body = scenario.body(i);
      const order = [...sides.slice(i % 4), ...sides.slice(0, i % 4)];
      for (const [name, call] of order) {
        const start = performance.now();
        const answer = await call(body);
        if (i >= warmup) t[name].push(performance.now() - start);
        if (name === 'counts' && i >= warmup) matched.push((answer as { total: number }).total);
      }
    }
    const p = (xs: number[], q: number) => +quantile(xs, q).toFixed(2);
    const ratio = (a: number[], b: number[], q: number) => +(quantile(a, q) / quantile(b, q)).toFixed(2);
    const row = {
      scenario: scenario.name,
      requests: n,
      matched_p50: quantile(matched, 0.5),
      counts_p50: p(t.counts, 0.5),
      raw_p50: p(t.raw, 0.5),
      p50_ratio: ratio(t.counts, t.raw, 0.5),
      counts_p99: p(t.counts, 0.99),
      raw_p99: p(t.raw, 0.99),
      p99_ratio: ratio(t.counts, t.raw, 0.99),
      breakdown_p50: p(t.breakdown, 0.5),
      raw_breakdown_p50: p(t.rawBreakdown, 0.5),
      breakdown_p50_ratio: ratio(t.breakdown, t.rawBreakdown, 0.5),
      breakdown_cost_p50: ratio(t.breakdown, t.counts, 0.5),
      raw_breakdown_cost_p50: ratio(t.rawBreakdown, t.raw, 0.5),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  const posts = (await es.count({ index: postsAlias })).count;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    `bench/results/counts-latency-${posts}.json`,
    JSON.stringify({ date: new Date().toISOString(), posts, breakdown: BREAKDOWN, rows }, null, 2),
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
