/**
 * What the vectors a post's record carries cost the engine (bench/steady-state.md, "The vectors in
 * the record"). Since the vector split the engine indexes a post's vectors in its vector document
 * only, but the post's record (its `_source`, the source of truth) still holds them as base64:
 * every write of the post sends, parses, stores and merges them again. This measures what that
 * costs against the same posts with the record's embedding reduced to its model and text hash.
 *
 *   npx tsx bench/steady-state/record-vector-bytes.ts [--size 50000] [--updates 0.3]
 *       [--from relevance-harness-scifact-posts] [--repeats 2]
 *
 * Per variant and repeat, a throwaway stack of indices from the service's own templates (`indices
 * apply` under a fresh prefix) gets `size` posts: the records of `--from` (an index the service
 * loaded with embeddings) copied under new IDs, projected by the service's `projectPost`. Variant
 * `record`: as the service wrote them before 2026-11-30 (the record holding its vectors; now only
 * a post's first write after its embedding); `hash-only`: the record's `embedding` without `vector`
 * and `passages`, as the service stores a post once its vector document holds them. Once the load's merges have settled, a share (`--updates`) of the posts is written
 * again with a counter moved, in bulks of 500 at the template's refresh (1 s), as a day's
 * re-observations are, and measured until the merges they caused have settled: the engine's CPU
 * per rewritten post (less its CPU at rest over the same time), the posts index's indexing and
 * merge times, and its store on disk after the load and after the rewrites. The variants
 * alternate, so drift on a noisy machine falls on both.
 *
 * Raw engine only (no service process runs). Writes bench/results/record-vector-bytes.json;
 * deletes its indices, on failure too.
 */
import { withStoredVectors } from '../../src/engine/elasticsearch/queries/post-vectors.ts';
import { Client } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import type { PostRecord } from '../../src/domain/records.ts';
import { projectPost } from '../../src/engine/elasticsearch/documents/projection.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import { cli } from '../lib/args.ts';
import { engineCpuMs, idleCpuRate, indexWork, mergesSettled } from '../lib/engine-cpu.ts';
import { round, writeResult } from '../lib/measure.ts';

const args = cli({
  options: {
    size: { type: 'int', default: 50_000, min: 100 },
    updates: { type: 'number', default: 0.3, min: 0.01 },
    from: { type: 'string', default: 'relevance-harness-scifact-posts' },
    repeats: { type: 'int', default: 2, min: 1 },
  },
});
const VARIANTS = ['record', 'hash-only'] as const;
type Variant = (typeof VARIANTS)[number];
const BULK = 500;
const run = `bench-rvb-${randomBytes(3).toString('hex')}`;
const env = { SIGNING_SECRET: randomBytes(32).toString('hex'), ...process.env };
const es = new Client({ node: loadConfig(env).ELASTICSEARCH_URL[0]! });
const say = (line: string) => process.stdout.write(`${line}\n`);

/** The source records, each with its vectors (a post the service embedded). */
async function sourceRecords(): Promise<PostRecord[]> {
  const out: PostRecord[] = [];
  let page = await es.search<{ record: PostRecord }>({
    index: args.from,
    size: 1000,
    scroll: '1m',
    query: { match_all: {} },
  });
  while (page.hits.hits.length > 0) {
    // A post's record keeps no vectors since 2026-11-30: they come from its vector document.
    const records = page.hits.hits.flatMap((hit) => (hit._source?.record ? [hit._source.record] : []));
    for (const record of await withStoredVectors(es, args.from.replace(/-posts$/, '-post-vectors'), records))
      if (record.embedding?.vector) out.push(record);
    page = await es.scroll<{ record: PostRecord }>({ scroll_id: page._scroll_id!, scroll: '1m' });
  }
  await es.clearScroll({ scroll_id: page._scroll_id! }).catch(() => undefined);
  if (out.length === 0) throw new Error(`${args.from} holds no post with vectors`);
  return out;
}

/** Post `i` of a variant, its counter moved by `bump`: the JSON line a bulk sends. */
function documentOf(records: readonly PostRecord[], i: number, variant: Variant, bump: number): string {
  const source = records[i % records.length]!;
  const record = { ...source, id: `${source.id}-${i}` } as PostRecord & Record<string, unknown>;
  const doc = projectPost(record) as Record<string, unknown>;
  if (typeof doc.likes === 'number') doc.likes += bump;
  else doc.likes = bump;
  if (variant === 'hash-only' && record.embedding) {
    doc.record = { ...record, embedding: { model: record.embedding.model, text_hash: record.embedding.text_hash } };
  }
  return JSON.stringify(doc);
}

async function bulk(index: string, lines: Array<{ id: string; doc: string }>): Promise<void> {
  const body = lines
    .map(({ id, doc }) => `${JSON.stringify({ index: { _index: index, _id: id } })}\n${doc}\n`)
    .join('');
  const response = await es.bulk({ operations: body as never, filter_path: ['errors', 'items.*.error'] });
  if (response.errors) throw new Error(`bulk refused: ${JSON.stringify(response.items?.[0])}`);
}

async function storeBytes(index: string): Promise<number> {
  const stats = await es.indices.stats({ index, metric: ['store'] });
  return stats._all.primaries?.store?.size_in_bytes ?? 0;
}

async function measure(records: readonly PostRecord[], variant: Variant, repeat: number) {
  const prefix = `${run}-${variant}-${repeat}`;
  const service = openServiceProcess(loadConfig({ ...env, INDEX_PREFIX: prefix, REDIS_PREFIX: prefix }));
  const posts = `${prefix}-posts`;
  try {
    await service.engine.admin.apply();
    const idOf = (i: number) => `p${i}`;
    for (let i = 0; i < args.size; i += BULK) {
      const n = Math.min(BULK, args.size - i);
      await bulk(
        posts,
        Array.from({ length: n }, (_, k) => ({ id: idOf(i + k), doc: documentOf(records, i + k, variant, 0) })),
      );
    }
    await es.indices.refresh({ index: posts });
    await mergesSettled(es, 600_000);
    const loaded = await storeBytes(posts);
    const rest = await idleCpuRate(es);

    // Every k-th post, so the rewrites spread over the index as a day's do.
    const step = Math.max(1, Math.round(1 / args.updates));
    const ids = Array.from({ length: Math.floor(args.size / step) }, (_, k) => k * step);
    const before = await indexWork(es, posts, ['index_ms', 'merge_ms', 'refresh_ms']);
    const cpu0 = await engineCpuMs(es);
    const t0 = performance.now();
    for (let i = 0; i < ids.length; i += BULK) {
      const slice = ids.slice(i, i + BULK);
      await bulk(
        posts,
        slice.map((k) => ({ id: idOf(k), doc: documentOf(records, k, variant, 1) })),
      );
    }
    await new Promise((r) => setTimeout(r, 1500)); // the last scheduled refresh
    await mergesSettled(es, 600_000);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = (await engineCpuMs(es)) - cpu0 - rest * seconds;
    const after = await indexWork(es, posts, ['index_ms', 'merge_ms', 'refresh_ms']);
    const rewritten = await storeBytes(posts);
    const perDoc = (ms: number) => round(ms / ids.length, 3);
    const result = {
      variant,
      repeat,
      posts: args.size,
      rewritten: ids.length,
      cpu_ms_per_rewrite: perDoc(cpu),
      index_ms_per_rewrite: perDoc(after.index_ms - before.index_ms),
      merge_ms_per_rewrite: perDoc(after.merge_ms - before.merge_ms),
      refresh_ms_per_rewrite: perDoc(after.refresh_ms - before.refresh_ms),
      store_kb_per_post_loaded: round(loaded / args.size / 1024, 2),
      store_kb_per_post_after: round(rewritten / args.size / 1024, 2),
      seconds: round(seconds, 1),
    };
    say(JSON.stringify(result));
    return result;
  } finally {
    await service.engine.admin.destroy().catch(() => undefined);
    await service.close();
  }
}

const records = await sourceRecords();
const sample = records.slice(0, 200);
const bytes = (variant: Variant) =>
  sample.reduce((sum, _r, i) => sum + documentOf(sample, i, variant, 0).length, 0) / sample.length;
say(
  `${records.length} source records from ${args.from}; a post's bulk line: record ${round(bytes('record') / 1024, 2)} KB, hash-only ${round(bytes('hash-only') / 1024, 2)} KB`,
);
const results = [];
for (let repeat = 0; repeat < args.repeats; repeat++)
  for (const variant of repeat % 2 === 0 ? VARIANTS : [...VARIANTS].reverse())
    results.push(await measure(records, variant, repeat));
writeResult('record-vector-bytes', { options: args, results });
await es.close();
