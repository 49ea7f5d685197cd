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
import type { estypes } from '@elastic/elasticsearch';
import { cli } from '../lib/args.ts';
import { interleave, quantile, round, writeResult } from '../lib/measure.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';

const { requests: N } = cli({ positionals: [{ name: 'requests', type: 'int', default: 300, min: 1 }] });
const WARMUP = 30;
const LIMIT = 20;
// Far above the bench's pace: the limiter runs (its cost is measured) but never trips.
const node = await startInProcessApi({
  name: 'similar latency',
  defaults: { RATE_LIMIT_SEARCH_PER_MINUTE: '1000000', SEARCH_IN_FLIGHT_PER_KEY: '0' },
  overrides: { SEARCH_RANKING: 'hybrid' },
  model: true,
});
const { config, address, key } = node;
const es = node.service.connections.elasticsearch();

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
// A post with a vector has a vector document (`<prefix>-post-vectors`, with the post's ID and filter
// facts); its record may not name the vectors yet (they are written apart).
const postRefs = await sample(`${prefix}-post-vectors`, [{ term: { servable: true } }], N + WARMUP);
const totals = {
  posts: (await es.count({ index: `${prefix}-posts` })).count,
  posts_with_vectors: (await es.count({ index: `${prefix}-post-vectors` })).count,
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

// Global fetch, as a browser-side client would call it (the status is checked after the clock stops).
async function search(kind: 'accounts' | 'posts', body: object): Promise<{ status: number; text: string }> {
  const response = await fetch(`${address}/v1/social/${kind}/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

/** N pairs after WARMUP, the two sides of each pair back to back in alternating order. */
async function compare(name: string, kind: 'accounts' | 'posts', pair: (i: number) => [object, object]) {
  const times = await interleave({
    n: N,
    warmup: WARMUP,
    request: pair,
    sides: [
      ['similar', ([similar]) => search(kind, similar)],
      ['baseline', ([, baseline]) => search(kind, baseline)],
    ],
    answer: (side, answer, [similar, baseline]) => {
      const { status, text } = answer as { status: number; text: string };
      if (status !== 200)
        throw new Error(`${kind} ${JSON.stringify(side === 'similar' ? similar : baseline)}: ${status} ${text}`);
    },
  });
  const at = (side: 'similar' | 'baseline', q: number) => round(quantile(times[side], q), 1);
  const row = {
    measure: name,
    requests: N,
    similar_p50_ms: at('similar', 0.5),
    baseline_p50_ms: at('baseline', 0.5),
    ratio_p50: round(at('similar', 0.5) / at('baseline', 0.5)),
    similar_p99_ms: at('similar', 0.99),
    baseline_p99_ms: at('baseline', 0.99),
    ratio_p99: round(at('similar', 0.99) / at('baseline', 0.99)),
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
writeResult('similar-latency.json', { date: new Date().toISOString(), ...totals, rows });
console.table(rows);
await node.close();
