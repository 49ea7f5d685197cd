/**
 * A nearest-neighbour search as the search request's top-level `knn` section against the same
 * search as a `knn` query (src/engine/elasticsearch/queries/nearest-query.ts), the engine alone:
 * interleaved pair by pair, the reference vectors of random records of the index, and whether the
 * two shapes return the same window.
 *
 *   npx tsx bench/search/knn-shape.ts [--index bench-accounts] [--field lookalike_embedding] \
 *     [--k 100] [--candidates 200] [--references 300] [--rounds 2]
 *
 * `--index` is an index or alias (a prefix's `<prefix>-accounts` or `<prefix>-post-vectors`, where
 * the posts' vectors are); `--field` is `lookalike_embedding` on accounts, `embedding` on posts'
 * vectors.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { cli } from '../lib/args.ts';
import { interleave, quantile, round } from '../lib/measure.ts';
import { sampleVectors } from '../lib/scan.ts';

const args = cli({
  options: {
    index: { type: 'string', default: 'bench-accounts' },
    field: { type: 'string', default: 'lookalike_embedding' },
    k: { type: 'int', default: 100, min: 1 },
    candidates: { type: 'int', default: 200, min: 1 },
    references: { type: 'int', default: 300, min: 1 },
    rounds: { type: 'int', default: 2, min: 1 },
  },
});
const es = new Client({ node: process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200' });
const index = args.index;
const field = args.field;
const k = args.k;
const candidates = args.candidates;

const vectors = await sampleVectors(es, index, field, args.references);
const pit = (await es.openPointInTime({ index, keep_alive: '5m' })).id;
// The shape of a similar_to search: a filter and one record left out.
const filter: estypes.QueryDslQueryContainer = {
  bool: { filter: [{ exists: { field } }], must_not: [{ ids: { values: ['-'] } }] },
};
const knn = { field, k, num_candidates: candidates, filter };
const section = (v: number[], size: number) =>
  es.search({
    pit: { id: pit, keep_alive: '5m' },
    knn: { ...knn, query_vector: v },
    size,
    _source: false,
    track_total_hits: false,
  });
const query = (v: number[], size: number) =>
  es.search({
    pit: { id: pit, keep_alive: '5m' },
    query: { knn: { ...knn, query_vector: v } },
    size,
    _source: false,
    track_total_hits: false,
  });

// Pair by pair, which side goes first alternating, every reference vector once per round.
const times = await interleave({
  n: args.rounds * vectors.length,
  warmup: 0,
  request: (i) => vectors[i % vectors.length]!,
  sides: [
    ['section', (v) => section(v, 21)],
    ['query', (v) => query(v, 21)],
  ],
});
let identical = 0;
for (const v of vectors.slice(0, 50)) {
  const [a, b] = await Promise.all([section(v, k), query(v, k)]);
  if (a.hits.hits.map((h) => h._id).join() === b.hits.hits.map((h) => h._id).join()) identical++;
}
await es.closePointInTime({ id: pit });
const at = (xs: number[], q: number) => round(quantile(xs, q));
console.log(
  JSON.stringify({
    index,
    field,
    k,
    candidates,
    pairs: times.query.length,
    section_p50_ms: at(times.section, 0.5),
    query_p50_ms: at(times.query, 0.5),
    section_p99_ms: at(times.section, 0.99),
    query_p99_ms: at(times.query, 0.99),
    identical_windows: `${identical}/${Math.min(50, vectors.length)}`,
  }),
);
