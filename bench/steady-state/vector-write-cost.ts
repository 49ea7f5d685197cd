/**
 * What a re-observation's vector costs the engine (bench/steady-state.md, "What a vector costs a
 * re-observation"): a re-observation that only moves a post's counters re-indexes the whole
 * document, its vector and its insertion into the HNSW graph included. This measures that part
 * alone, by index options, at several sizes.
 *
 *   npx tsx bench/steady-state/vector-write-cost.ts [--sizes 100000,300000]
 *       [--variants none,int8_hnsw,bbq_hnsw] [--updates 0.1] [--from relevance-social-5-1500-posts]
 *       [--rounds 1 --pause 0]
 *
 * For each size and variant, a throwaway index (one shard, refresh 1 s, the engine's merge policy)
 * gets `size` documents: a counter, a keyword and, unless the variant is `none`, a 384-dimension
 * vector with those options. The vectors are the model's: the stored vectors of `--from` (an index
 * the service loaded with embeddings), each copy moved by Gaussian noise (σ = 0.01 a dimension,
 * renormalized: cosine ≈ 0.98 to the original), as bench/search/backfill-vectors.ts does. Once its
 * merges have settled, a share (`--updates`) of the documents is written again, the vector
 * unchanged and the counter moved, in bulks of 500 with the refresh at 1 s, as the intake's
 * re-observations are; measured until the merges they caused have settled: the engine process's
 * CPU per updated document (less its CPU at rest over the same time), the index's own
 * indexing, refresh and merge times, and what a kNN search (the service's k and candidates) then
 * takes. `--settings` adds index settings (a merge policy) to compare. A variant's `:json` or
 * `:base64` suffix says how the vectors travel: a JSON array of numbers (the default) or base64 of
 * big-endian float32, as the service sends them (`src/engine/elasticsearch/vectors.ts`). Variant
 * `halfway[:share]` is the vector split issue 56 chose: posts without the vector, rewritten at every
 * update, and vector documents rewritten for `share` of them (see partsOf).
 *
 * Raw engine only (the service does not run); the difference between a variant and `none` is what
 * the vector costs a re-observation. Writes bench/results/vector-write-cost.json; deletes its
 * indices, on failure too.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/internal/config.ts';
import { engineVector } from '../../src/engine/elasticsearch/vectors.ts';
import { coarse } from '../../src/domain/volatile-facts.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { indexTimes as timesOf, mergesSettled, modelVectors, vectorOf } from '../lib/model-vectors.ts';
import { cli } from '../lib/args.ts';
import { engineCpuMs, idleCpuRate } from '../lib/engine-cpu.ts';
import { round, writeResult } from '../lib/measure.ts';

const args = cli({
  options: {
    sizes: { type: 'string', default: '100000,300000' },
    variants: { type: 'string', default: 'none,int8_hnsw,bbq_hnsw' },
    updates: { type: 'number', default: 0.1, min: 0.001 },
    // The updates in this many rounds, each spread over the index, `--pause` seconds apart (a day's
    // re-observations arrive spread out, not in one burst).
    rounds: { type: 'int', default: 1, min: 1 },
    pause: { type: 'number', default: 0, min: 0 },
    from: { type: 'string', default: 'relevance-social-5-1500-posts' },
    // Index settings beside the defaults, as JSON (e.g. a merge policy: '{"merge.policy.deletes_pct_allowed":40}').
    settings: { type: 'string', default: '{}' },
  },
});
const sizes = args.sizes.split(',').map(Number);
const extraSettings = JSON.parse(args.settings) as Record<string, unknown>;
const variants = args.variants.split(',');
const config = loadConfig({ SIGNING_SECRET: randomBytes(32).toString('hex'), ...process.env });
const es = new Client({ node: config.ELASTICSEARCH_URL[0]! });
const run = `bench-vector-cost-${randomBytes(3).toString('hex')}`;
const say = (line: string) => process.stdout.write(`${line}\n`);

/** One index of a variant: its mapping, its document, and which updated documents it writes again. */
interface Part {
  index: string;
  properties: Record<string, estypes.MappingProperty>;
  doc: (id: number, likes: number) => Record<string, unknown>;
  rewritten: (id: number) => boolean;
  withVector: boolean;
}

/**
 * A variant's indices. `none`, `int8_hnsw`, `hnsw`, `bbq_hnsw`, `bbq_disk` (`:json` or `:base64`):
 * one index, the vector beside the counter. `halfway[:share]`: the design issue 56 chose
 * ("The vector split: what a search pays"): a posts index without the vector, written again at every
 * update, and a vector index (int8, base64) with the counter coarse, written again only for the
 * `share` of updates that move a coarse fact (default 0.34, bench/steady-state/crossings.ts).
 */
function partsOf(variant: string, size: number, base: number[][]): Part[] {
  const [type, option] = variant.split(':') as [string, string?];
  const name = `${run}-${variant.replace(/[_:.]/g, '-')}-${size}`;
  const kind = (id: number) => (id % 7 === 0 ? 'reel' : 'image');
  const counters = { likes: { type: 'long' }, kind: { type: 'keyword' } } as const;
  const vectorField = (options: string) =>
    ({
      type: 'dense_vector',
      dims: 384,
      similarity: 'cosine',
      index_options: { type: options },
    }) as estypes.MappingProperty;
  const base64Vector = (id: number) => engineVector(encodeVector(vectorOf(base, id)));
  if (type === 'halfway') {
    const share = option === undefined ? 0.34 : Number(option);
    if (!(share >= 0 && share <= 1)) throw new Error(`${variant}: the share is a number in [0, 1]`);
    // Which updates move a coarse fact: drawn by hashing, so that none correlates with the vector.
    const moves = (id: number) => (Math.imul(id + 3, 2654435761) >>> 0) / 2 ** 32 < share;
    return [
      {
        index: `${name}-posts`,
        properties: counters,
        doc: (id, likes) => ({ likes, kind: kind(id) }),
        rewritten: () => true,
        withVector: false,
      },
      {
        index: `${name}-vectors`,
        properties: { kind: counters.kind, likes_coarse: counters.likes, v: vectorField('int8_hnsw') },
        doc: (id, likes) => ({ kind: kind(id), likes_coarse: coarse(likes), v: base64Vector(id) }),
        rewritten: moves,
        withVector: true,
      },
    ];
  }
  const format = option ?? 'json';
  if (format !== 'json' && format !== 'base64') throw new Error(`${variant}: the format is json or base64`);
  const withVector = type !== 'none';
  const vector = (id: number) => (format === 'base64' ? base64Vector(id) : vectorOf(base, id));
  return [
    {
      index: name,
      properties: { ...counters, ...(withVector ? { v: vectorField(type) } : {}) },
      doc: (id, likes) => ({ likes, kind: kind(id), ...(withVector ? { v: vector(id) } : {}) }),
      rewritten: () => true,
      withVector,
    },
  ];
}

/** Writes documents `ids` of every part (those it writes again, with `update`) in bulks of 500 IDs. */
async function write(parts: Part[], ids: number[], likes: (id: number) => number, update: boolean) {
  for (let i = 0; i < ids.length; i += 500) {
    const operations = ids
      .slice(i, i + 500)
      .flatMap((id) =>
        parts.flatMap((part) =>
          update && !part.rewritten(id)
            ? []
            : [{ index: { _index: part.index, _id: String(id) } }, part.doc(id, likes(id))],
        ),
      );
    const r = await es.bulk({ operations });
    if (r.errors) throw new Error(`bulk failed: ${JSON.stringify(r.items.find((x) => x.index?.error))}`);
  }
}

/** The parts' indexing, refresh and merge times together. */
async function timesOfAll(parts: Part[]) {
  const all = await Promise.all(parts.map((p) => timesOf(es, p.index)));
  return {
    indexing: all.reduce((s, t) => s + t.indexing, 0),
    refresh: all.reduce((s, t) => s + t.refresh, 0),
    merge: all.reduce((s, t) => s + t.merge, 0),
  };
}

const results: Array<Record<string, unknown>> = [];
try {
  const base = await modelVectors(es, args.from);
  const idle = await idleCpuRate(es);
  say(`the engine at rest: ${round(idle)} ms of CPU a second`);
  say(`${base.length} model vectors from ${args.from}`);
  for (const size of sizes) {
    for (const variant of variants) {
      const parts = partsOf(variant, size, base);
      for (const part of parts)
        await es.indices.create({
          index: part.index,
          settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '1s', ...extraSettings },
          mappings: { dynamic: 'strict', properties: part.properties },
        });
      const settledAll = async () => {
        for (const part of parts) await mergesSettled(es, part.index);
      };
      const loadStart = performance.now();
      const cpuLoad0 = await engineCpuMs(es);
      const all = Array.from({ length: size }, (_, id) => id);
      await write(parts, all, (id) => id % 1000, false);
      await settledAll();
      const loadSeconds = (performance.now() - loadStart) / 1000;
      const load = { seconds: loadSeconds, cpu_ms: (await engineCpuMs(es)) - cpuLoad0 - idle * loadSeconds };
      const before = await timesOfAll(parts);
      const cpu0 = await engineCpuMs(es);
      const started = performance.now();
      // Spread over the index, as a day's re-observations are.
      const count = Math.round(size * args.updates);
      const step = Math.floor(size / count);
      const updated = Array.from({ length: count }, (_, k) => k * step);
      for (let turn = 0; turn < args.rounds; turn++) {
        if (turn > 0) await new Promise((r) => setTimeout(r, args.pause * 1000));
        const slice = updated.filter((_, k) => k % args.rounds === turn);
        await write(parts, slice, (id) => (id % 1000) + 17, true);
      }
      const writeSeconds = (performance.now() - started) / 1000;
      await settledAll();
      const cpu = (await engineCpuMs(es)) - cpu0 - (idle * (performance.now() - started)) / 1000;
      const after = await timesOfAll(parts);
      let segments = 0;
      for (const part of parts) segments += (await es.cat.segments({ index: part.index, format: 'json' })).length;
      // What the segments the rewrites left cost a search: the service's kNN (k 50, 100 candidates).
      const took: number[] = [];
      const searched = parts.find((p) => p.withVector);
      if (searched)
        for (let q = 0; q < 200; q++) {
          const r = await es.search({
            index: searched.index,
            size: 50,
            _source: false,
            knn: { field: 'v', query_vector: vectorOf(base, size + q), k: 50, num_candidates: 100 },
          });
          if (q >= 20) took.push(r.took);
        }
      took.sort((a, b) => a - b);
      const row = {
        size,
        variant,
        load_seconds: round(load.seconds),
        load_cpu_ms_per_doc: round(load.cpu_ms / size, 3),
        updates: count,
        update_write_seconds: round(writeSeconds),
        update_cpu_ms_per_doc: round(cpu / count, 3),
        indexing_ms_per_doc: round((after.indexing - before.indexing) / count, 3),
        refresh_ms: after.refresh - before.refresh,
        merge_ms: after.merge - before.merge,
        segments,
        knn_took_p50_ms: took.length > 0 ? took[Math.floor(took.length / 2)]! : null,
      };
      results.push(row);
      say(JSON.stringify(row));
      for (const part of parts) await es.indices.delete({ index: part.index });
    }
  }
  console.table(results);
  writeResult('vector-write-cost.json', {
    measured: { date: new Date().toISOString() },
    from: args.from,
    settings: extraSettings,
    results,
  });
} finally {
  const left = await es.cat.indices({ index: `${run}-*`, format: 'json' }).catch(() => []);
  for (const i of left) if (i.index) await es.indices.delete({ index: i.index }).catch(() => undefined);
}
