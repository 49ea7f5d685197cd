/**
 * What a post record's rewrite costs the engine at each size of a loaded index (bench/scaling.md,
 * "Where the posts' writes went"): the same posts, written again as they are, on the posts index of
 * each prefix, so the only difference between two rows is the index they land in (its size, its
 * segments, what the page cache holds of it).
 *
 *   npx tsx bench/steady-state/rewrite-cost.ts --prefixes scale100k,bench [--posts 10000] [--rounds 2]
 *
 * The sample: the first `--posts` post IDs of the first prefix in `id` order (random service IDs, so
 * a spread sample), which every larger prefix built from the same seed holds too. Each post is read
 * (its stored record), projected by the service's own `projectPost` and written again in bulks of
 * 500 with the index's own refresh interval (1 s), as a re-observation's write is; each bulk comes
 * after a realtime `mget` of its 500 IDs when `--mget` is on (the intake's read before a merge).
 * Per round: the engine process's CPU per write (less its CPU at rest), the shard's indexing time
 * per write, its refresh and merge times, the `get` time; then the merges are let settle. Raw engine
 * only (no service runs). Writes bench/results/rewrite-cost.json. A rewrite of identical documents
 * costs what a counter's does: the engine does not compare a document with the one it replaces.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import type { PostRecord } from '../../src/domain/records.ts';
import { projectPost, storedPostRecord } from '../../src/engine/elasticsearch/documents/projection.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { cli } from '../lib/args.ts';
import { round, writeResult } from '../lib/measure.ts';
import { engineCpuMs, idleCpuRate, indexWork } from '../lib/engine-cpu.ts';
import { mergesSettled } from '../lib/model-vectors.ts';

const args = cli({
  options: {
    prefixes: { type: 'string', default: 'scale100k,bench' },
    posts: { type: 'int', default: 10_000, min: 500 },
    rounds: { type: 'int', default: 2, min: 1 },
    mget: { type: 'boolean', default: true },
  },
});
const config = loadConfig({ SIGNING_SECRET: randomBytes(32).toString('hex'), ...process.env });
const es = new Client({ node: config.ELASTICSEARCH_URL[0]!, requestTimeout: 600_000 });
const say = (line: string) => process.stdout.write(`${line}\n`);
const BULK = 500;
const COUNTERS = ['index_ms', 'index_ops', 'refresh_ms', 'refreshes', 'merge_ms', 'get_ms', 'segments'] as const;
const counters = (index: string) => indexWork(es, index, COUNTERS);

/** The posts index (alias target) of a prefix. */
async function postsIndexOf(prefix: string): Promise<string> {
  const found = await es.cat.indices({ index: `${prefix}-posts-*`, format: 'json' });
  const names = found.map((i) => i.index!).filter((n) => /-posts-v\d+-\d+$/.test(n));
  if (names.length !== 1) throw new Error(`${prefix}: expected one posts index, found ${names.join(', ') || 'none'}`);
  return names[0]!;
}

/** The sample's IDs: the first `n` post IDs of `index` in `id` order. */
async function sampleIds(index: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  let after: estypes.SortResults | undefined;
  while (ids.length < n) {
    const page = await es.search({
      index,
      size: Math.min(5000, n - ids.length),
      _source: false,
      sort: [{ id: 'asc' }],
      track_total_hits: false,
      ...(after ? { search_after: after } : {}),
    });
    if (page.hits.hits.length === 0) break;
    ids.push(...page.hits.hits.map((h) => h._id!));
    after = page.hits.hits.at(-1)!.sort;
  }
  return ids;
}

/** One round: every sample post read (realtime, as the intake's merge does) and written again. */
async function rewrite(index: string, ids: string[]): Promise<number> {
  let written = 0;
  for (let i = 0; i < ids.length; i += BULK) {
    const slice = ids.slice(i, i + BULK);
    const got = await es.mget<{ record: PostRecord }>({ index, ids: slice, realtime: args.mget });
    const operations = got.docs.flatMap((d) => {
      if (!('found' in d) || !d.found || !d._source) return [];
      const record = d._source.record;
      return [{ index: { _index: index, _id: d._id } }, { ...projectPost(record), record: storedPostRecord(record) }];
    });
    const r = await es.bulk({ operations });
    if (r.errors) throw new Error(`bulk failed: ${JSON.stringify(r.items.find((x) => x.index?.error))}`);
    written += operations.length / 2;
  }
  return written;
}

const results: Array<Record<string, unknown>> = [];
const prefixes = args.prefixes.split(',');
const ids = await sampleIds(await postsIndexOf(prefixes[0]!), args.posts);
say(`${ids.length} posts from ${prefixes[0]}`);
for (const prefix of prefixes) {
  const index = await postsIndexOf(prefix);
  await mergesSettled(es, index);
  const idle = await idleCpuRate(es);
  for (let round_ = 1; round_ <= args.rounds; round_++) {
    const before = await counters(index);
    const cpu0 = await engineCpuMs(es);
    const t0 = performance.now();
    const written = await rewrite(index, ids);
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 2000)); // the last refresh
    const cpu = (await engineCpuMs(es)) - cpu0 - (idle * (performance.now() - t0)) / 1000;
    const after = await counters(index);
    const row = {
      prefix,
      round: round_,
      docs: (await es.count({ index })).count,
      segments_before: before.segments,
      written,
      seconds: round(seconds),
      engine_cpu_ms_per_write: round(cpu / written, 3),
      indexing_ms_per_write: round((after.index_ms - before.index_ms) / (after.index_ops - before.index_ops), 3),
      refreshes: after.refreshes - before.refreshes,
      refresh_ms: after.refresh_ms - before.refresh_ms,
      merge_ms_in_round: after.merge_ms - before.merge_ms,
      get_ms: after.get_ms - before.get_ms,
    };
    results.push(row);
    say(JSON.stringify(row));
    await mergesSettled(es, index);
  }
}
console.table(results);
writeResult('rewrite-cost.json', { measured: { date: new Date().toISOString() }, args, results });
