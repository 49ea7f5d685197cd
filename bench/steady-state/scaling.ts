/**
 * How cost grows with the index (issue "Steady state at scale", part 4; bench/scaling.md): for
 * each loaded prefix (built by scale-build.ts), the engine's memory and disk, search latency
 * against the raw engine (bench/search/latency.ts), hybrid against BM25-only through the API
 * (bench/search/hybrid-latency.ts), and a sampled steady-state day through the intake
 * (bench/steady-state/day.ts --on). One prefix at a time, each measure a child process, so one
 * measure's process never shares an event loop with another's.
 *
 *   npx tsx bench/steady-state/scaling.ts --prefixes scale100k,scale1m,scale3m [--requests 300]
 *       [--hybrid-requests 150] [--sample-every 40] [--sample-offset 20] [--search-rate 10] [--skip-intake] [--skip-search] [--hot-threads]
 *
 * The day is the seed dataset's (1M posts / 100k accounts, the copies' source): its accounts
 * with a platform ID ≡ 20 mod 40 and their posts (2.5 % of the day), which every prefix holds
 * (copy 0, and scale100k keeps the accounts ≡ 0 mod 10); a day already sent to a prefix is
 * unchanged the second time, so a repeat takes another residue. Before the search benches, the
 * prefix's followers mirror is filled with every account, as a steady state holds it. It runs last on each prefix, as it changes the
 * index. Writes bench/results/scaling.json and prints the table.
 */
import { Client } from '@elastic/elasticsearch';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { elasticsearchUrls, log, REPO_ROOT } from '../lib/service-stack.ts';
import { cli } from '../lib/args.ts';
import { writeResult } from '../lib/measure.ts';
import { MODEL_DIR } from '../lib/model.ts';
import { scanPages } from '../lib/scan.ts';

const args = cli({
  options: {
    prefixes: { type: 'string', default: 'scale100k,scale1m,scale3m' },
    requests: { type: 'string', default: '300' },
    'hybrid-requests': { type: 'string', default: '150' },
    'sample-every': { type: 'string', default: '40' },
    'sample-offset': { type: 'string', default: '20' },
    // The day's search load beside the intake, a second (0: the intake alone).
    'search-rate': { type: 'string', default: '10' },
    'skip-intake': { type: 'boolean' },
    'skip-search': { type: 'boolean' },
    // The day samples the engine's hot threads (day.ts --hot-threads).
    'hot-threads': { type: 'boolean' },
  },
});
const es = new Client({ node: elasticsearchUrls()[0]! });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

/** Runs a bench script on `prefix`; the model only where asked (without it, post queries rank by BM25 alone). */
function run(script: string, argv: string[], prefix: string, withModel = false): void {
  const { MODEL_DIR: _unset, ...env } = process.env;
  execFileSync('npx', ['tsx', script, ...argv], {
    cwd: REPO_ROOT,
    env: { ...env, INDEX_PREFIX: prefix, REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', ...(withModel ? { MODEL_DIR } : {}) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
const readJson = (file: string) => JSON.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8')) as Record<string, any>;

/**
 * Disk, vectors and heap of one prefix's indices: primaries, and every copy (replicas included,
 * for a cluster); heap per node (the fullest node's).
 */
async function memory(prefix: string): Promise<Record<string, number | Record<string, number>>> {
  const stats = await es.indices.stats({
    index: `${prefix}-posts,${prefix}-post-vectors*,${prefix}-accounts`,
    metric: ['docs', 'store', 'segments', 'dense_vector'],
  });
  const byIndex = Object.entries(stats.indices!);
  const stat = (name: string) => byIndex.find(([index]) => index.startsWith(`${prefix}-${name}-`))?.[1];
  const family = (name: string) => stat(name)?.primaries;
  const p = family('posts') as any;
  const a = family('accounts') as any;
  const all = stat('posts')!.total as any;
  // The posts' vector documents (since 2026-11-30; absent from an index built before the split,
  // whose posts hold their vectors). An empty stand-in keeps both layouts' sums right.
  const none = { docs: { count: 0 }, store: { size_in_bytes: 0 }, segments: { count: 0 } };
  const v = (family('post-vectors') ?? none) as any;
  const vAll = (stat('post-vectors')?.total ?? none) as any;
  // Heap used right after a young collection varies by the load; the least of a few samples a
  // second apart, idle, approximates what a node holds (of several nodes, the fullest).
  const heapByNode = new Map<string, number>();
  for (let i = 0; i < 8; i++) {
    const nodes = await es.nodes.stats({ metric: 'jvm' });
    for (const [id, n] of Object.entries(nodes.nodes))
      heapByNode.set(id, Math.min(heapByNode.get(id) ?? Infinity, n.jvm?.mem?.heap_used_in_bytes ?? Infinity));
    await sleep(1000);
  }
  const heap = Math.max(...heapByNode.values());
  const offHeap = (x: any) => x.dense_vector?.off_heap ?? {};
  const vectorBytes = (key: string, ...xs: any[]) => xs.reduce((sum, x) => sum + (offHeap(x)[key] ?? 0), 0);
  // A fresh bulk load keeps each document's full source a second time (`_recovery_source`, as the
  // posts template filters `_source`) until merges after the retention lease drop it (~12 h):
  // the store without it is what a settled index holds (at 100k: 1.0 of 1.7 GB).
  const usage = await es.transport.request<Record<string, any>>({
    method: 'POST',
    path: `/${prefix}-posts/_disk_usage`,
    querystring: { run_expensive_tasks: true, flush: true },
  });
  const indexUsage: Record<string, any> = Object.entries(usage).find(([k]) => k !== '_shards')![1];
  const fields: Record<string, any> = indexUsage.fields;
  const recovery = fields['_recovery_source']?.total_in_bytes ?? 0;
  // Where a settled post's bytes are: each of the index's structures, per post.
  const allFields: Record<string, any> = indexUsage.all_fields ?? {};
  const perPost = (bytes: number) => Math.round(bytes / p.docs.count);
  const breakdown = {
    stored_fields: perPost(
      (allFields.stored_fields_in_bytes ?? 0) - (fields['_recovery_source']?.stored_fields_in_bytes ?? 0),
    ),
    inverted_index: perPost(allFields.inverted_index?.total_in_bytes ?? 0),
    doc_values: perPost(allFields.doc_values_in_bytes ?? 0),
    points: perPost(allFields.points_in_bytes ?? 0),
    norms: perPost(allFields.norms_in_bytes ?? 0),
    knn_vectors: perPost(allFields.knn_vectors_in_bytes ?? 0),
    deleted_docs: p.docs.deleted,
  };
  return {
    posts: p.docs.count,
    accounts: a.docs.count,
    posts_store_mib: mib(p.store.size_in_bytes),
    accounts_store_mib: mib(a.store.size_in_bytes),
    bytes_per_post: Math.round(p.store.size_in_bytes / p.docs.count),
    bytes_per_post_settled: Math.round((p.store.size_in_bytes - recovery) / p.docs.count),
    settled_bytes_per_post_by_structure: breakdown,
    posts_segments: p.segments.count,
    vector_documents: v.docs.count,
    vectors_store_mib: mib(v.store.size_in_bytes),
    vectors_segments: v.segments.count,
    // A post's disk with its vector document's share (the posts index alone above).
    bytes_per_post_with_vectors: Math.round((p.store.size_in_bytes + v.store.size_in_bytes) / p.docs.count),
    // What kNN reads per query: the int8 vectors and the HNSW graph (page cache, off heap).
    vectors_hot_mib: mib(vectorBytes('total_veq_size_bytes', p, v) + vectorBytes('total_vex_size_bytes', p, v)),
    // The raw float vectors: on disk, read by merges and rescoring only.
    vectors_raw_mib: mib(vectorBytes('total_vec_size_bytes', p, v)),
    node_heap_used_mib: mib(heap),
    nodes: heapByNode.size,
    // Every copy, replicas included (equal to the primaries' on one node).
    posts_store_all_copies_mib: mib(all.store.size_in_bytes),
    vectors_store_all_copies_mib: mib(vAll.store.size_in_bytes),
    vectors_hot_all_copies_mib: mib(
      vectorBytes('total_veq_size_bytes', all, vAll) + vectorBytes('total_vex_size_bytes', all, vAll),
    ),
  };
}

/**
 * Fills the prefix's followers mirror with every account, as in a steady state (each active
 * account is observed daily, and each observation writes its entry), in the mirror's entry format;
 * returns its Redis bytes per account. A bench built by copying has no mirror: without this, post
 * pages would read most authors from the accounts index and measure a cold start instead.
 */
async function fillFollowersMirror(prefix: string): Promise<number> {
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
  const key = `${prefix}:followers`;
  let n = 0;
  try {
    const pages = scanPages(
      es,
      `${prefix}-accounts`,
      {
        _source: false,
        docvalue_fields: ['id', 'followers_count', { field: 'observed_at', format: 'strict_date_time' }],
      },
      { keepAlive: '2m' },
    );
    for await (const hits of pages) {
      const pipe = redis.pipeline();
      for (const hit of hits) {
        const f = hit.fields as Record<string, unknown[]> | undefined;
        if (!f?.['followers_count']) continue;
        pipe.hset(key, String(f['id']![0]), `${String(f['observed_at']![0])}|${String(f['followers_count'][0])}`);
        n++;
      }
      await pipe.exec();
    }
    const bytes = (await redis.memory('USAGE', key, 'SAMPLES', 0)) ?? 0;
    return Math.round(bytes / Math.max(1, n));
  } finally {
    redis.disconnect();
  }
}

const prefixes = args.prefixes.split(',');
const rows: Record<string, any>[] = [];
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
for (const prefix of prefixes) {
  log(`${prefix}: memory`);
  const row: Record<string, any> = {
    prefix,
    memory: { ...(await memory(prefix)), followers_mirror_bytes_per_account: await fillFollowersMirror(prefix) },
  };
  if (!args['skip-search']) {
    log(`${prefix}: search latency`);
    run('bench/search/latency.ts', [args.requests], prefix);
    row['search'] = readJson('bench/results/search-latency.json')['results'];
    log(`${prefix}: hybrid latency`);
    run('bench/search/hybrid-latency.ts', [args['hybrid-requests']], prefix, true);
    row['hybrid'] = readJson('bench/results/hybrid-latency.json')['rows'];
  }
  if (!args['skip-intake']) {
    log(`${prefix}: a sampled day through the intake`);
    run(
      'bench/steady-state/day.ts',
      [
        '--on',
        prefix,
        '--posts',
        '1000000',
        '--accounts',
        '100000',
        '--sample-every',
        args['sample-every'],
        '--sample-offset',
        args['sample-offset'],
        '--idle-seconds',
        '30',
        '--search-rate',
        args['search-rate'],
        ...(args['hot-threads'] ? ['--hot-threads'] : []),
      ],
      prefix,
    );
    const day = readJson(`bench/results/steady-state-day-on-${prefix}-${commit}.json`);
    const obs = day['day'].observations as number;
    row['intake'] = {
      observations: obs,
      obs_per_s: day['day'].obs_per_s,
      writes_per_observation: day['writes'].per_observation.total,
      cpu_ms_per_observation: Object.fromEntries(
        Object.entries(day['cpu_s'].day_less_idle_search as Record<string, number>).map(([k, v]) => [
          k,
          Math.round((v * 1000 * 100) / obs) / 100,
        ]),
      ),
      // The engine's with the merges the day left behind (day.ts, since 2026-12-01).
      es_with_merge_tail_ms_per_observation:
        day['cpu_s'].engine_with_merge_tail === undefined
          ? null
          : Math.round((day['cpu_s'].engine_with_merge_tail * 1000 * 100) / obs) / 100,
      search_day_over_idle: day['search'].day_over_idle,
    };
  }
  rows.push(row);
  writeResult('scaling.json', { date: new Date().toISOString(), commit, rows });
}
console.log(JSON.stringify(rows, null, 2));
await es.close();
