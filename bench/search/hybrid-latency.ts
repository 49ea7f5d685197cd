/**
 * Hybrid vs BM25-only post search through the API, same queries, interleaved (bench/search.md,
 * "Hybrid latency at 1M posts": hybrid p50 within 25 ms of BM25-only at 1M posts).
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench MODEL_DIR=../shared/models/all-MiniLM-L6-v2 \
 *     npx tsx bench/search/hybrid-latency.ts [N]
 *
 * Two API nodes in this process over the same indices: SEARCH_RANKING=hybrid and =lexical. Every
 * request has a query text never asked before (composed from phrase lists), so each hybrid
 * request pays a real query embedding; a second pass repeats earlier texts (embedding cache hits).
 * Writes bench/results/hybrid-latency.json.
 */
import { cli } from '../lib/args.ts';
import { interleave, quantile, round, writeResult } from '../lib/measure.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';
import { apiClient } from '../lib/sides.ts';
import { distinctQueryText as queryText } from '../lib/query-texts.ts';

const { requests: N } = cli({ positionals: [{ name: 'requests', type: 'int', default: 200, min: 1 }] });
const WARMUP = 20;
// A rate limit far above the bench's pace: the limiter still runs (its cost is measured), never trips.
const DEFAULTS = { RATE_LIMIT_SEARCH_PER_MINUTE: '1000000', SEARCH_IN_FLIGHT_PER_KEY: '0' };
const hybrid = await startInProcessApi({
  name: 'hybrid latency bench',
  defaults: DEFAULTS,
  overrides: { SEARCH_RANKING: 'hybrid' },
  model: true,
});
// Both nodes as one deployment: the same signing secret.
const lexical = await startInProcessApi({
  name: 'hybrid latency bench',
  defaults: { ...DEFAULTS, SIGNING_SECRET: hybrid.config.SIGNING_SECRET },
  overrides: { SEARCH_RANKING: 'lexical' },
  model: true,
  scopes: [],
});
const key = hybrid.key;
const hybridEs = hybrid.service.connections.elasticsearch();
// Posts with a vector: those with a vector document.
const counts = await hybridEs.count({ index: `${hybrid.config.INDEX_PREFIX}-post-vectors` });
const total = await hybridEs.count({ index: `${hybrid.config.INDEX_PREFIX}-posts` });

const clients = { hybrid: apiClient(hybrid.address, key), lexical: apiClient(lexical.address, key) };
const search = (side: keyof typeof clients, query: string) =>
  clients[side].post('/v1/social/posts/search', { post: { query }, limit: 20 });

async function pass(name: string, text: (i: number) => string) {
  const times = await interleave({
    n: N,
    warmup: WARMUP,
    request: (i) => i,
    sides: [
      ['hybrid', (i) => search('hybrid', text(i))],
      ['lexical', (i) => search('lexical', text(i))],
    ],
  });
  // Paired by query text (both sides asked it back to back): robust to the machine's drift.
  const paired = times.hybrid.map((h, i) => h - times.lexical[i]!);
  const row = {
    pass: name,
    requests: N,
    paired_difference_p50_ms: round(quantile(paired, 0.5), 1),
    hybrid_p50_ms: round(quantile(times.hybrid, 0.5), 1),
    lexical_p50_ms: round(quantile(times.lexical, 0.5), 1),
    p50_difference_ms: round(quantile(times.hybrid, 0.5) - quantile(times.lexical, 0.5), 1),
    hybrid_p99_ms: round(quantile(times.hybrid, 0.99), 1),
    lexical_p99_ms: round(quantile(times.lexical, 0.99), 1),
  };
  console.log(JSON.stringify(row));
  return row;
}
const rows = [
  await pass('distinct queries (embedding each)', (i) => queryText(i)),
  await pass('repeated queries (embedding cached)', (i) => queryText(i)),
];
writeResult('hybrid-latency.json', {
  date: new Date().toISOString(),
  posts: total.count,
  with_vectors: counts.count,
  rows,
});
console.table(rows);
await Promise.all(Object.values(clients).map((c) => c.close()));
await hybrid.close();
await lexical.close();
