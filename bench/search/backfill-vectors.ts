/**
 * Gives a large benchmark index post vectors fast enough for one session, for the hybrid LATENCY
 * benchmark only (quality is measured on SciFact through the real path, bench/relevance).
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench MODEL_DIR=../shared/models/all-MiniLM-L6-v2 \
 *     npx tsx bench/search/backfill-vectors.ts [pool-size]
 *
 * Embedding 1M seeded posts (~970 characters each) through the model takes hours on two cores,
 * so this rebuilds the posts index (the same `indices rebuild` copy) where the first `pool-size`
 * posts get their real vectors and every later post gets a real vector of another post's text
 * perturbed with Gaussian noise (cosine ≈ 0.98 to it), then renormalized: the index holds 1M
 * distinct vectors with the model's distribution, so HNSW does realistic work. Each record is
 * marked with the model and its own text hash, as the worker would.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/internal/config.ts';
import type { PostRecord } from '../../src/domain/records.ts';
import type { RebuildTransform } from '../../src/engine/index-admin.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import { embeddingTextHash, postEmbeddingText } from '../../src/text/embedding-text.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { cli } from '../lib/args.ts';

const { 'pool-size': POOL } = cli({ positionals: [{ name: 'pool-size', type: 'int', default: 3000, min: 1 }] });
const config = loadConfig({ SIGNING_SECRET: randomBytes(32).toString('hex'), ...process.env });
const service = openServiceProcess(config);
await service.connections.redisReady();
const { embedder } = service;
await embedder.ready();
if (embedder.modelId === null) throw new Error('set MODEL_DIR');

const pool: Float32Array[] = [];
let seen = 0;
let state = 12345;
function gaussian(): number {
  // Deterministic (seeded LCG + Box–Muller): the same run gives the same index.
  const u = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
  return Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}
function perturbed(base: Float32Array): Float32Array {
  const out = new Float32Array(base.length);
  let norm = 0;
  for (let i = 0; i < base.length; i++) {
    out[i] = base[i]! + 0.01 * gaussian();
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}

const started = Date.now();
const result = await service.engine.admin.rebuild('posts', {
  onProgress: (n) =>
    process.stderr.write(`\rcopied ${n} (${((Date.now() - started) / 1000).toFixed(0)} s, pool ${pool.length})`),
  // The posts index holds post records only.
  transform: (async (records: PostRecord[]) => {
    const texts = records.map(postEmbeddingText);
    const real = records.map((_, i) => seen + i < POOL && texts[i]!.length > 0);
    const embedded = await embedder.embedDocuments(texts.filter((_, i) => real[i]));
    let k = 0;
    const out = records.map((record, i) => {
      if (texts[i]!.length === 0) return record;
      let vector: Float32Array;
      if (real[i]) {
        vector = embedded[k++]!;
        pool.push(vector);
      } else {
        vector = perturbed(pool[(seen + i) % pool.length]!);
      }
      return {
        ...record,
        embedding: { model: embedder.modelId!, text_hash: embeddingTextHash(texts[i]!), vector: encodeVector(vector) },
      };
    });
    seen += records.length;
    return out;
  }) as RebuildTransform,
});
// The rebuild advanced the visibility epoch after its alias swap: search nodes drop snapshots of the old index.
process.stderr.write(
  `\nrebuilt posts: ${result.copied} documents in ${((Date.now() - started) / 1000).toFixed(0)} s → ${result.to}\n`,
);
await service.close();
