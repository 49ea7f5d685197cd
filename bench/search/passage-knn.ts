/**
 * What passages cost a search's kNN side, the engine alone: the neighbours of a vector by the
 * posts' heads only (`nearestQuery` on `embedding`, the raw engine's one kNN) against the service's
 * `nearestPostsQuery` (heads and long posts' passages, `dis_max`), interleaved pair by pair, with
 * the window and candidates of a search (fused-search.ts) and the stored head vectors of random
 * posts as the query vectors. Also how much of the window the passages changed.
 *
 *   npx tsx bench/search/passage-knn.ts [--index relevance-harness-passages-posts] [--references 300] [--rounds 2]
 *
 * `--index` is a posts index or alias (`<prefix>-posts`); both kNNs run on the vector index beside
 * it (`<prefix>-post-vectors`), which holds the vectors and the filter facts.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { FUSION_WINDOW, KNN_CANDIDATES } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { nearestPostsQuery, nearestQuery } from '../../src/engine/elasticsearch/queries/nearest-query.ts';
import { cli } from '../lib/args.ts';
import { interleave, quantile, round } from '../lib/measure.ts';
import { sampleVectors } from '../lib/scan.ts';
import { postVectorsOf } from '../lib/sides.ts';

const args = cli({
  options: {
    index: { type: 'string', default: 'relevance-harness-passages-posts' },
    references: { type: 'int', default: 300, min: 1 },
    rounds: { type: 'int', default: 2, min: 1 },
  },
});
const es = new Client({ node: process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200' });
const index = args.index;
const vectorIndex = postVectorsOf(index);

// Head vectors sampled from the vector documents (a post's record may not name its vectors yet).
const vectors = await sampleVectors(es, vectorIndex, 'embedding', args.references);
const posts = (await es.count({ index })).count;
const withPassages = { nested: { path: 'passages', query: { match_all: {} } } };
const long = (await es.count({ index: vectorIndex, query: withPassages })).count;
const pit = (await es.openPointInTime({ index: vectorIndex, keep_alive: '5m' })).id;
// The shape of a search's semantic side: the servable filter, the window and its candidates.
const filter: estypes.QueryDslQueryContainer = { bool: { filter: [{ term: { servable: true } }] } };
const shapes = {
  head: (v: number[]) =>
    nearestQuery({ field: 'embedding', vector: v, k: FUSION_WINDOW, candidates: KNN_CANDIDATES, filter }),
  passages: (v: number[]) => nearestPostsQuery({ vector: v, k: FUSION_WINDOW, candidates: KNN_CANDIDATES, filter }),
};
type Side = keyof typeof shapes;
const search = (side: Side, v: number[]) =>
  es.search({
    pit: { id: pit, keep_alive: '5m' },
    ...shapes[side](v),
    size: FUSION_WINDOW,
    _source: false,
    track_total_hits: false,
  });

// Pair by pair, which side goes first alternating, every reference vector once per round.
const times = await interleave({
  n: args.rounds * vectors.length,
  warmup: 0,
  request: (i) => vectors[i % vectors.length]!,
  sides: [
    ['head', (v) => search('head', v)],
    ['passages', (v) => search('passages', v)],
  ],
});
let changedTop10 = 0;
let newInWindow = 0;
for (const v of vectors) {
  const [a, b] = await Promise.all([search('head', v), search('passages', v)]);
  const headIds = new Set(a.hits.hits.map((h) => h._id));
  newInWindow += b.hits.hits.filter((h) => !headIds.has(h._id)).length;
  const top = (r: typeof a) =>
    r.hits.hits
      .slice(0, 10)
      .map((h) => h._id)
      .join();
  if (top(a) !== top(b)) changedTop10++;
}
await es.closePointInTime({ id: pit });
const at = (xs: number[], q: number) => round(quantile(xs, q));
console.log(
  JSON.stringify({
    index,
    posts,
    posts_with_passages: long,
    pairs: times.head.length,
    head_p50_ms: at(times.head, 0.5),
    passages_p50_ms: at(times.passages, 0.5),
    p50_ratio: +(at(times.passages, 0.5) / at(times.head, 0.5)).toFixed(2),
    head_p99_ms: at(times.head, 0.99),
    passages_p99_ms: at(times.passages, 0.99),
    top10_changed: `${changedTop10}/${vectors.length}`,
    window_posts_from_passages: +(newInWindow / vectors.length).toFixed(1),
  }),
);
