/**
 * Does the int8 HNSW index keep quality (bench/relevance.md, "The vector index: int8 HNSW keeps
 * quality")? The post vectors of the harness's SciFact index, copied into throwaway indices that
 * differ only in `index_options` (`int8_hnsw`, the service's; float `hnsw`; exact `flat`), each
 * force-merged to one segment and asked the 300 test queries with the service's kNN settings.
 * Reports dense-only nDCG@10, recall against the exact neighbours, hybrid nDCG@10 (fused with the
 * service's BM25 window, as the service fuses), query `took` and index size.
 *
 *   npx tsx bench/relevance/vector-index.ts      (after bench/relevance/harness.ts loaded SciFact with vectors)
 *
 * Writes bench/results/vector-index-<collection>.json; deletes its indices, also on failure.
 */
import { postHeadVectors } from '../lib/model-vectors.ts';
import { postVectorsOf } from '../lib/sides.ts';
import { Client } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '../../src/internal/config.ts';
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { FUSION_WINDOW } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { dequantizeVector, quantizeVector } from '../../src/engine/elasticsearch/vectors.ts';
import { postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { fuseConvex, type ScoredId } from '../../src/query/fusion.ts';
import { loadCorpus, loadQrels, loadQueries, scifactDir } from './beir.ts';
import { postServiceId } from './beir-observations.ts';
import { meanNdcgAtK, type ScoredDoc } from './ndcg.ts';
import { writeResult } from '../lib/measure.ts';
import { cli } from '../lib/args.ts';
import { MODEL_DIR } from '../lib/model.ts';

cli({});

const dir = scifactDir();
const collection = path.basename(dir);
const source = `${process.env.HARNESS_PREFIX ?? `relevance-harness-${collection.toLowerCase()}`}-posts`;
const config = loadConfig({ MODEL_DIR, ...process.env });
const es = new Client({ node: config.ELASTICSEARCH_URL });
const run = `bench-vector-index-${randomBytes(3).toString('hex')}`;
const VARIANTS = ['int8_hnsw', 'hnsw', 'flat'] as const;
type Variant = (typeof VARIANTS)[number];
const indexOf = (variant: Variant) => `${run}-${variant.replace('_', '-')}`;

async function cleanup() {
  await es.indices
    .delete({ index: `${run}-*`, ignore_unavailable: true, allow_no_indices: true })
    .catch(() => undefined);
}
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

try {
  // 1. The stored post vectors (what the service indexes), read once.
  const vectors: Array<{ id: string; vector: number[] }> = [];
  let after: unknown[] | undefined;
  for (;;) {
    const page = await es.search({
      // Posts with a vector: those with a vector document, which carries the post's `id` too.
      index: postVectorsOf(source),
      size: 1000,
      sort: [{ id: 'asc' }],
      _source: false,
      ...(after ? { search_after: after as never } : {}),
    });
    const hits = page.hits.hits;
    const stored = await postHeadVectors(
      es,
      source,
      hits.map((h) => h._id!),
    );
    for (const h of hits) {
      const vector = stored.get(h._id!);
      if (vector) vectors.push({ id: h._id!, vector });
    }
    if (hits.length < 1000) break;
    after = hits.at(-1)!.sort;
  }
  if (vectors.length === 0)
    throw new Error(`${source} holds no vectors: run bench/relevance/harness.ts --modes semantic first`);
  const dims = vectors[0]!.vector.length;

  // 2. One index per variant, same vectors, one segment each.
  const sizes: Record<string, number> = {};
  for (const variant of VARIANTS) {
    const index = indexOf(variant);
    await es.indices.create({
      index,
      settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
      mappings: {
        properties: {
          id: { type: 'keyword' },
          embedding: {
            type: 'dense_vector',
            dims,
            similarity: 'cosine',
            index: true,
            index_options: { type: variant },
          },
        },
      },
    });
    for (let i = 0; i < vectors.length; i += 500) {
      const operations = vectors
        .slice(i, i + 500)
        .flatMap((v) => [{ index: { _index: index, _id: v.id } }, { id: v.id, embedding: v.vector }]);
      const response = await es.bulk({ operations });
      if (response.errors) throw new Error(`bulk into ${index} failed`);
    }
    await es.indices.refresh({ index });
    await es.indices.forcemerge({ index, max_num_segments: 1 });
    const stats = await es.indices.stats({ index, metric: 'store' });
    sizes[variant] = stats._all.total?.store?.size_in_bytes ?? 0;
  }

  // 3. The test queries, embedded as the service embeds them (q8) and quantized as cursors carry them.
  const embedder = createEmbedder(config);
  await embedder.ready();
  const corpus = await loadCorpus(dir);
  const qrels = await loadQrels(dir, 'test');
  const queries = [...(await loadQueries(dir))].filter(([id]) => qrels.has(id));
  const docOf = new Map(corpus.map((d) => [postServiceId(collection, d.id), d.id]));
  const runs = Object.fromEntries(
    [...VARIANTS, ...VARIANTS.map((v) => `hybrid ${v}`)].map((k) => [k, new Map<string, ScoredDoc[]>()]),
  );
  const took: Record<Variant, number[]> = { int8_hnsw: [], hnsw: [], flat: [] };
  const recall: Record<Variant, number[]> = { int8_hnsw: [], hnsw: [], flat: [] };
  const asRun = (hits: Array<{ id: string }>) =>
    hits.slice(0, 10).map((h, rank) => ({ id: docOf.get(h.id)!, score: 10 - rank }));

  for (const [queryId, text] of queries) {
    const vector = dequantizeVector(quantizeVector(await embedder.embedQuery(text)));
    const request = parsePostSearchRequest({ post: { query: text.slice(0, 2000) }, limit: 10 });
    if (request.kind !== 'initial') throw new Error('initial');
    const lexical = await es.search({
      index: source,
      query: postSearchQuery(request.search),
      size: FUSION_WINDOW,
      _source: false,
    });
    const lexicalWindow: ScoredId[] = lexical.hits.hits.map((h) => ({ id: h._id!, score: h._score ?? 0 }));
    const windows: Record<string, ScoredId[]> = {};
    for (const variant of VARIANTS) {
      const response = await es.search({
        index: indexOf(variant),
        size: FUSION_WINDOW,
        _source: false,
        knn: { field: 'embedding', query_vector: vector, k: FUSION_WINDOW, num_candidates: 2 * FUSION_WINDOW },
      });
      took[variant].push(response.took);
      windows[variant] = response.hits.hits.map((h) => ({ id: h._id!, score: h._score ?? 0 }));
      runs[variant]!.set(queryId, asRun(windows[variant]));
      runs[`hybrid ${variant}`]!.set(queryId, asRun(fuseConvex(lexicalWindow, windows[variant])));
    }
    const exact = new Set(windows.flat!.map((h) => h.id));
    for (const variant of VARIANTS)
      recall[variant].push(windows[variant]!.filter((h) => exact.has(h.id)).length / Math.max(1, exact.size));
  }
  await embedder.close();

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ndcg = (key: string) => +meanNdcgAtK(runs[key]!, qrels, { ignoreIdenticalIds: true }).mean.toFixed(4);
  const rows = VARIANTS.map((variant) => ({
    index_options: variant,
    dense_ndcg_at_10: ndcg(variant),
    hybrid_ndcg_at_10: ndcg(`hybrid ${variant}`),
    [`recall_at_${FUSION_WINDOW}_vs_exact`]: +mean(recall[variant]).toFixed(4),
    took_p50_ms: median(took[variant]),
    index_mb: +(sizes[variant]! / 1024 / 1024).toFixed(1),
  }));
  console.table(rows);
  writeResult(`vector-index-${collection.toLowerCase()}.json`, {
    date: new Date().toISOString(),
    collection,
    vectors: vectors.length,
    queries: queries.length,
    k: FUSION_WINDOW,
    num_candidates: 2 * FUSION_WINDOW,
    rows,
  });
} finally {
  await cleanup();
  await es.close();
}
