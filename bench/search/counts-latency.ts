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
import { histogramAggregations, windowQuery } from '../../src/engine/elasticsearch/reads/count-search.ts';
import { esPath } from '../../src/engine/elasticsearch/queries/filter-compiler.ts';
import { postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { bucketStarts, countWindow } from '../../src/query/count-window.ts';
import { postCountsRequestSchema } from '../../src/query/counts-request.ts';
import { cli } from '../lib/args.ts';
import { GENERATED_POSTS_POSITIONALS, loadGeneratedPosts } from '../lib/generated-posts.ts';
import { interleave, quantile, round, writeResult } from '../lib/measure.ts';
import { benchConfig, startInProcessApi } from '../lib/in-process-api.ts';
import { apiClient } from '../lib/sides.ts';

const args = cli({ positionals: GENERATED_POSTS_POSITIONALS });
const DEFAULTS = { RATE_LIMIT_SEARCH_PER_MINUTE: '1000000', SEARCH_IN_FLIGHT_PER_KEY: '0', EMBEDDINGS: 'off' };
const config = benchConfig(DEFAULTS);
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
  const node = await startInProcessApi({ name: 'counts bench', defaults: DEFAULTS });
  const client = apiClient(node.address, node.key);
  const api = (body: unknown) => client.post('/v1/social/posts/counts', body);
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
  const rows: Record<string, unknown>[] = [];
  for (const scenario of SCENARIOS) {
    const matched: number[] = [];
    const t = await interleave({
      n,
      warmup,
      request: (i): object => scenario.body(i),
      sides: [
        ['counts', (body) => api(body)],
        ['raw', (body) => raw(body, false)],
        ['breakdown', (body) => api({ ...body, breakdown: BREAKDOWN })],
        ['rawBreakdown', (body) => raw(body, true)],
      ],
      answer: (side, answer, _body, kept) => {
        if (side === 'counts' && kept) matched.push((answer as { total: number }).total);
      },
    });
    const p = (xs: number[], q: number) => round(quantile(xs, q));
    const ratio = (a: number[], b: number[], q: number) => round(quantile(a, q) / quantile(b, q));
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
  writeResult(`counts-latency-${posts}.json`, { date: new Date().toISOString(), posts, breakdown: BREAKDOWN, rows });
  console.table(rows);
  await client.close();
  await node.close();
}

if (args.mode === 'load') await loadGeneratedPosts(config, args.count ?? 10_000, args.copies);
else await run(args.count ?? 200);
await es.close();
