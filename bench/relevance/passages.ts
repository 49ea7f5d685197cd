/**
 * Long posts as passages, offline on SciFact (bench/relevance.md, "Long posts: the head the model
 * reads, and passages"): the model reads 256 tokens of a text, and the service embeds at most 700
 * characters of a caption (embedding-text.ts), while SciFact's abstracts (~214 words) often state
 * their conclusion past that point. Each abstract is embedded again whole (the tokenizer keeps 256
 * tokens) and as overlapping word windows past its head, each with its title; a post's similarity
 * is its best passage's (MaxP, Dai & Callan 2019). Every variant ranks by exact cosine, so only the
 * vectors differ; the lexical window is the service's (BM25 51 long on the harness's index) and the
 * fusion is the service's (hybrid-windows.ts).
 *
 *   npx tsx bench/relevance/harness.ts --modes semantic     # loads relevance-harness-scifact with vectors
 *   npx tsx bench/relevance/passages.ts   # ~11 min on 2 cores (the service's passages: passagesOf)
 *
 * p: two-sided paired sign-flip randomization test against the service's vectors' ranking (stats.ts).
 */
import { postHeadVectors } from '../lib/model-vectors.ts';
import path from 'node:path';
import { FUSION_WINDOW } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { hybridWindows } from '../../src/engine/elasticsearch/queries/hybrid-windows.ts';
import { postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { analyzeQuery } from '../../src/text/languages.ts';
import { passagesOf } from '../../src/text/embedding-text.ts';
import { rankScores } from './api-search.ts';
import { captionOf, postServiceId } from './beir-observations.ts';
import { loadCorpus, loadQrels, loadQueries, scifactDir } from './beir.ts';
import { ndcgAtK } from './ndcg.ts';
import { pairedRandomizationP } from './stats.ts';
import { cli } from '../lib/args.ts';
import { openModel } from '../lib/model.ts';
import { relevanceFloors } from '../../src/embedding/model-floors.ts';

cli({});

const { config, embedder, es } = await openModel();

const dir = scifactDir();
const collection = path.basename(dir);
const index = `relevance-harness-${collection.toLowerCase()}-posts`;
const corpus = await loadCorpus(dir);
const qrels = await loadQrels(dir, 'test');

const started = performance.now();
const ids = corpus.map((d) => postServiceId(collection, d.id));
// The service's vectors, as the harness stored them: the head of the caption (embedding-text.ts).
const storedOf = await postHeadVectors(es, index, ids);
const stored = ids.map((id) => {
  const v = storedOf.get(id);
  if (!v) throw new Error(`${id} has no stored vector: load the harness with vectors first`);
  return Float32Array.from(v);
});
const firsts = await embedder.embedDocuments(corpus.map(captionOf));
const later: Array<{ doc: number; text: string }> = corpus.flatMap((d, doc) =>
  passagesOf(d.title, d.text).map((text) => ({ doc, text })),
);
const laterVectors: Float32Array[] = [];
for (let i = 0; i < later.length; i += 256)
  laterVectors.push(...(await embedder.embedDocuments(later.slice(i, i + 256).map((p) => p.text))));
console.log(
  `${corpus.length} documents, ${later.length} later passages embedded in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);

const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
type Hit = { _id: string; _score: number; matched_queries?: string[] | Record<string, number> };
/** Each variant's first vector of a document, and whether its later passages count. */
const VARIANTS = [
  { name: "the service's vector (the caption's first 700 characters)", heads: stored, passages: false },
  { name: 'the first 256 tokens', heads: firsts, passages: false },
  { name: "the service's vector, best passage", heads: stored, passages: true },
  { name: 'the first 256 tokens, best passage', heads: firsts, passages: true },
];
/** The exact top of the window by cosine, as kNN scores (1 + cos) / 2. */
function semanticWindow(q: Float32Array, heads: Float32Array[], withPassages: boolean): Hit[] {
  const best = heads.map((v) => (v.length ? dot(q, v) : -1));
  if (withPassages) later.forEach((p, i) => (best[p.doc] = Math.max(best[p.doc]!, dot(q, laterVectors[i]!))));
  return best
    .map((cos, i) => ({ _id: ids[i]!, _score: (1 + cos) / 2 }))
    .sort((a, b) => b._score - a._score)
    .slice(0, FUSION_WINDOW);
}

const docOf = new Map(corpus.map((d) => [postServiceId(collection, d.id), d.id]));
const rows = { dense: VARIANTS.map((): number[] => []), hybrid: VARIANTS.map((): number[] => []) };
for (const [id, text] of await loadQueries(dir)) {
  const judgments = qrels.get(id);
  if (!judgments) continue;
  const request = parsePostSearchRequest({ post: { query: text.slice(0, 2000) }, limit: 10 });
  if (request.kind !== 'initial') throw new Error('an initial request');
  const lexical = await es.search({
    index,
    query: postSearchQuery({ ...request.search, query: request.search.query! }) as never,
    sort: [{ _score: { order: 'desc' } }, { id: 'asc' }],
    size: FUSION_WINDOW + 1,
    _source: false,
  });
  const lexicalHits = lexical.hits.hits.map((h) => ({
    _id: h._id!,
    _score: h._score ?? 0,
    matched_queries: h.matched_queries,
  }));
  const q = await embedder.embedQuery(text.slice(0, 2000));
  const fusion = hybridWindows({
    mode: 'hybrid',
    window: FUSION_WINDOW,
    similarityFloor: relevanceFloors(config).similarity,
    semanticReadable: analyzeQuery(text).semanticReadable,
  });
  const ndcg = (ranked: readonly string[]) =>
    ndcgAtK(rankScores(ranked.slice(0, 10).map((i) => docOf.get(i)!)), judgments, { k: 10, queryId: id });
  VARIANTS.forEach((variant, side) => {
    const semantic = semanticWindow(q, variant.heads, variant.passages);
    rows.dense[side]!.push(ndcg(semantic.map((h) => h._id)));
    rows.hybrid[side]!.push(ndcg(fusion.fuse(lexicalHits, semantic).map((f) => f.id)));
  });
}

const asMap = (xs: number[]) => new Map(xs.map((x, i) => [String(i), x]));
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
console.log(`| SciFact (${rows.dense[0]!.length} queries), exact cosine | dense (p) | hybrid (p) |`);
console.log('|---|---:|---:|');
const cell = (xs: number[][], i: number) =>
  `${mean(xs[i]!).toFixed(4)}${i === 0 ? '' : ` (${pairedRandomizationP(asMap(xs[0]!), asMap(xs[i]!)).toFixed(3)})`}`;
VARIANTS.forEach((v, i) => console.log(`| ${v.name} | ${cell(rows.dense, i)} | ${cell(rows.hybrid, i)} |`));
await embedder.close();
await es.close();
