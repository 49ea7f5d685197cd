/**
 * What the metric history costs the intake (bench/intake.md, "Metric history: cost and disk per
 * point"): the same dataset (the seed with re-observations: accounts every three days, recent posts
 * several times) through a fresh service with METRIC_HISTORY=on and =off, alternating, in one run:
 * obs/s, Elasticsearch, worker and API CPU-s, and for `on` the points written and their disk.
 *
 *   npx tsx bench/intake/history-cost.ts [--posts 20000] [--accounts N] [--rounds 2] [--in-flight 3]
 *       [--profile reobserved|first-load] [--service-commit REV]
 *
 * Each side starts its own API and worker processes (bench/lib/service-stack.ts) under a fresh
 * prefix, is timed from the first intake request until the observations and follow-ups queues are
 * empty and one refresh, and is deleted afterwards. Disk per point is read after a force merge of
 * the history's months to one segment each (as months settle once written), and before it.
 * Writes bench/results/history-cost.json.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { generateLoad, sendLoad } from '../lib/intake-load.ts';
import { snapshotService } from '../lib/service-snapshot.ts';
import { log, REPO_ROOT, stackCpu, startStack, type ServiceStack } from '../lib/service-stack.ts';
import { cli } from '../lib/args.ts';
import { writeResult } from '../lib/measure.ts';
import { familyWork } from '../lib/engine-cpu.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 20000, min: 1 },
    accounts: { type: 'string' },
    rounds: { type: 'int', default: 2, min: 1 },
    'in-flight': { type: 'int', default: 3, min: 1 },
    // first-load: the intake bench's dataset (each account and post observed once);
    // reobserved: accounts every three days over five weeks and recent posts several times.
    profile: { type: 'string', default: 'reobserved' },
    // The service as committed at REV (default: HEAD), so that edits made during a run do not reach it.
    'service-commit': { type: 'string', default: 'HEAD' },
  },
});
if (!['first-load', 'reobserved'].includes(args.profile)) {
  process.stderr.write('--profile: first-load or reobserved\n');
  process.exit(2);
}
const SERVICE_ROOT = snapshotService(args['service-commit']).dir;
const POSTS = args.posts;
const ACCOUNTS = Number(args.accounts ?? Math.max(1, Math.round(POSTS / 10)));
const ROUNDS = args.rounds;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Points and disk of the history's months (primaries; one node, no replicas). */
async function historyDisk(stack: ServiceStack): Promise<{ points: number; bytes: number; months: number }> {
  const index = `${stack.prefix}-metrics-*`;
  await stack.es.indices.refresh({ index });
  const stats = await stack.es.indices.stats({ index, metric: ['store', 'docs'] });
  return {
    points: stats._all.primaries?.docs?.count ?? 0,
    bytes: stats._all.primaries?.store?.size_in_bytes ?? 0,
    months: Object.keys(stats.indices ?? {}).length,
  };
}

/** What the engine did per index family of the run: writes, refreshes, merges, searches, gets. */
const engineWork = (stack: ServiceStack) =>
  familyWork(stack.es, stack.prefix, [
    'index_ops',
    'index_s',
    'refreshes',
    'refresh_s',
    'merge_s',
    'queries',
    'query_s',
    'fetch_s',
    'gets',
  ]);

interface Side {
  history: 'on' | 'off';
  round: number;
  observations: number;
  seconds: number;
  obs_per_s: number;
  es_cpu_s: number;
  worker_cpu_s: number;
  api_cpu_s: number;
  points?: number;
  months?: number;
  bytes_per_point_unmerged?: number;
  bytes_per_point_merged?: number;
  engine: Record<string, Record<string, number>>;
}

async function side(history: 'on' | 'off', roundNo: number, load: ReturnType<typeof generateLoad>): Promise<Side> {
  const stack = await startStack({
    label: `history-${history}`,
    apis: 1,
    worker: true,
    env: { EMBEDDINGS: 'off', METRIC_HISTORY: history },
    probeIntervalMs: 0,
    root: SERVICE_ROOT,
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const before = await stackCpu(stack);
    const sent = await Promise.race([
      sendLoad(load, { baseUrl: stack.apis[0]!.url, key: stack.key, inFlight: args['in-flight'] }),
      stack.failure,
    ]);
    await stack.drained(60 * 60_000);
    const elapsed = (performance.now() - sent.startedAt) / 1000;
    const after = await stackCpu(stack);
    const result: Side = {
      history,
      round: roundNo,
      observations: sent.accepted,
      seconds: round(elapsed, 2),
      obs_per_s: round(sent.accepted / elapsed, 0),
      es_cpu_s: round(after.es - before.es),
      worker_cpu_s: round(after.worker - before.worker),
      api_cpu_s: round(after.api - before.api),
      engine: await engineWork(stack),
    };
    if (history === 'on') {
      const unmerged = await historyDisk(stack);
      await stack.es.indices.forcemerge({ index: `${stack.prefix}-metrics-*`, max_num_segments: 1 });
      const merged = await historyDisk(stack);
      Object.assign(result, {
        points: merged.points,
        months: merged.months,
        bytes_per_point_unmerged: round(unmerged.bytes / unmerged.points),
        bytes_per_point_merged: round(merged.bytes / merged.points),
      });
    }
    log(JSON.stringify(result));
    return result;
  } finally {
    await stack.cleanup();
  }
}

async function main(): Promise<void> {
  const scratch = path.join(REPO_ROOT, '.scratch', `history-cost-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  try {
    const load = generateLoad(
      { posts: POSTS, accounts: ACCOUNTS, seed: 1, history: args.profile === 'reobserved' },
      5000,
      path.join(scratch, 'load.ndjson'),
    );
    log(`${load.observations} observations (${JSON.stringify(load.kinds)})`);
    const sides: Side[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      // Alternate which goes first, so that a machine warming up or slowing down favours neither.
      const order: Array<'on' | 'off'> = r % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
      for (const history of order) sides.push(await side(history, r, load));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const of = (h: 'on' | 'off', key: 'obs_per_s' | 'es_cpu_s' | 'worker_cpu_s' | 'seconds') =>
      median(sides.filter((s) => s.history === h).map((s) => s[key]));
    const summary = {
      profile: args.profile,
      posts: POSTS,
      accounts: ACCOUNTS,
      observations: load.observations,
      kinds: load.kinds,
      obs_per_s: { on: of('on', 'obs_per_s'), off: of('off', 'obs_per_s') },
      throughput_on_over_off: round(of('on', 'obs_per_s') / of('off', 'obs_per_s'), 3),
      es_cpu_on_over_off: round(of('on', 'es_cpu_s') / of('off', 'es_cpu_s'), 3),
      worker_cpu_on_over_off: round(of('on', 'worker_cpu_s') / of('off', 'worker_cpu_s'), 3),
      sides,
    };
    console.log(JSON.stringify(summary, null, 2));
    writeResult(`history-cost-${args.profile}.json`, summary);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(SERVICE_ROOT, { recursive: true, force: true });
  }
}

await main();
