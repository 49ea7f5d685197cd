/**
 * A simulated day at steady state (issue "Steady state at scale", part 1; bench/steady-state.md):
 * on an index of `--posts` posts (the seed dataset, loaded through the intake untimed), one day's
 * observations as a pipeline would send them (day-load.ts: every active account again, every post
 * of the last 30 days again with grown counters, 5 % new posts with their enrichments), sent
 * through the HTTP intake while a fixed open-loop search load runs (search-load.ts), and the same
 * search load against the idle service just before, in the same run.
 *
 *   npx tsx bench/steady-state/day.ts --posts 100000 [--accounts N (posts/10)] [--service-commit REV (HEAD)]
 *       [--base history|first-load (history)]
 *       [--search-rate 10] [--idle-seconds 60] [--per-request 1000] [--in-flight 3] [--embeddings]
 *
 * Reports the day's service time (first intake request until the observations, follow-ups and
 * embeddings queues are empty and one refresh) and obs/s; the engine's document writes per
 * observation (index_total of the posts and accounts indices, primaries) split by cause from the
 * jobs' own reports (BullMQ completions of the stack's queues): the records, author fan-out,
 * baselines, account metrics, embeddings, and what none of them explains; metric-history points
 * apart; Elasticsearch, worker and API CPU-s (with the idle search load's rate for comparison, and
 * the machine's busy CPU outside them, as the machine is shared); and search p50/p99 during the
 * day against idle. Writes bench/results/steady-state-day-<posts>-<base>-<commit>.json.
 *
 * The service runs as committed at `--service-commit` (bench/lib/service-snapshot.ts),
 * one API and one worker under a fresh prefix, EMBEDDINGS off unless `--embeddings` (MODEL_DIR, or
 * ../shared/models/all-MiniLM-L6-v2; the base load then waits for every vector, which takes long),
 * the search rate limit raised above the load (one key sends it all). Everything it creates is
 * deleted at the end, on failure too. The day's generator checks itself on a small day first
 * (`npx tsx bench/steady-state/day-load.ts --check --intake` also sends one through an intake).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import {
  createQueueEvents,
  OBSERVATIONS_PER_JOB,
  type FollowUpJobResult,
  type ObservationJobResult,
} from '../../src/queues/registry.ts';
import { DEFAULT_SEED_NOW } from '../../src/seed/generator.ts';
import { generateLoad, sendLoad, writeLoad } from '../lib/intake-load.ts';
import { snapshotService } from '../lib/service-snapshot.ts';
import { log, REPO_ROOT, stackCpu, startStack, until, type ServiceStack } from '../lib/service-stack.ts';
import { checkDayLoad, generateDay } from './day-load.ts';
import { startSearchLoad, type SearchLoad } from './search-load.ts';
import { cli } from '../lib/args.ts';
import { MODEL_DIR } from '../lib/model.ts';
import { diskDelta, diskReads, engineCpuMs, familyWork, idleCpuRate } from '../lib/engine-cpu.ts';
import { startHotThreads, type HotThreads } from '../lib/hot-threads.ts';
import { writeResult } from '../lib/measure.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 100000, min: 1 },
    accounts: { type: 'string' },
    'service-commit': { type: 'string', default: 'HEAD' },
    'search-rate': { type: 'number', default: 10, min: 0 },
    'idle-seconds': { type: 'int', default: 60, min: 0 },
    'warmup-seconds': { type: 'int', default: 10, min: 0 },
    'per-request': { type: 'int', default: 1000, min: 1 },
    'in-flight': { type: 'int', default: 3, min: 1 },
    embeddings: { type: 'boolean' },
    // Where the engine's CPU goes, idle and during the day: thread pools and stacks (bench/lib/hot-threads.ts).
    'hot-threads': { type: 'boolean' },
    // Two API nodes: the intake on one (API_ROUTES=intake), the searches on the other (reads).
    'intake-node': { type: 'boolean' },
    // history: the seed with its re-observations (accounts every three days up to hours before
    // the day, recent posts several times): the day then moves each counter by a day's growth, as
    // in a steady state. first-load: each account observed once, weeks or months before the day,
    // so that the day's observation moves its counters by all the growth since.
    base: { type: 'string', default: 'history' },
    // On a loaded prefix (the scaling table's, bench/steady-state/scale-build.ts): no base load;
    // the day of the dataset --posts/--accounts it was built from, its accounts sampled (those
    // whose platform ID is ≡ --sample-offset mod --sample-every, with their posts), sent to that prefix, whose
    // indices stay.
    on: { type: 'string' },
    'sample-every': { type: 'string', default: '1' },
    'sample-offset': { type: 'string', default: '0' },
  },
});
if (!['history', 'first-load'].includes(args.base)) {
  process.stderr.write('--base: history or first-load\n');
  process.exit(2);
}
const POSTS = args.posts;
const ON = args.on;
const SAMPLE_EVERY = BigInt(args['sample-every']);
const SAMPLE_OFFSET = BigInt(args['sample-offset']);
const ACCOUNTS = Number(args.accounts ?? Math.max(1, Math.round(POSTS / 10)));
const SEARCH_RATE = args['search-rate'];
const IN_FLIGHT = args['in-flight'];
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Engine counters of one index family (primaries): writes and what the intake's reads cost. */
const FAMILY_WORK = [
  'index_ops',
  'index_ms',
  'refreshes',
  'refresh_ms',
  'merge_ms',
  'merged_bytes',
  'store_bytes',
  'queries',
  'query_ms',
  'gets',
] as const;
type FamilyWork = Record<(typeof FAMILY_WORK)[number], number>;
const engineWork = (stack: ServiceStack): Promise<Record<string, FamilyWork>> =>
  familyWork(stack.es, stack.prefix, FAMILY_WORK);

function workDelta(after: Record<string, FamilyWork>, before: Record<string, FamilyWork>): Record<string, FamilyWork> {
  const out: Record<string, FamilyWork> = {};
  for (const [family, a] of Object.entries(after)) {
    const b = before[family]!;
    out[family] = Object.fromEntries(
      Object.entries(a).map(([k, v]) => [k, v - b[k as keyof FamilyWork]]),
    ) as FamilyWork;
  }
  return out;
}

/** Waits until no merge runs on the stack's indices for five seconds in a row (at most 10 minutes). */
async function settled(stack: ServiceStack): Promise<void> {
  let quiet = 0;
  await until(
    'the engine merges to settle',
    async () => {
      const stats = await stack.es.indices.stats({ index: `${stack.prefix}-*`, metric: ['merge'] });
      quiet = (stats._all.total?.merges?.current ?? 0) === 0 ? quiet + 1 : 0;
      return quiet >= 5;
    },
    10 * 60_000,
    1000,
  ).catch(() => log('engine merges still running after 10 minutes; measuring anyway'));
}

/**
 * The engine's CPU over the merges a day leaves behind: from its end until no merge has run for
 * five seconds, less the engine's rate at rest measured right after (the search load stopped).
 * A day's last writes trigger merges that outlast it, and a longer day (a bigger index, a slower
 * cluster) holds more of its own merges inside its window: counting the tail makes days of
 * different lengths comparable, as the intake bench counts both sides' (bench/intake.md).
 */
async function mergesLeftBehind(stack: ServiceStack): Promise<{ es: number; seconds: number; rest_per_s: number }> {
  const started = performance.now();
  const before = await engineCpuMs(stack.es);
  await settled(stack);
  const seconds = (performance.now() - started) / 1000;
  const used = (await engineCpuMs(stack.es)) - before;
  const rest = await idleCpuRate(stack.es, 3000);
  return {
    es: round(Math.max(0, used - rest * seconds) / 1000, 2),
    seconds: round(seconds),
    rest_per_s: round(rest / 1000, 3),
  };
}

/** Sums of what the jobs of the day reported, from their completion events. */
interface JobSums {
  observations_jobs: number;
  accounts_written: number;
  posts_written: number;
  fanned_out: number;
  baselines_updated: number;
  metrics_updated: number;
  embedded: number;
  deferred: number;
  follow_up_runs: number;
  follow_up_accounts: number;
  follow_up_authors: number;
  embeddings_jobs: number;
  /** Records given vectors by the embeddings queue. */
  embeddings_written: number;
}

/** Listens to the completions of the stack's index-writing queues and sums their reports. */
async function watchJobs(stack: ServiceStack): Promise<{ sums: JobSums; close(): Promise<void> }> {
  const sums: JobSums = {
    observations_jobs: 0,
    accounts_written: 0,
    posts_written: 0,
    fanned_out: 0,
    baselines_updated: 0,
    metrics_updated: 0,
    embedded: 0,
    deferred: 0,
    follow_up_runs: 0,
    follow_up_accounts: 0,
    follow_up_authors: 0,
    embeddings_jobs: 0,
    embeddings_written: 0,
  };
  const connections: Redis[] = [];
  const events: QueueEvents[] = [];
  const listen = (name: 'observations' | 'follow-ups' | 'embeddings', on: (value: unknown) => void) => {
    // A blocking connection each: QueueEvents reads its stream with XREAD BLOCK.
    const connection = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    connections.push(connection);
    const queueEvents = createQueueEvents(name, { connection, prefix: stack.prefix });
    queueEvents.on('completed', ({ returnvalue }) =>
      on(typeof returnvalue === 'string' ? (JSON.parse(returnvalue) as unknown) : returnvalue),
    );
    events.push(queueEvents);
  };
  listen('observations', (value) => {
    const r = value as ObservationJobResult;
    sums.observations_jobs++;
    sums.accounts_written += r.accounts_written;
    sums.posts_written += r.posts_written;
    sums.fanned_out += r.fanned_out;
    sums.baselines_updated += r.baselines_updated;
    sums.metrics_updated += r.metrics_updated;
    sums.embedded += r.embedded ?? 0;
    sums.deferred += r.deferred ?? 0;
  });
  listen('follow-ups', (value) => {
    const r = value as FollowUpJobResult;
    sums.follow_up_runs++;
    sums.follow_up_accounts += r.accounts;
    sums.follow_up_authors += r.authors;
    sums.fanned_out += r.fanned_out;
    sums.baselines_updated += r.baselines_updated;
    sums.metrics_updated += r.metrics_updated;
  });
  listen('embeddings', (value) => {
    sums.embeddings_jobs++;
    sums.embeddings_written += Number(value) || 0;
  });
  await Promise.all(events.map((e) => e.waitUntilReady()));
  return {
    sums,
    async close() {
      await Promise.all(events.map((e) => e.close().catch(() => undefined)));
      for (const c of connections) c.disconnect();
    },
  };
}

/**
 * The observations of the sampled accounts (platform ID ≡ --sample-offset mod --sample-every): each account's
 * own, its posts' (by `author_platform_id`) and the enrichment that follows each kept post.
 */
function* sampled(observations: Iterable<Record<string, unknown>>): Generator<Record<string, unknown>> {
  let keptPost = false;
  for (const o of observations) {
    if (SAMPLE_EVERY === 1n) {
      yield o;
      continue;
    }
    const kind = o['kind'];
    if (kind === 'post_enrichment') {
      if (keptPost) yield o;
      continue;
    }
    const owner =
      kind === 'post' ? o['author_platform_id'] : kind === 'account' ? o['platform_id'] : o['account_platform_id'];
    const keep = BigInt(String(owner)) % SAMPLE_EVERY === SAMPLE_OFFSET;
    if (kind === 'post') keptPost = keep;
    if (keep) yield o;
  }
}

async function main(): Promise<void> {
  // The generator's own check on a small day first: IDs, order, counters, the contract.
  log(`day check: ${JSON.stringify(checkDayLoad({ posts: 3000, accounts: 300 }))}`);

  const scratch = path.join(REPO_ROOT, '.scratch', `steady-state-day-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  const snapshot = snapshotService(args['service-commit']);
  const serviceRoot = snapshot.dir;
  const commit = snapshot.commit;
  const removeFiles = () => {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(serviceRoot, { recursive: true, force: true });
  };
  // Ctrl-C or TERM: the stack's handler cleans the stack up and exits, past the finally below.
  process.once('exit', removeFiles);
  let stack: ServiceStack | null = null;
  let search: SearchLoad | null = null;
  let jobs: Awaited<ReturnType<typeof watchJobs>> | null = null;
  let hot: HotThreads | null = null;
  try {
    const generating = performance.now();
    const base = ON
      ? writeLoad([], 5000, path.join(scratch, 'base.ndjson'))
      : generateLoad(
          { posts: POSTS, accounts: ACCOUNTS, seed: 1, history: args.base === 'history' },
          5000,
          path.join(scratch, 'base.ndjson'),
        );
    const day = generateDay({ posts: POSTS, accounts: ACCOUNTS, seed: 1 });
    const dayLoad = writeLoad(sampled(day.observations()), args['per-request'], path.join(scratch, 'day.ndjson'));
    log(
      `base: ${base.observations} observations; day: ${dayLoad.observations} (${JSON.stringify(day.counts)}), ` +
        `generated in ${round((performance.now() - generating) / 1000)} s`,
    );

    stack = await startStack({
      label: `steady-day-${POSTS}`,
      ...(ON ? { existingPrefix: ON } : {}),
      apis: args['intake-node'] ? 2 : 1,
      ...(args['intake-node'] ? { apiEnv: (i: number) => ({ API_ROUTES: i === 0 ? 'reads' : 'intake' }) } : {}),
      worker: true,
      env: {
        ...(args.embeddings ? { EMBEDDINGS: 'on', MODEL_DIR } : { EMBEDDINGS: 'off' }),
        // One key sends the whole search load: the default 600 a minute would refuse some at 10/s.
        // A budget well above the load keeps the limiter's own work in what is measured.
        RATE_LIMIT_SEARCH_PER_MINUTE: String(Math.max(6000, Math.ceil(SEARCH_RATE * 60 * 10))),
        SEARCH_IN_FLIGHT_PER_KEY: '0',
      },
      probeIntervalMs: 0,
      root: serviceRoot,
    });
    const s = stack;
    const api = s.apis[0]!.url;
    // Where observations go: the intake node, or the one node doing both.
    const intake = s.apis.at(-1)!.url;

    // The base dataset, untimed for the report but logged (a slow base load is worth knowing).
    const loading = performance.now();
    if (base.observations > 0)
      await Promise.race([sendLoad(base, { baseUrl: intake, key: s.key, inFlight: IN_FLIGHT }), s.failure]);
    await Promise.race([s.drained(60 * 60_000, { what: 'the base load to be indexed' }), s.failure]);
    const baseSeconds = (performance.now() - loading) / 1000;
    log(`base loaded in ${round(baseSeconds)} s (${round(base.observations / baseSeconds, 0)} obs/s)`);
    // The engine merges the bulk load's segments for a while after it: idle is measured once that
    // is over, or the idle side would carry the load's merges (seen: ES at ~1 core for 10 searches/s).
    const settling = performance.now();
    await settled(s);
    log(`engine merges settled in ${round((performance.now() - settling) / 1000)} s`);

    // The search load: a warm-up (not recorded), then idle, then the day, without a pause.
    search = startSearchLoad({ baseUrl: api, key: s.key, rate: SEARCH_RATE, now: DEFAULT_SEED_NOW.getTime() });
    await sleep(args['warmup-seconds'] * 1000);
    if (search.failures().length > 0)
      throw new Error(`searches failed: ${JSON.stringify(search.failures().slice(0, 3))}`);
    hot = args['hot-threads'] ? startHotThreads(s.es) : null;
    const idleBefore = await stackCpu(s);
    const idleDisk = await diskReads(s.es);
    const idleStarted = performance.now();
    search.setPhase('idle');
    hot?.setPhase('idle');
    await Promise.race([sleep(args['idle-seconds'] * 1000), s.failure]);
    search.setPhase(null);
    hot?.setPhase(null);
    const idleDiskRead = diskDelta(await diskReads(s.es), idleDisk);
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const idleAfter = await stackCpu(s);
    log(`idle: ${JSON.stringify(search.report('idle').all)}`);

    jobs = await watchJobs(s);
    const engineBefore = await engineWork(s);
    const before = await stackCpu(s);
    const dayDisk = await diskReads(s.es);
    hot?.setPhase('day');
    // Two parts: while the API takes the day's requests (and validates them), then while only
    // the worker and the engine work.
    search.setPhase('day:sending');
    const sent = await Promise.race([
      sendLoad(dayLoad, { baseUrl: intake, key: s.key, inFlight: IN_FLIGHT }),
      s.failure,
    ]);
    const allSent = (performance.now() - sent.startedAt) / 1000;
    search.setPhase('day:indexing');
    await Promise.race([s.drained(60 * 60_000, { what: 'the day to be indexed' }), s.failure]);
    const seconds = (performance.now() - sent.startedAt) / 1000;
    search.setPhase(null);
    hot?.setPhase(null);
    const after = await stackCpu(s);
    const engine = workDelta(await engineWork(s), engineBefore);
    const dayDiskRead = diskDelta(await diskReads(s.es), dayDisk);
    await hot?.stop();
    await search.stop();
    const searchFailures = search.failures();
    // Completion events trail the queue counts a little: wait for every observations job's.
    const expectedJobs = dayLoad.requests.reduce((n, r) => n + Math.ceil(r.lines / OBSERVATIONS_PER_JOB), 0);
    const sums = jobs.sums;
    await until("the jobs' completion events", async () => sums.observations_jobs >= expectedJobs, 30_000).catch(() =>
      log(`only ${sums.observations_jobs} of ${expectedJobs} observations jobs reported`),
    );
    await sleep(1000);
    const mergeTail = await mergesLeftBehind(s);

    const obs = sent.accepted;
    const writes = {
      posts: engine['posts']!.index_ops,
      post_vectors: engine['post_vectors']?.index_ops ?? 0,
      accounts: engine['accounts']!.index_ops,
      metrics: engine['metrics']!.index_ops,
    };
    const attributed = {
      records: sums.posts_written + sums.accounts_written,
      author_fan_out: sums.fanned_out,
      baselines: sums.baselines_updated,
      account_metrics: sums.metrics_updated,
      embeddings: sums.embedded + sums.embeddings_written,
    };
    const attributedTotal = Object.values(attributed).reduce((a, b) => a + b, 0);
    const per = (n: number) => round(n / obs, 3);
    const idleRate = (k: 'es' | 'worker' | 'api') => (idleAfter[k] - idleBefore[k]) / idleSeconds;
    const used = (a: typeof after, b: typeof after, k: 'es' | 'worker' | 'api' | 'bench') => a[k] - b[k];
    // Busy CPU of the machine outside Elasticsearch, the service and this bench (other users).
    const elsewhere = (a: typeof after, b: typeof after) =>
      a.machine - b.machine - (['es', 'worker', 'api', 'bench'] as const).reduce((sum, k) => sum + used(a, b, k), 0);
    const cpuDay = {
      es: round(used(after, before, 'es')),
      worker: round(used(after, before, 'worker')),
      api: round(used(after, before, 'api')),
      bench: round(used(after, before, 'bench')),
      elsewhere: round(elsewhere(after, before)),
    };
    const idle = search.report('idle');
    const during = search.report('day');
    const duringSending = search.report('day:sending');
    const duringIndexing = search.report('day:indexing');
    const result = {
      measured: { commit, date: new Date().toISOString().slice(0, 10) },
      base_profile: ON ? `prefix ${ON}` : args.base,
      sample: `platform ID ≡ ${SAMPLE_OFFSET} mod ${SAMPLE_EVERY}`,
      posts: POSTS,
      accounts: ACCOUNTS,
      embeddings: args.embeddings,
      intake_node: args['intake-node'] === true,
      base: {
        observations: base.observations,
        kinds: base.kinds,
        seconds: round(baseSeconds),
        obs_per_s: round(base.observations / baseSeconds, 0),
      },
      day: {
        observations: obs,
        kinds: dayLoad.kinds,
        causes: day.counts,
        requests: dayLoad.requests.length,
        per_request: args['per-request'],
        in_flight: IN_FLIGHT,
        refused_503: sent.refused,
        seconds_to_send: round(allSent, 2),
        service_seconds: round(seconds, 2),
        obs_per_s: round(obs / seconds, 0),
      },
      writes: {
        engine: writes,
        per_observation: {
          total: per(writes.posts + writes.accounts),
          posts_index: per(writes.posts),
          // Beside the total: a vector document is written with its post, when it changes.
          post_vectors_index: per(writes.post_vectors),
          accounts_index: per(writes.accounts),
          records: per(attributed.records),
          author_fan_out: per(attributed.author_fan_out),
          baselines: per(attributed.baselines),
          account_metrics: per(attributed.account_metrics),
          embeddings: per(attributed.embeddings),
          // A post both fanned out and given a new baseline is one write counted in both causes,
          // so this can be negative: it is the engine's writes less the causes' sum.
          other_unexplained: per(writes.posts + writes.accounts - attributedTotal),
          // Without the baselines (which ride on fan-out writes when a post has both): post writes
          // that are neither a record nor a fan-out (a baseline alone, a snapshot attached again),
          // and account writes that are neither a record nor new metrics (with --embeddings, both
          // also hold the embeddings queue's vectors).
          posts_beyond_records_and_fan_out: per(writes.posts - sums.posts_written - sums.fanned_out - sums.embedded),
          accounts_beyond_records_and_metrics: per(writes.accounts - sums.accounts_written - sums.metrics_updated),
          metric_history_points: per(writes.metrics),
        },
        jobs: sums,
      },
      cpu_s: {
        day: cpuDay,
        // The same search load alone, per second, and over the day's duration: what the day added.
        idle_search_per_s: {
          es: round(idleRate('es'), 3),
          worker: round(idleRate('worker'), 3),
          api: round(idleRate('api'), 3),
          elsewhere: round(elsewhere(idleAfter, idleBefore) / idleSeconds, 3),
        },
        day_less_idle_search: {
          es: round(cpuDay.es - idleRate('es') * seconds),
          worker: round(cpuDay.worker - idleRate('worker') * seconds),
          api: round(cpuDay.api - idleRate('api') * seconds),
        },
        // The merges the day left behind, run after its last write (mergesLeftBehind).
        merge_tail: mergeTail,
        engine_with_merge_tail: round(cpuDay.es - idleRate('es') * seconds + mergeTail.es, 2),
      },
      engine,
      // The engine's reads from disk (page-cache misses), idle and over the day.
      disk_reads: { idle: idleDiskRead, day: dayDiskRead },
      hot_threads: hot ? { idle: hot.report('idle'), day: hot.report('day') } : null,
      search: {
        rate_per_s: SEARCH_RATE,
        idle_seconds: round(idleSeconds),
        idle,
        day: during,
        day_over_idle: {
          p50: round(during.all.p50_ms / idle.all.p50_ms, 2),
          p99: round(during.all.p99_ms / idle.all.p99_ms, 2),
        },
        // The day's two parts, all kinds together: while the API took the requests, and after.
        while_sending: duringSending.all,
        while_indexing: duringIndexing.all,
        failures: searchFailures.slice(0, 5),
        // Every latency, ms, so that runs can be pooled (compare-days.ts): one run's p99 is its
        // slowest two or three searches.
        samples: {
          idle: search.samples('idle').map((ms) => round(ms)),
          while_sending: search.samples('day:sending').map((ms) => round(ms)),
          while_indexing: search.samples('day:indexing').map((ms) => round(ms)),
        },
        // When the day's slowest searches were due, to set beside the engine's GC log and the like.
        slowest: search.slowest('day', 10),
      },
    };
    const out = writeResult(
      `steady-state-day-${ON ? `on-${ON}` : `${POSTS}-${args.base}`}${args['intake-node'] ? '-intake-node' : ''}-${commit}.json`,
      result,
    );
    const p = result.writes.per_observation;
    console.log(
      [
        `steady-state day at ${POSTS} posts / ${ACCOUNTS} accounts (service ${commit}), written to ${path.relative(REPO_ROOT, out)}`,
        `  base load: ${base.observations} obs in ${round(baseSeconds)} s`,
        `  day: ${obs} obs (${JSON.stringify(day.counts)}) in ${round(seconds, 1)} s = ${result.day.obs_per_s} obs/s (sent in ${round(allSent, 1)} s, ${sent.refused} refused)`,
        `  engine writes / obs: ${p.total} (posts ${p.posts_index}, accounts ${p.accounts_index}); records ${p.records}, author fan-out ${p.author_fan_out}, ` +
          `baselines ${p.baselines}, account metrics ${p.account_metrics}, embeddings ${p.embeddings}, other ${p.other_unexplained} ` +
          `(posts beyond records and fan-out ${p.posts_beyond_records_and_fan_out}, accounts beyond records and metrics ${p.accounts_beyond_records_and_metrics}); metric points ${p.metric_history_points}`,
        `  CPU-s: ES ${cpuDay.es}, worker ${cpuDay.worker}, API ${cpuDay.api} (less the idle search load's: ${JSON.stringify(result.cpu_s.day_less_idle_search)}; ES with the merges left behind ${result.cpu_s.engine_with_merge_tail}, their tail ${mergeTail.seconds} s); ` +
          `elsewhere on the machine ${cpuDay.elsewhere} (idle: ${round(elsewhere(idleAfter, idleBefore))} in ${round(idleSeconds)} s)`,
        `  search at ${SEARCH_RATE}/s: idle p50 ${idle.all.p50_ms} p99 ${idle.all.p99_ms} ms (${idle.all.requests}); ` +
          `day p50 ${during.all.p50_ms} p99 ${during.all.p99_ms} ms (${during.all.requests}); ratio p50 ${result.search.day_over_idle.p50}, p99 ${result.search.day_over_idle.p99}; ` +
          `while sending p50 ${duringSending.all.p50_ms} p99 ${duringSending.all.p99_ms} ms (${duringSending.all.requests}), ` +
          `while indexing p50 ${duringIndexing.all.p50_ms} p99 ${duringIndexing.all.p99_ms} ms (${duringIndexing.all.requests}); ` +
          `${idle.all.errors + during.all.errors} errors`,
      ].join('\n'),
    );
  } finally {
    await search?.stop().catch(() => undefined);
    await hot?.stop().catch(() => undefined);
    await jobs?.close().catch(() => undefined);
    await stack?.cleanup().catch((e: unknown) => log(`cleanup: ${String(e)}`));
    removeFiles();
  }
}

await main();
