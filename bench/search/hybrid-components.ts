/**
 * Where a hybrid search's time goes inside Elasticsearch: each request the hybrid path sends,
 * timed alone against the same 1M index (no API), same query texts as hybrid-latency.ts. The kNN
 * requests run on the posts' vector index (`<prefix>-post-vectors`), where the vectors are.
 *
 *   INDEX_PREFIX=bench MODEL_DIR=../shared/models/all-MiniLM-L6-v2 npx tsx bench/search/hybrid-components.ts [N]
 *
 * Prints per-variant p50/p99 of wall time (the Elasticsearch client's round trip) and `took`.
 */
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { FUSION_WINDOW } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { postSearchFilter, postSearchQuery, SEARCH_SOURCE } from '../../src/engine/elasticsearch/queries/post-query.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { cli } from '../lib/args.ts';
import { quantile, round } from '../lib/measure.ts';
import { rawEngine } from '../lib/sides.ts';
import { distinctQueryText as queryText } from '../lib/query-texts.ts';

const { queries: N } = cli({ positionals: [{ name: 'queries', type: 'int', default: 60, min: 1 }] });
const { es, posts: index, vectors } = rawEngine();
const embedder = createEmbedder({
  MODEL_DIR: process.env.MODEL_DIR ?? '../shared/models/all-MiniLM-L6-v2',
  MODEL_ID: undefined,
  EMBEDDINGS: 'on',
  EMBEDDING_DTYPE: 'q8',
  EMBEDDING_THREADS: 0,
} as never);
await embedder.ready();

const search = (text: string): PostSearch => ({ query: text, filter: { kind: 'and', children: [] }, sort: null });
const pit = (await es.openPointInTime({ index, keep_alive: '10m' })).id;
// The kNN variants' snapshot: the vector documents, whose filter facts (`servable`) are the posts'.
const vectorPit = (await es.openPointInTime({ index: vectors, keep_alive: '10m' })).id;
const onVectors = { pit: { id: vectorPit, keep_alive: '10m' } };

type Variant = (text: string, vector: number[]) => Record<string, unknown>;
const W = FUSION_WINDOW;
const variants: Record<string, Variant> = {
  'BM25 page: size 21 + source (BM25-only search)': (t) => ({
    query: postSearchQuery(search(t)),
    sort: [{ _score: 'desc' }, { id: 'asc' }],
    size: 21,
    _source: SEARCH_SOURCE,
  }),
  [`BM25 window: size ${W}, no source`]: (t) => ({
    query: postSearchQuery(search(t)),
    sort: [{ _score: 'desc' }, { id: 'asc' }],
    size: W,
    _source: false,
  }),
  'BM25 window: size 100, no source': (t) => ({
    query: postSearchQuery(search(t)),
    sort: [{ _score: 'desc' }, { id: 'asc' }],
    size: 100,
    _source: false,
  }),
  [`kNN: k ${W}, num_candidates ${2 * W}, filtered`]: (t, v) => ({
    ...onVectors,
    knn: { field: 'embedding', query_vector: v, k: W, num_candidates: 2 * W, filter: postSearchFilter(search(t)) },
    size: W,
    _source: false,
  }),
  'kNN: k 100, num_candidates 200, filtered': (t, v) => ({
    ...onVectors,
    knn: { field: 'embedding', query_vector: v, k: 100, num_candidates: 200, filter: postSearchFilter(search(t)) },
    size: 100,
    _source: false,
  }),
  'records fetch: 20 ids + source': () => ({}),
};
// Real ids for the fetch variant.
const sample = await es.search({ index, size: 20, _source: false, query: { match_all: {} } });
const ids = sample.hits.hits.map((h) => h._id!);
variants['records fetch: 20 ids + source'] = () => ({
  query: { ids: { values: ids } },
  size: 20,
  _source: SEARCH_SOURCE,
});

const results: Record<string, { wall: number[]; took: number[] }> = {};
for (const name of Object.keys(variants)) results[name] = { wall: [], took: [] };
for (let i = 0; i < N + 10; i++) {
  const text = queryText(i);
  const vector = Array.from(await embedder.embedQuery(text));
  for (const [name, body] of Object.entries(variants)) {
    const started = performance.now();
    // The posts' snapshot unless the variant names the vectors' own.
    const response = await es.search({
      pit: { id: pit, keep_alive: '10m' },
      ...body(text, vector),
      track_total_hits: false,
    });
    if (i >= 10) {
      results[name]!.wall.push(performance.now() - started);
      results[name]!.took.push(response.took);
    }
  }
}
console.table(
  Object.entries(results).map(([name, r]) => ({
    variant: name,
    wall_p50: round(quantile(r.wall, 0.5), 1),
    wall_p99: round(quantile(r.wall, 0.99), 1),
    took_p50: quantile(r.took, 0.5),
  })),
);
await es.closePointInTime({ id: pit });
await es.closePointInTime({ id: vectorPit });
await embedder.close();
await es.close();
