/**
 * What keeping the vectors apart would cost a search (bench/steady-state.md, "The vector split:
 * what a search pays"). Issue 56's design question: a re-observation that only moves counters
 * re-indexes the post's vector (95–98 % of a counter-only rewrite's engine CPU, "What a vector
 * costs a re-observation"). With the vectors in documents of their own, written only when the
 * embedded text changes, the posts' rewrites cost what a post without a vector costs; the kNN side
 * then filters on the stable facts copied to the vector documents, and a filter on a counter
 * (which only the posts hold exactly) has to be resolved on the posts' side. This measures, on the
 * raw engine, what each way of doing that costs a kNN search and how exact its window stays.
 *
 *   npx tsx bench/steady-state/vector-split-search.ts [--size 100000] [--queries 100]
 *       [--from relevance-social-5-1500-posts]
 *
 * Three throwaway indices of `size` documents (one shard, the engine's merge policy, merges
 * settled): `together` (a counter `likes`, log-uniform over 1–100,000; a stable keyword `kind`, a
 * seventh `reel`; the vector, `int8_hnsw`), and the split: `posts` (the counter and the keyword)
 * and `vectors` (the keyword, the counter coarse as posts keep their authors' counters,
 * src/domain/volatile-facts.ts, and the vector). Each filter is asked `queries` times (after 20
 * warm-up queries) with the service's kNN (k 50, 100 candidates), the query vectors being more
 * noisy copies of the model's; per arm the p50 and p90 of the client's wall time for all its
 * requests, and the recall@50 against the exact filtered top 50 (brute force over the same floats
 * in this process):
 *
 * - `together`: one kNN with the filter inside the graph search (the service now);
 * - `apart`: no counter in the filter, one kNN on `vectors`;
 * - `apart, ids`: the counter filter's matching IDs read from `posts` (at most 10,000, the
 *   engine's result window), then one kNN on `vectors` filtered to them;
 * - `apart, checked ×4`: one kNN on `vectors` for 4 × 50 neighbours, then those among them that
 *   pass the counter filter on `posts` (one `ids` request), the first 50 kept;
 * - `halfway (coarse counter), ×o off the edges`: the counter's coarse copy filters inside the
 *   graph search, exact for a bound that is a bucket edge; any other bound asks o × 50 neighbours
 *   at or above its bucket and checks them on `posts`.
 *
 * Raw engine only; writes bench/results/vector-split-search.json; deletes its indices, on failure too.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/internal/config.ts';
import { engineVector, queryVector } from '../../src/engine/elasticsearch/vectors.ts';
import { coarse, isEdge } from '../../src/domain/volatile-facts.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { cli } from '../lib/args.ts';
import { quantile, round, writeResult } from '../lib/measure.ts';
import { mergesSettled, modelVectors, vectorOf } from '../lib/model-vectors.ts';

const args = cli({
  options: {
    size: { type: 'int', default: 100_000, min: 1000 },
    queries: { type: 'int', default: 100, min: 1 },
    from: { type: 'string', default: 'relevance-social-5-1500-posts' },
  },
});
const config = loadConfig({ SIGNING_SECRET: randomBytes(32).toString('hex'), ...process.env });
const es = new Client({ node: config.ELASTICSEARCH_URL[0]! });
const run = `bench-vector-split-${randomBytes(3).toString('hex')}`;
const say = (line: string) => process.stdout.write(`${line}\n`);
const K = 50;
const CANDIDATES = 100;
const WARM_UP = 20;
const MAX_IDS = 10_000;

/** Facts of document `id`, drawn by hashing so that none correlates with its vector (base[id % n]). */
const likesOf = (id: number) => Math.floor(10 ** ((5 * (Math.imul(id + 1, 2654435761) >>> 0)) / 2 ** 32));
const kindOf = (id: number) => ((Math.imul(id + 7, 40503) >>> 0) % 7 === 0 ? 'reel' : 'image');

type Filter = { kind?: 'reel'; minLikes?: number };

const VECTOR = { type: 'dense_vector', dims: 384, similarity: 'cosine', index_options: { type: 'int8_hnsw' } } as const;

async function create(index: string, properties: Record<string, estypes.MappingProperty>) {
  await es.indices.create({
    index,
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '1s' },
    mappings: { dynamic: 'strict', properties },
  });
}

async function load(base: number[][], names: { together: string; posts: string; vectors: string }) {
  for (let i = 0; i < args.size; i += 500) {
    const operations: object[] = [];
    for (let id = i; id < Math.min(i + 500, args.size); id++) {
      const v = engineVector(encodeVector(vectorOf(base, id)));
      const facts = { likes: likesOf(id), kind: kindOf(id) };
      operations.push({ index: { _index: names.together, _id: String(id) } }, { ...facts, v });
      operations.push({ index: { _index: names.posts, _id: String(id) } }, facts);
      const halfway = { kind: facts.kind, likes_coarse: coarse(facts.likes), v };
      operations.push({ index: { _index: names.vectors, _id: String(id) } }, halfway);
    }
    const r = await es.bulk({ operations });
    if (r.errors) throw new Error(`bulk failed: ${JSON.stringify(r.items.find((x) => x.index?.error))}`);
  }
  for (const index of Object.values(names)) {
    await es.indices.refresh({ index });
    await mergesSettled(es, index);
  }
}

function clauses(filter: Filter, withCounter: boolean): estypes.QueryDslQueryContainer[] {
  return [
    ...(filter.kind ? [{ term: { kind: filter.kind } }] : []),
    ...(withCounter && filter.minLikes !== undefined ? [{ range: { likes: { gte: filter.minLikes } } }] : []),
  ];
}

async function knn(index: string, vector: number[], k: number, filter: estypes.QueryDslQueryContainer[]) {
  // queryVector: base64 of big-endian float32, as the service sends it.
  const r = await es.search({
    index,
    size: k,
    _source: false,
    query: {
      knn: {
        field: 'v',
        query_vector: queryVector(vector),
        k,
        num_candidates: Math.max(CANDIDATES, k),
        ...(filter.length > 0 ? { filter } : {}),
      },
    },
  });
  return r.hits.hits.map((h) => h._id!);
}

/** The first K of `window` that pass the counter filter on the posts (one `ids` request). */
async function checked(names: { posts: string }, filter: Filter, window: string[]): Promise<string[]> {
  const r = await es.search({
    index: names.posts,
    size: window.length,
    _source: false,
    query: { bool: { filter: [{ ids: { values: window } }, ...clauses(filter, true)] } },
  });
  const passed = new Set(r.hits.hits.map((h) => h._id!));
  return window.filter((id) => passed.has(id)).slice(0, K);
}

/** The arms of one filter: each answers a query vector with its window of IDs (null: not applicable). */
function arms(names: { together: string; posts: string; vectors: string }, filter: Filter) {
  const counter = filter.minLikes !== undefined;
  const out: Record<string, (v: number[]) => Promise<string[] | null>> = {
    together: (v) => knn(names.together, v, K, clauses(filter, true)),
  };
  if (!counter) {
    out['apart'] = (v) => knn(names.vectors, v, K, clauses(filter, false));
    return out;
  }
  out['apart, ids'] = async (v) => {
    const r = await es.search({
      index: names.posts,
      size: MAX_IDS,
      _source: false,
      track_total_hits: MAX_IDS + 1,
      query: { bool: { filter: clauses(filter, true) } },
    });
    const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0);
    if (total > MAX_IDS) return null;
    const ids = r.hits.hits.map((h) => h._id!);
    return knn(names.vectors, v, K, [...clauses(filter, false), { ids: { values: ids } }]);
  };
  out['apart, checked ×4'] = async (v) =>
    checked(names, filter, await knn(names.vectors, v, K * 4, clauses(filter, false)));
  // The halfway design: the counter coarse on the vector documents filters inside the graph search;
  // a bound that is a bucket edge is exact there, any other one asks o × 50 and checks them on the posts.
  for (const over of [2, 4]) {
    out[`halfway (coarse counter), ×${over} off the edges`] = async (v) => {
      const bound = filter.minLikes!;
      const inGraph = [...clauses(filter, false), { range: { likes_coarse: { gte: coarse(bound) } } }];
      if (isEdge(bound)) return knn(names.vectors, v, K, inGraph);
      return checked(names, filter, await knn(names.vectors, v, K * over, inGraph));
    };
  }
  return out;
}

/** The exact filtered top K by cosine (unit vectors: the dot product) over every document. */
function exactTop(vectors: Float32Array, query: number[], filter: Filter): Set<string> {
  const dims = query.length;
  const top: Array<{ id: number; score: number }> = [];
  for (let id = 0; id < args.size; id++) {
    if (filter.kind && kindOf(id) !== filter.kind) continue;
    if (filter.minLikes !== undefined && likesOf(id) < filter.minLikes) continue;
    let score = 0;
    for (let d = 0; d < dims; d++) score += vectors[id * dims + d]! * query[d]!;
    if (top.length < K || score > top[top.length - 1]!.score) {
      top.push({ id, score });
      top.sort((a, b) => b.score - a.score);
      if (top.length > K) top.pop();
    }
  }
  return new Set(top.map((t) => String(t.id)));
}

/** Likes are log-uniform over 1–100,000: a share above a bound b is 1 − log10(b) / 5. */
const above = (b: number) => 1 - Math.log10(b) / 5;
const FILTERS: Array<{ name: string; filter: Filter; share: number }> = [
  { name: 'none', filter: {}, share: 1 },
  { name: 'kind = reel (stable)', filter: { kind: 'reel' }, share: 1 / 7 },
  { name: 'likes ≥ 90,000 (not an edge)', filter: { minLikes: 90_000 }, share: above(90_000) },
  { name: 'likes ≥ 50,000', filter: { minLikes: 50_000 }, share: above(50_000) },
  { name: 'likes ≥ 1,000', filter: { minLikes: 1000 }, share: above(1000) },
  { name: 'reel, likes ≥ 50,000', filter: { kind: 'reel', minLikes: 50_000 }, share: above(50_000) / 7 },
];

const names = { together: `${run}-together`, posts: `${run}-posts`, vectors: `${run}-vectors` };
const rows: Array<Record<string, unknown>> = [];
try {
  const base = await modelVectors(es, args.from);
  say(`${base.length} model vectors from ${args.from}; ${args.size} documents`);
  await create(names.together, { likes: { type: 'long' }, kind: { type: 'keyword' }, v: VECTOR });
  await create(names.posts, { likes: { type: 'long' }, kind: { type: 'keyword' } });
  await create(names.vectors, { kind: { type: 'keyword' }, likes_coarse: { type: 'long' }, v: VECTOR });
  const t0 = performance.now();
  await load(base, names);
  say(`loaded and settled in ${round((performance.now() - t0) / 1000, 1)} s`);
  const vectors = new Float32Array(args.size * 384);
  for (let id = 0; id < args.size; id++) vectors.set(vectorOf(base, id), id * 384);
  const queries = Array.from({ length: WARM_UP + args.queries }, (_, q) => vectorOf(base, args.size + 7919 * q));
  for (const { name, filter, share } of FILTERS) {
    const truths = queries.slice(WARM_UP).map((q) => exactTop(vectors, q, filter));
    for (const [arm, ask] of Object.entries(arms(names, filter))) {
      const ms: number[] = [];
      let recall = 0;
      let answered = 0;
      for (let q = 0; q < queries.length; q++) {
        const started = performance.now();
        const window = await ask(queries[q]!);
        const took = performance.now() - started;
        if (q < WARM_UP || window === null) continue;
        ms.push(took);
        const truth = truths[q - WARM_UP]!;
        recall += window.filter((id) => truth.has(id)).length / Math.min(K, truth.size);
        answered++;
      }
      const row = {
        filter: name,
        share: round(share, 4),
        arm,
        p50_ms: answered > 0 ? round(quantile(ms, 0.5, 0)) : null,
        p90_ms: answered > 0 ? round(quantile(ms, 0.9, 0)) : null,
        recall_at_50: answered > 0 ? round(recall / answered, 3) : null,
        answered,
      };
      rows.push(row);
      say(JSON.stringify(row));
    }
  }
  console.table(rows);
  const sizes = await es.cat.indices({ index: `${run}-*`, format: 'json', bytes: 'mb' });
  writeResult('vector-split-search.json', {
    measured: { date: new Date().toISOString() },
    size: args.size,
    from: args.from,
    indices: sizes.map((i) => ({ index: i.index, mb: i['store.size'] })),
    rows,
  });
} finally {
  for (const index of Object.values(names)) await es.indices.delete({ index }).catch(() => undefined);
}
