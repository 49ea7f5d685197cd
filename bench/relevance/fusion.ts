/**
 * Which fusion function and window: the same two candidate lists (BM25 and kNN, built by the
 * service's own query builders on the harness's index) fused several ways over the service's
 * window (FUSION_WINDOW), then at other window sizes (the top k of 100-long lists), nDCG@10 each.
 *
 *   npx tsx bench/relevance/fusion.ts      (after bench/relevance/harness.ts loaded SciFact with vectors)
 *
 * Writes bench/results/fusion-<collection>.json.
 */
import path from 'node:path';
import { FUSION_WINDOW } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { postSearchFilter, postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { fuseConvex, fuseHybrid, type FusedId, type ScoredId } from '../../src/query/fusion.ts';
import { fuseReciprocalRank } from './rrf.ts';
import { loadCorpus, loadQrels, loadQueries, scifactDir } from './beir.ts';
import { postServiceId } from './beir-observations.ts';
import { meanNdcgAtK, type ScoredDoc } from './ndcg.ts';
import { writeResult } from '../lib/measure.ts';
import { cli } from '../lib/args.ts';
import { openModel } from '../lib/model.ts';
import { postVectorsOf } from '../lib/sides.ts';
import { relevanceFloors } from '../../src/embedding/model-floors.ts';

cli({});

const dir = scifactDir();
const collection = path.basename(dir);
// The index bench/relevance/harness.ts loads (run it with semantic or hybrid first, so it has vectors).
const index = `${process.env.HARNESS_PREFIX ?? `relevance-harness-${collection.toLowerCase()}`}-posts`;
// Where the kNN runs: the posts' vectors are in an index of their own, with the filter facts.
const vectorIndex = postVectorsOf(index);
const { config, embedder, es } = await openModel();

const corpus = await loadCorpus(dir);
const qrels = await loadQrels(dir, 'test');
const queries = [...(await loadQueries(dir))].filter(([id]) => qrels.has(id));
const docOf = new Map(corpus.map((d) => [postServiceId(collection, d.id), d.id]));

/** Lists this long are fetched; each row cuts them to its window. */
const WIDE = 100;
const windows: Array<{ id: string; lexical: ScoredId[]; semantic: ScoredId[] }> = [];
for (const [id, text] of queries) {
  const request = parsePostSearchRequest({ post: { query: text.slice(0, 2000) }, limit: 10 });
  if (request.kind !== 'initial') throw new Error('initial');
  const vector = Array.from(await embedder.embedQuery(text));
  const response = await es.msearch({
    index,
    searches: [
      {},
      { query: postSearchQuery(request.search), size: WIDE, _source: false },
      { index: vectorIndex },
      {
        knn: {
          field: 'embedding',
          query_vector: vector,
          k: WIDE,
          num_candidates: 2 * WIDE,
          filter: postSearchFilter(request.search),
        },
        size: WIDE,
        _source: false,
      },
    ],
  });
  const [lexical, semantic] = response.responses.map((r) => {
    if ('error' in r) throw new Error(JSON.stringify(r.error));
    return r.hits.hits.map((h) => ({ id: h._id!, score: h._score ?? 0 }));
  });
  windows.push({ id, lexical: lexical!, semantic: semantic! });
}

const sorted = (hits: ScoredId[]) => [...hits].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
function ndcg(
  fuse: (lexical: ScoredId[], semantic: ScoredId[], lexicalFloor: number) => Array<{ id: string }>,
  window = FUSION_WINDOW,
): number {
  const run = new Map<string, ScoredDoc[]>();
  for (const w of windows) {
    const lexical = sorted(w.lexical);
    // The first hit past the window, or BM25's floor when the window holds every match.
    const ranked = fuse(
      lexical.slice(0, window),
      sorted(w.semantic).slice(0, window),
      lexical[window]?.score ?? 0,
    ).slice(0, 10);
    run.set(
      w.id,
      ranked.map((f, rank) => ({ id: docOf.get(f.id)!, score: ranked.length - rank })),
    );
  }
  return +meanNdcgAtK(run, qrels, { ignoreIdenticalIds: true }).mean.toFixed(4);
}
/** Elasticsearch's own `query` + `knn` combination: raw BM25 plus the kNN score. */
const rawSum = (lexical: ScoredId[], semantic: ScoredId[]): FusedId[] => {
  const sum = new Map<string, number>();
  for (const h of [...lexical, ...semantic]) sum.set(h.id, (sum.get(h.id) ?? 0) + h.score);
  return [...sum]
    .map(([id, score]) => ({ id, score, lexical: null, semantic: null }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
};

const SIMILARITY_FLOOR = relevanceFloors(config).similarity;
const open = { lexicalWeight: 0.5, similarityFloor: null, semanticEvidence: true, lexicalFloor: 0 };
const floored = { ...open, similarityFloor: SIMILARITY_FLOOR };
/** A phantom neighbour at similarity −1 (score 0): min–max over it is division by the maximum. */
const ZERO = { id: '\u0000zero', score: 0, cosine: -1 };
const tiered = (hits: ScoredId[]) => hits.map((h) => ({ ...h, tier: 0 }));
/** Elasticsearch's cosine kNN score is (1 + cos) / 2. */
const cosines = (hits: ScoredId[]) => hits.map((h) => ({ ...h, cosine: 2 * h.score - 1 }));

const rows = [
  { method: 'BM25 alone', ndcg_at_10: ndcg((l) => sorted(l)) },
  { method: 'kNN alone', ndcg_at_10: ndcg((_l, s) => sorted(s)) },
  { method: 'raw score sum (ES query + knn)', ndcg_at_10: ndcg(rawSum) },
  { method: 'RRF, k = 60', ndcg_at_10: ndcg((l, s) => fuseReciprocalRank(l, s, 60)) },
  { method: 'min–max convex, w = 0.5 (without the lexical floor)', ndcg_at_10: ndcg((l, s) => fuseConvex(l, s, 0.5)) },
  {
    method: 'lexical floored at the first unretrieved score, semantic min–max (adopted, no similarity floor)',
    ndcg_at_10: ndcg((l, s, f) => fuseHybrid(tiered(l), cosines(s), { ...open, lexicalFloor: f })),
  },
  {
    method: `same, with the similarity floor ${SIMILARITY_FLOOR} (adopted)`,
    ndcg_at_10: ndcg((l, s, f) => fuseHybrid(tiered(l), cosines(s), { ...floored, lexicalFloor: f })),
  },
  {
    method: 'lexical ÷ max (theoretical minimum 0), semantic min–max',
    ndcg_at_10: ndcg((l, s) => fuseHybrid(tiered(l), cosines(s), open)),
  },
  {
    method: 'both ÷ max (theoretical minimum on both sides)',
    ndcg_at_10: ndcg((l, s) => fuseHybrid(tiered(l), [...cosines(s), ZERO], open).filter((h) => h.id !== ZERO.id)),
  },
  // Sensitivity, not tuning: how much the outcome depends on the weight around the default.
  { method: 'min–max convex, w = 0.3', ndcg_at_10: ndcg((l, s) => fuseConvex(l, s, 0.3)) },
  { method: 'min–max convex, w = 0.7', ndcg_at_10: ndcg((l, s) => fuseConvex(l, s, 0.7)) },
  // Window size: each retriever's top k of the same lists.
  ...[20, 30, 50, 100].map((k) => ({
    method: `min–max convex, w = 0.5, windows of ${k}`,
    ndcg_at_10: ndcg((l, s) => fuseConvex(l, s, 0.5), k),
  })),
];
console.table(rows);

// Calibrating the floor: the cosine similarity of judged-relevant documents the kNN window found.
const relevantCosines: number[] = [];
for (const w of windows) {
  const judged = qrels.get(w.id)!;
  for (const h of w.semantic.slice(0, FUSION_WINDOW))
    if ((judged.get(docOf.get(h.id)!) ?? 0) > 0) relevantCosines.push(2 * h.score - 1);
}
relevantCosines.sort((a, b) => a - b);
const pct = (q: number) => +relevantCosines[Math.floor(q * (relevantCosines.length - 1))]!.toFixed(3);
const calibration = {
  relevant_in_knn_window: relevantCosines.length,
  p01: pct(0.01),
  p02: pct(0.02),
  p05: pct(0.05),
  p10: pct(0.1),
  p50: pct(0.5),
};
console.log('cosine of judged-relevant kNN hits:', calibration);
writeResult(`fusion-${collection.toLowerCase()}.json`, {
  date: new Date().toISOString(),
  collection,
  window: FUSION_WINDOW,
  fetched: WIDE,
  queries: windows.length,
  rows,
  calibration,
});
await embedder.close();
await es.close();
