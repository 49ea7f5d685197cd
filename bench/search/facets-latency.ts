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
import { Client } from '@elastic/elasticsearch';
import { facetAggregations } from '../../src/engine/elasticsearch/reads/facet-search.ts';
import { postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { postFacetsRequestSchema } from '../../src/query/facet-request.ts';
import { cli } from '../lib/args.ts';
import { GENERATED_POSTS_POSITIONALS, loadGeneratedPosts } from '../lib/generated-posts.ts';
import { interleave, quantile, round, writeResult } from '../lib/measure.ts';
import { benchConfig, startInProcessApi } from '../lib/in-process-api.ts';
import { apiClient, rawPostSearch } from '../lib/sides.ts';

const args = cli({ positionals: GENERATED_POSTS_POSITIONALS });
const DEFAULTS = { RATE_LIMIT_SEARCH_PER_MINUTE: '1000000', SEARCH_IN_FLIGHT_PER_KEY: '0', EMBEDDINGS: 'off' };
const config = benchConfig(DEFAULTS);
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
  const node = await startInProcessApi({ name: 'facets bench', defaults: DEFAULTS });
  const client = apiClient(node.address, node.key);
  const rawSearch = (scope: unknown) => rawPostSearch(es, postsAlias, { post: scope, limit: 20 });
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
  const rows: Record<string, unknown>[] = [];
  for (const scenario of SCENARIOS) {
    const t = await interleave({
      n,
      warmup,
      request: scenario.scope,
      sides: [
        ['search', (scope) => client.post('/v1/social/posts/search', { post: scope, limit: 20 })],
        ['facets', (scope) => client.post('/v1/social/posts/facets', { post: scope, facets: FACETS })],
        ['rawSearch', rawSearch],
        ['rawFacets', rawFacets],
      ],
    });
    const p = (xs: number[], q: number) => round(quantile(xs, q));
    const row = {
      scenario: scenario.name,
      requests: n,
      search_p50: p(t.search, 0.5),
      facets_p50: p(t.facets, 0.5),
      p50_ratio: round(quantile(t.facets, 0.5) / quantile(t.search, 0.5)),
      search_p99: p(t.search, 0.99),
      facets_p99: p(t.facets, 0.99),
      p99_ratio: round(quantile(t.facets, 0.99) / quantile(t.search, 0.99)),
      raw_search_p50: p(t.rawSearch, 0.5),
      raw_facets_p50: p(t.rawFacets, 0.5),
      raw_p50_ratio: round(quantile(t.rawFacets, 0.5) / quantile(t.rawSearch, 0.5)),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  const posts = (await es.count({ index: postsAlias })).count;
  writeResult(`facets-latency-${posts}.json`, { date: new Date().toISOString(), posts, facets: FACETS, rows });
  console.table(rows);
  await client.close();
  await node.close();
}

if (args.mode === 'load') await loadGeneratedPosts(config, args.count ?? 10_000, args.copies);
else await run(args.count ?? 200);
await es.close();
