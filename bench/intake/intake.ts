/**
 * Intake throughput (bench/intake.md, "Intake throughput against a raw bulk").
 *
 *   npx tsx bench/intake/intake.ts --posts 10000 [--accounts N] [--seed S] [--embeddings]
 *       [--service-commit REV] [--dist] [--raw-repeats 3] [--raw-without-history] [--in-flight 3] [--label TEXT] [--keep] [--worker-node-arg FLAG]… [--api-node-arg FLAG]…
 *       [--engine-cpus 0 --service-cpus 1]
 *
 * Service side: the seed generator's posts, accounts and enrichments through the HTTP intake of a
 * `social-search serve` process and a `social-search worker` process (bench/lib/service-stack.ts,
 * under a fresh INDEX_PREFIX / REDIS_PREFIX), timed from the first request to both queues drained
 * and one refresh. The service runs from a snapshot taken at start (this working tree, or commit
 * REV with --service-commit; bench/lib/service-snapshot.ts), so edits made to the checkout during
 * a run do not reach it; --dist runs the snapshot compiled, as the Docker image does.
 *
 * Raw side, same run: every final document the service wrote, projected exactly as it projects
 * them, and its metric history as written (unless --raw-without-history, the yardstick before
 * 2026-12-06), bulk-indexed into identical indices (median of --raw-repeats bulks), plus, with
 * --embeddings, the same records' texts through the embedder. Both rates divide the same number
 * of observations, so their ratio compares the cost of reaching the same end state.
 *
 * The worker starts as `node bin/social-search.js`, with V8's default heap unless
 * WORKER_NODE_OPTIONS says otherwise: the CPU figures of bench/intake.md were taken so. Its memory
 * as deployed needs the launcher's settings, `WORKER_NODE_OPTIONS="--max-old-space-size=512
 * --max-semi-space-size=4" MALLOC_ARENA_MAX=2` (without them a burst lets the heap grow ~130–200
 * MiB past the bound: bench/embeddings.md, "The default model, and the worker's peak").
 *
 * `--engine-cpus`/`--service-cpus` (taskset lists, together) pin every Elasticsearch node to the
 * first and the worker, the API, Redis and this process to the second, for both sides alike: the
 * service on CPUs of its own, as a deployment runs it (bench/lib/cpu-pinning.ts).
 *
 * Appends the run to bench/results/intake.json; the children's logs go to
 * bench/results/intake-{worker,api}.log. Deletes both prefixes' indices and templates, the Redis
 * keys, the snapshot and scratch files at the end, also on failure or Ctrl-C (--keep leaves the
 * indices and keys).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@elastic/elasticsearch';
import type { Queue } from 'bullmq';
import type { QueueName } from '../../src/queues/registry.ts';
import { generateLoad, sendLoad } from '../lib/intake-load.ts';
import { exportFinalDocuments, rawBulk, rawEmbed, type RawBulkResult, type RawEmbedResult } from './raw.ts';
import { localRedisPid, pinEngineAndService } from '../lib/cpu-pinning.ts';
import { compileService, REPO_ROOT, snapshotService, type ServiceSnapshot } from '../lib/service-snapshot.ts';
import { elasticsearchUrls, log, stackCpu, startStack, until, type ServiceStack } from '../lib/service-stack.ts';
import type * as ProjectionModule from '../../src/engine/elasticsearch/documents/projection.ts';
import type * as EmbeddingTextModule from '../../src/text/embedding-text.ts';
import type * as IndexAdminModule from '../../src/engine/elasticsearch/admin/index-admin.ts';
import type * as NamesModule from '../../src/engine/elasticsearch/names.ts';
import type * as ConfigModule from '../../src/internal/config.ts';
import type * as PathsModule from '../../src/internal/paths.ts';
import type * as EmbedderModule from '../../src/embedding/embedder.ts';
import { cli } from '../lib/args.ts';
import { engineCpuMs, indexWork, mergesSettled } from '../lib/engine-cpu.ts';
import { sampleEngineThreads, threadsBetween, type EngineThreadsCpu } from '../lib/engine-threads.ts';
import { MODEL_DIR } from '../lib/model.ts';

// ---------------------------------------------------------------------------------------------
// Options

const args = cli({
  options: {
    posts: { type: 'int', default: 10000, min: 0 },
    accounts: { type: 'int', min: 1 },
    seed: { type: 'int', default: 1, min: 0 },
    embeddings: { type: 'boolean' },
    'in-flight': { type: 'int', default: 3, min: 1 },
    'per-request': { type: 'int', default: 5000, min: 1 },
    'bulk-mb': { type: 'int', default: 5, min: 1 },
    'service-commit': { type: 'string' },
    dist: { type: 'boolean' },
    label: { type: 'string' },
    keep: { type: 'boolean' },
    'timeout-min': { type: 'int', default: 120, min: 1 },
    'raw-repeats': { type: 'int', default: 3, min: 1 },
    'raw-without-history': { type: 'boolean' },
    'engine-cpus': { type: 'string' },
    'service-cpus': { type: 'string' },
    'worker-node-arg': { type: 'list' },
    'api-node-arg': { type: 'list' },
  },
});
if (Boolean(args['engine-cpus']) !== Boolean(args['service-cpus'])) {
  process.stderr.write('--engine-cpus and --service-cpus go together\n');
  process.exit(2);
}

const POSTS = args.posts;
// The 1M-post seed (bench/intake.md, "The 1M-post seed") has 100,000 accounts: one account per ten posts.
const ACCOUNTS = args.accounts ?? Math.max(1, Math.round(POSTS / 10));
const SEED = args.seed;
const EMBEDDINGS = args.embeddings;
const IN_FLIGHT = args['in-flight'];
const PER_REQUEST = args['per-request'];
const BULK_BYTES = args['bulk-mb'] * 1024 * 1024;
const RAW_REPEATS = args['raw-repeats'];
/** The raw side leaves the metric history out (the yardstick before 2026-12-06). */
const RAW_WITHOUT_HISTORY = args['raw-without-history'];
const TIMEOUT_MS = args['timeout-min'] * 60_000;
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/results');

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const seconds = (ms: number) => round(ms / 1000, 2);

// ---------------------------------------------------------------------------------------------
// The service's own code, loaded from the snapshot that runs the worker and API, so that the
// index templates, the raw side's projection and the embedder are exactly the measured ones.

async function loadService(root: string) {
  const load = <T>(file: string) => import(pathToFileURL(path.join(root, file)).href) as Promise<T>;
  return {
    ...(await load<typeof ProjectionModule>('src/engine/elasticsearch/documents/projection.ts')),
    ...(await load<typeof EmbeddingTextModule>('src/text/embedding-text.ts')),
    ...(await load<typeof IndexAdminModule>('src/engine/elasticsearch/admin/index-admin.ts')),
    ...(await load<typeof NamesModule>('src/engine/elasticsearch/names.ts')),
    ...(await load<typeof ConfigModule>('src/internal/config.ts')),
    ...(await load<typeof PathsModule>('src/internal/paths.ts')),
    ...(await load<typeof EmbedderModule>('src/embedding/embedder.ts')),
  };
}
type Service = Awaited<ReturnType<typeof loadService>>;

// ---------------------------------------------------------------------------------------------
// Helpers

/** Waits until Elasticsearch runs no merge (a merge left by one side must not slow the other), then 1 s more. */
async function settle(es: Client): Promise<void> {
  if (!(await mergesSettled(es))) log('note: Elasticsearch still merging after 2 min (other indices?); going on');
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

/**
 * The engine's CPU seconds from now until the merges a side left behind have run (settle): the
 * rest of that side's cost, which a timed phase ending at its refresh leaves out. A raw bulk of
 * a few seconds leaves most of its merging for later; the service, indexing for minutes, merges
 * as it goes. Includes the idle engine's own CPU over the wait (a few hundredths of a second a
 * second here).
 */
async function mergeTail(es: Client): Promise<number> {
  const before = await engineCpuMs(es);
  await settle(es);
  return ((await engineCpuMs(es)) - before) / 1000;
}

/** Documents indexed and merge time so far, on every node or in the posts and accounts of `prefix`. */
async function engineWork(es: Client, prefix?: string): Promise<{ ops: number; mergeS: number }> {
  if (prefix) {
    // Every index the service writes: its metric history and vector documents are its own work, not
    // another's (left out, a day's metric points read as 55,000 foreign documents at 50k posts).
    const work = await indexWork(es, `${prefix}-posts,${prefix}-accounts,${prefix}-post-vectors*,${prefix}-metrics*`, [
      'index_ops',
      'merge_ms',
    ]);
    return { ops: work.index_ops, mergeS: work.merge_ms / 1000 };
  }
  const stats = await es.nodes.stats({ metric: 'indices', index_metric: ['indexing', 'merge'] });
  const nodes = Object.values(stats.nodes);
  return {
    ops: nodes.reduce((sum, node) => sum + (node.indices?.indexing?.index_total ?? 0), 0),
    mergeS: nodes.reduce((sum, node) => sum + (node.indices?.merges?.total_time_in_millis ?? 0), 0) / 1000,
  };
}

/**
 * What Elasticsearch did in the posts and accounts of `prefix`, from their creation: refreshes
 * (internal ones include those a real-time get of an unrefreshed document forces), merges,
 * real-time gets and indexing.
 */
const engineActivity = (es: Client, prefix: string) =>
  indexWork(es, `${prefix}-posts,${prefix}-accounts`, [
    'index_ops',
    'index_s',
    'refreshes',
    'external_refreshes',
    'refresh_s',
    'merges',
    'merge_s',
    'merged_docs',
    'gets',
    'get_s',
    'flushes',
    'segments',
  ]);

/**
 * What else ran during a phase: machine CPU not spent by Elasticsearch or this run's processes,
 * documents indexed into indices not of this run, and merge time on them (Elasticsearch's own
 * CPU counts their merges as if they were this run's). Others share this machine and cluster; a
 * phase they overlapped is flagged rather than silently slower. Elasticsearch refreshes its
 * process CPU figure about once a second, so on phases of a second or two these are rough.
 */
interface Interference {
  foreign_cpu_s: number;
  foreign_index_ops: number;
  foreign_merge_s: number;
}
async function interferenceProbe(stack: ServiceStack, ownPrefix: string): Promise<() => Promise<Interference>> {
  const read = async () => {
    const cpu = await stackCpu(stack);
    return {
      busy: cpu.machine,
      es: cpu.es,
      own: cpu.worker + cpu.api + cpu.bench,
      node: await engineWork(stack.es),
      // The indices of `ownPrefix` may be new (no stats yet) or carry work from before the phase.
      mine: await engineWork(stack.es, ownPrefix),
    };
  };
  const before = await read();
  return async () => {
    const after = await read();
    return {
      foreign_cpu_s: round(after.busy - before.busy - (after.es - before.es) - (after.own - before.own)),
      foreign_index_ops: after.node.ops - before.node.ops - (after.mine.ops - before.mine.ops),
      foreign_merge_s: round(after.node.mergeS - before.node.mergeS - (after.mine.mergeS - before.mine.mergeS)),
    };
  };
}

function flagInterference(phase: string, found: Interference, elapsedMs: number): void {
  const share = found.foreign_cpu_s / ((elapsedMs / 1000) * cpus().length);
  if (found.foreign_index_ops > 0 || found.foreign_merge_s >= 1 || (share > 0.1 && found.foreign_cpu_s >= 1.5)) {
    log(
      `WARNING: other work overlapped the ${phase}: ${found.foreign_cpu_s} CPU s (${round(share * 100)}% of the machine) outside this run, ` +
        `${found.foreign_index_ops} documents indexed into other indices, ${found.foreign_merge_s} s merging them`,
    );
  }
}

/**
 * A warming engine compiles as it works: its JIT compilers' CPU counts in a phase's engine CPU, and
 * on an engine started minutes before it is most of the difference between runs (2026-12-06: 53 of
 * a first run's 128 CPU-s, 14 of the second's 80, 3 of the fourth's 56; bench/intake.md, "The
 * engine's two modes"). Flagged when the compilers took more than 5 % of a side's engine CPU: such
 * a run measures the JVM's warm-up, not the intake.
 */
function flagCompiling(phase: string, threads: EngineThreadsCpu | null): void {
  if (!threads) return;
  const all = threads.jit + threads.gc + threads.rest;
  if (threads.jit > 0.05 * all)
    log(
      `WARNING: the engine was still compiling during the ${phase}: its JIT compilers took ${round(threads.jit)} of ${round(all)} CPU s; run again to measure a warm engine`,
    );
}

/** A reading of the engine's threads rounded for the results, or null. */
function roundThreads(threads: EngineThreadsCpu | null): EngineThreadsCpu | null {
  return threads && { jit: round(threads.jit), gc: round(threads.gc), rest: round(threads.rest) };
}

const PENDING = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

async function queueState(
  queue: Pick<Queue, 'getJobCounts'>,
): Promise<{ pending: number; failed: number; completed: number }> {
  const counts = await queue.getJobCounts(...PENDING, 'failed', 'completed');
  return {
    pending: PENDING.reduce((sum, state) => sum + (counts[state] ?? 0), 0),
    failed: counts['failed'] ?? 0,
    completed: counts['completed'] ?? 0,
  };
}

/** Sums of what the completed jobs of `queue` returned, read straight from their Redis hashes. */
async function jobTotals(
  stack: ServiceStack,
  queue: QueueName,
): Promise<{ jobs: number; retried: number; totals: Record<string, number>; jobMs: { p50: number; max: number } }> {
  const { redis, prefix } = stack;
  const ids = await redis.zrange(`${prefix}:${queue}:completed`, 0, -1);
  const totals: Record<string, number> = {};
  const durations: number[] = [];
  let retried = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const pipeline = redis.pipeline();
    for (const id of ids.slice(i, i + 500))
      pipeline.hmget(`${prefix}:${queue}:${id}`, 'returnvalue', 'processedOn', 'finishedOn', 'atm', 'ats');
    for (const [error, fields] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      const [returned, processedOn, finishedOn, attemptsMade, attemptsStarted] = fields as Array<string | null>;
      const value = returned ? (JSON.parse(returned) as unknown) : null;
      if (typeof value === 'number') totals['embedded'] = (totals['embedded'] ?? 0) + value;
      else if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) if (typeof v === 'number') totals[k] = (totals[k] ?? 0) + v;
      if (processedOn && finishedOn) durations.push(Number(finishedOn) - Number(processedOn));
      if (Number(attemptsMade ?? 0) > 1 || Number(attemptsStarted ?? 0) > 1) retried++;
    }
  }
  durations.sort((a, b) => a - b);
  return {
    jobs: ids.length,
    retried,
    totals,
    jobMs: { p50: durations[Math.floor(durations.length / 2)] ?? 0, max: durations.at(-1) ?? 0 },
  };
}

// ---------------------------------------------------------------------------------------------
// The run

async function main(tree: ServiceSnapshot, service: Service, running: { stack?: ServiceStack }): Promise<void> {
  const { createEmbedder, indexNames, loadConfig } = service;
  if (tree.modified.length > 0) log(`note: measuring uncommitted changes: ${tree.modified.join('; ')}`);
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: 'production',
    SIGNING_SECRET: randomBytes(32).toString('hex'),
    EMBEDDINGS: 'off',
    MODEL_ID: undefined,
    // As the image runs it (Dockerfile), unless the environment says otherwise (to measure another).
    ...(args.dist
      ? { SOCIAL_SEARCH_DIST: '1', MALLOC_MMAP_THRESHOLD_: process.env['MALLOC_MMAP_THRESHOLD_'] ?? '131072' }
      : {}),
  };
  // The worker and the API, each its own process. The API only takes intake here: no model.
  // WORKER_NODE_OPTIONS: Node flags for the worker alone (a heap limit, say), as a deployment would set them.
  const workerEnv: NodeJS.ProcessEnv = {
    ...(EMBEDDINGS ? { EMBEDDINGS: 'on', MODEL_DIR } : {}),
    ...(process.env['WORKER_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['WORKER_NODE_OPTIONS'] } : {}),
  };
  const config = loadConfig({ ...process.env, ...env });
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const name of ['worker', 'api']) writeFileSync(path.join(RESULTS_DIR, `intake-${name}.log`), '');
  let t = performance.now();
  // From here on the stack's own handler answers Ctrl-C: it cleans up, then exits.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, exitOnSignal);
  const stack = await startStack({
    label: 'intake',
    apis: 1,
    worker: true,
    env,
    workerEnv,
    // --worker-node-arg: flags NODE_OPTIONS refuses (--cpu-prof and its directory, for a profile of the worker).
    workerNodeArgs: args['worker-node-arg'],
    apiNodeArgs: args['api-node-arg'],
    root: tree.dir,
    launcher: 'node',
    rssIntervalMs: 500,
    keep: args.keep,
  });
  running.stack = stack;
  const { es, prefix, rawPrefix, run } = stack;
  // The engine's CPU by thread, to tell its JIT compilers' share of a phase (flagCompiling).
  const engineThreads = await sampleEngineThreads(es);
  const worker = stack.worker!.child;
  const api = stack.apis[0]!.child;
  const rss = stack.rss!;
  const queues = stack.queues;
  const within = <T>(promise: Promise<T>) => Promise.race([promise, stack.failure]);
  if (EMBEDDINGS)
    await within(until('the embeddings worker', async () => (await queues.embeddings.getWorkers()).length > 0, 60_000));
  log(`API and worker up in ${seconds(performance.now() - t)} s (worker RSS ${round(rss.last(worker.pid) ?? 0)} MiB)`);
  // The core-only development node has no `GET /`: read the version from the nodes info.
  const esVersion =
    Object.values((await es.nodes.info({ node_id: '_local', metric: '_none' })).nodes)[0]?.version ?? null;
  log(
    `run ${run}: ${POSTS} posts, ${ACCOUNTS} accounts, seed ${SEED}, embeddings ${EMBEDDINGS ? 'on' : 'off'}; service: ${tree.source}`,
  );

  const loadBefore = loadavg();
  // 0. The dataset, written once (untimed).
  t = performance.now();
  const load = generateLoad(
    { posts: POSTS, accounts: ACCOUNTS, seed: SEED },
    PER_REQUEST,
    path.join(stack.scratch, 'observations.ndjson'),
  );
  log(
    `generated ${load.observations} observations (${JSON.stringify(load.kinds)}), ${round(load.bytes / 2 ** 20)} MiB, ${load.requests.length} requests, in ${seconds(performance.now() - t)} s`,
  );

  if (args['engine-cpus']) {
    const redisPid = await localRedisPid(stack.redis);
    const pinned = await pinEngineAndService(es, args['engine-cpus'], args['service-cpus']!, [
      worker.pid,
      api.pid,
      ...(redisPid === null ? [] : [redisPid]),
      process.pid,
    ]);
    process.once('exit', pinned.unpin);
    log(`pinned ${pinned.description}`);
  }

  // Let start-up settle, then measure.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await settle(es);
  rss.resetWindow();
  const idleWorkerRss = rss.last(worker.pid);
  const serviceProbe = await interferenceProbe(stack, prefix);
  const cpuBefore = await stackCpu(stack);
  const threadsBefore = engineThreads?.read() ?? null;

  // 1. Service side: send, drain, refresh.
  const timeline: Array<{
    t_s: number;
    accepted: number;
    pending_jobs: number;
    completed_jobs: number;
    embedding_jobs_pending: number;
    worker_rss_mib: number | null;
  }> = [];
  let accepted = 0;
  const started = performance.now();
  const sampleTimeline = async () => {
    const [obs, emb] = await Promise.all([queueState(queues.observations), queueState(queues.embeddings)]);
    timeline.push({
      t_s: seconds(performance.now() - started),
      accepted,
      pending_jobs: obs.pending,
      completed_jobs: obs.completed,
      embedding_jobs_pending: emb.pending,
      worker_rss_mib: rss.last(worker.pid) === null ? null : round(rss.last(worker.pid)!),
    });
  };
  const timelineTimer = setInterval(() => void sampleTimeline().catch(() => undefined), 1000);
  let lastProgress = 0;
  const sent = await within(
    sendLoad(load, {
      baseUrl: stack.apis[0]!.url,
      key: stack.key,
      inFlight: IN_FLIGHT,
      onProgress: (n) => {
        accepted = n;
        if (performance.now() - lastProgress > 5000) {
          lastProgress = performance.now();
          log(`accepted ${n}/${load.observations}`);
        }
      },
    }),
  );
  log(
    `HTTP intake: ${sent.accepted} accepted in ${seconds(sent.elapsedMs)} s (${round(sent.accepted / (sent.elapsedMs / 1000), 0)} obs/s)`,
  );

  // Drained: no job pending on any queue, none failed. The observations queue is read first:
  // a job queues its embedding and follow-up work before it completes, so an empty observations
  // queue means the queues read after it hold every piece of work there will be.
  let lastLog = performance.now();
  let failed = 0;
  await within(
    until(
      'the queues to drain',
      async () => {
        const obs = await queueState(queues.observations);
        const fol = await queueState(queues['follow-ups']);
        const emb = await queueState(queues.embeddings);
        failed = obs.failed + fol.failed + emb.failed;
        if (performance.now() - lastLog > 10_000) {
          lastLog = performance.now();
          log(
            `pending: ${obs.pending} observation jobs, ${fol.pending} follow-up runs, ${emb.pending} embedding jobs; worker RSS ${round(rss.last(worker.pid) ?? 0)} MiB`,
          );
        }
        return failed > 0 || (obs.pending === 0 && fol.pending === 0 && emb.pending === 0);
      },
      TIMEOUT_MS,
      100,
    ),
  );
  if (failed > 0)
    throw new Error(`${failed} job(s) failed for good; see ${path.join(RESULTS_DIR, 'intake-worker.log')}`);
  const drainedAt = performance.now();
  const serviceIndices = [`${prefix}-posts`, `${prefix}-accounts`];
  await es.indices.refresh({ index: serviceIndices });
  const serviceEnd = performance.now();
  clearInterval(timelineTimer);
  await sampleTimeline();
  rss.sample();
  const cpuAfter = await stackCpu(stack);
  const serviceInterference = await serviceProbe();
  const serviceMergeTailS = await mergeTail(es);
  const serviceThreads = threadsBefore && threadsBetween(threadsBefore, engineThreads!.read());
  flagCompiling('service side', serviceThreads);
  flagInterference('service side', serviceInterference, serviceEnd - sent.startedAt);
  const serviceMs = serviceEnd - sent.startedAt;
  const workerRss = {
    idle: idleWorkerRss,
    peak_during_run: rss.windowPeak(worker.pid),
    peak_with_startup: rss.lifePeak(worker.pid),
    final: rss.last(worker.pid),
  };
  const apiRssPeak = rss.windowPeak(api.pid);
  log(
    `service: ${load.observations} observations in ${seconds(serviceMs)} s (${round(load.observations / (serviceMs / 1000), 0)} obs/s); worker RSS peak ${round(workerRss.peak_during_run ?? 0)} MiB, final ${round(workerRss.final ?? 0)} MiB`,
  );

  const observationJobs = await jobTotals(stack, 'observations');
  const embeddingJobs = EMBEDDINGS ? await jobTotals(stack, 'embeddings') : null;
  const followUpJobs = await jobTotals(stack, 'follow-ups');
  const historyIndices = RAW_WITHOUT_HISTORY
    ? []
    : Object.keys(await es.indices.get({ index: `${prefix}-metrics-*`, allow_no_indices: true })).sort();
  const historyCount = async (of: string) =>
    historyIndices.length === 0 ? 0 : (await es.count({ index: `${of}-metrics-*` })).count;
  const counts = {
    posts: (await es.count({ index: `${prefix}-posts` })).count,
    accounts: (await es.count({ index: `${prefix}-accounts` })).count,
    history: await historyCount(prefix),
  };
  const deleted = await es.indices.stats({ index: serviceIndices, metric: 'docs' });
  const serviceActivity = await engineActivity(es, prefix);
  log(`service engine activity: ${JSON.stringify(serviceActivity)}`);
  rss.stop();
  for (const child of [stack.apis[0]!, stack.worker!]) await stack.stop(child);

  // 2. Raw side: an identical pair of indices from the same templates.
  const rawAdmin = service.createIndexAdmin({
    client: es,
    indexPrefix: rawPrefix,
    templatesDir: service.templatesDir(),
    visibility: { current: async () => '0', advance: async () => undefined },
  });
  await rawAdmin.apply();
  for (const name of ['posts', 'accounts'] as const) {
    const hashOf = async (of: string) => {
      const mapping = await es.indices.getMapping({ index: indexNames(of, name).read });
      return (Object.values(mapping)[0]?.mappings._meta as { template_hash?: string } | undefined)?.template_hash;
    };
    const [serviceHash, rawHash] = await Promise.all([hashOf(prefix), hashOf(rawPrefix)]);
    if (!serviceHash || serviceHash !== rawHash)
      throw new Error(`the raw ${name} index is not identical to the service's: template ${rawHash} vs ${serviceHash}`);
  }
  t = performance.now();
  const exported = await exportFinalDocuments(es, service, {
    servicePrefix: prefix,
    rawPrefix,
    file: path.join(stack.scratch, 'bulk.ndjson'),
    batchBytes: BULK_BYTES,
    collectTexts: EMBEDDINGS,
    historyIndices,
  });
  log(
    `exported ${exported.posts} posts, ${exported.accounts} accounts and ${exported.history} history points (${round(exported.bytes / 2 ** 20)} MiB in ${exported.batches.length} bulk bodies) in ${seconds(performance.now() - t)} s`,
  );

  let embed: RawEmbedResult | null = null;
  if (EMBEDDINGS) {
    const embedder = createEmbedder({
      MODEL_DIR,
      EMBEDDINGS: 'on',
      EMBEDDING_DTYPE: config.EMBEDDING_DTYPE,
      EMBEDDING_THREADS: config.EMBEDDING_THREADS,
    });
    await embedder.ready();
    await embedder.embedDocuments(exported.texts.slice(0, 8)); // warm-up
    embed = await rawEmbed(embedder, exported.texts);
    await embedder.close();
    log(
      `raw embedding: ${embed.texts} texts in ${seconds(embed.elapsedMs)} s (${round(embed.texts / (embed.elapsedMs / 1000))} texts/s)`,
    );
  }

  // Repeated into fresh identical indices (the median counts): one bulk of a few seconds swings
  // with whatever else the two cores do; the service side's minutes average that out.
  const bulks: Array<
    RawBulkResult & {
      esCpuS: number;
      mergeTailS: number;
      interference: Interference;
      threads: EngineThreadsCpu | null;
      activity: Awaited<ReturnType<typeof engineActivity>>;
    }
  > = [];
  for (let repeat = 0; repeat < RAW_REPEATS; repeat++) {
    if (repeat > 0) {
      await rawAdmin.destroy();
      await rawAdmin.apply();
    }
    await settle(es);
    const esCpuBefore = (await engineCpuMs(es)) / 1000;
    const rawThreadsBefore = engineThreads?.read() ?? null;
    const rawProbe = await interferenceProbe(stack, rawPrefix);
    const bulk = await rawBulk(exported, {
      elasticsearchUrl: elasticsearchUrls()[0]!,
      inFlight: 2,
      refreshIndices: [
        `${rawPrefix}-posts`,
        `${rawPrefix}-accounts`,
        ...(historyIndices.length ? [`${rawPrefix}-metrics-*`] : []),
      ],
    });
    const esCpuS = (await engineCpuMs(es)) / 1000 - esCpuBefore;
    const interference = await rawProbe();
    const mergeTailS = await mergeTail(es);
    const threads = rawThreadsBefore && threadsBetween(rawThreadsBefore, engineThreads!.read());
    flagInterference(`raw bulk ${repeat + 1}`, interference, bulk.elapsedMs);
    flagCompiling(`raw bulk ${repeat + 1}`, threads);
    bulks.push({
      ...bulk,
      esCpuS,
      mergeTailS,
      interference,
      threads,
      activity: await engineActivity(es, rawPrefix),
    });
    const rawCounts = {
      posts: (await es.count({ index: `${rawPrefix}-posts` })).count,
      accounts: (await es.count({ index: `${rawPrefix}-accounts` })).count,
      history: await historyCount(rawPrefix),
    };
    if (
      rawCounts.posts !== counts.posts ||
      rawCounts.accounts !== counts.accounts ||
      rawCounts.history !== counts.history
    ) {
      throw new Error(`raw indices hold ${JSON.stringify(rawCounts)}, the service's ${JSON.stringify(counts)}`);
    }
    log(`raw bulk ${repeat + 1}/${RAW_REPEATS}: ${bulk.docs} documents in ${seconds(bulk.elapsedMs)} s`);
  }
  engineThreads?.stop();
  const bulk = [...bulks].sort((a, b) => a.elapsedMs - b.elapsedMs)[Math.floor(bulks.length / 2)]!;
  const esCpuRaw = bulk.esCpuS;
  const rawMs = bulk.elapsedMs + (embed?.elapsedMs ?? 0);

  // 3. Report.
  const serviceRate = load.observations / (serviceMs / 1000);
  const rawRate = load.observations / (rawMs / 1000);
  const ratio = serviceRate / rawRate;
  const sortedRequests = [...sent.requestMs].sort((a, b) => a - b);
  const half = timeline.find((s) => s.completed_jobs >= observationJobs.jobs / 2);
  const result = {
    date: new Date().toISOString(),
    label: args.label ?? null,
    run,
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? null,
      memory_gib: round(totalmem() / 2 ** 30),
      node: process.version,
      elasticsearch: esVersion,
      load_average_before: loadBefore.map((x) => round(x, 2)),
      load_average_after: loadavg().map((x) => round(x, 2)),
    },
    service_tree: { source: tree.source, commit: tree.commit, modified: tree.modified, hash: tree.hash },
    options: {
      posts: POSTS,
      accounts: ACCOUNTS,
      seed: SEED,
      embeddings: EMBEDDINGS,
      runtime: args.dist ? 'compiled (SOCIAL_SEARCH_DIST=1, MALLOC_MMAP_THRESHOLD_=131072)' : 'tsx',
      worker_concurrency: config.WORKER_CONCURRENCY,
      // The worker starts as `node bin/social-search.js`, without the launcher's heap flags: these
      // are its only Node flags (null: V8's defaults, a heap that grows to ~350 MiB here).
      worker_node_options: process.env['WORKER_NODE_OPTIONS'] ?? null,
      requests_in_flight: IN_FLIGHT,
      observations_per_request: PER_REQUEST,
      bulk_body_mib: BULK_BYTES / 2 ** 20,
      engine_cpus: args['engine-cpus'] ?? null,
      service_cpus: args['service-cpus'] ?? null,
    },
    dataset: {
      observations: load.observations,
      kinds: load.kinds,
      ndjson_mib: round(load.bytes / 2 ** 20),
      documents: counts,
      deleted_copies: deleted._all.primaries?.docs?.deleted ?? null,
    },
    service: {
      elapsed_s: seconds(serviceMs),
      drained_s: seconds(drainedAt - sent.startedAt),
      refresh_s: seconds(serviceEnd - drainedAt),
      obs_per_s: round(serviceRate),
      first_half_jobs_s: half ? half.t_s : null,
      http: {
        elapsed_s: seconds(sent.elapsedMs),
        obs_per_s: round(sent.accepted / (sent.elapsedMs / 1000)),
        requests: sent.requestMs.length,
        request_p50_ms: round(sortedRequests[Math.floor(sortedRequests.length / 2)] ?? 0),
        request_max_ms: round(sortedRequests.at(-1) ?? 0),
        refused_503: sent.refused,
      },
      observation_jobs: observationJobs,
      embedding_jobs: embeddingJobs,
      follow_up_jobs: followUpJobs,
      cpu_s: {
        worker: round(cpuAfter.worker - cpuBefore.worker),
        api: round(cpuAfter.api - cpuBefore.api),
        elasticsearch: round(cpuAfter.es - cpuBefore.es),
        load_generator: round(cpuAfter.bench - cpuBefore.bench),
      },
      /** The engine's CPU after the refresh until the merges left behind have run. */
      elasticsearch_merge_tail_s: round(serviceMergeTailS),
      worker_rss_mib: Object.fromEntries(Object.entries(workerRss).map(([k, v]) => [k, v === null ? null : round(v)])),
      api_rss_peak_mib: apiRssPeak === null ? null : round(apiRssPeak),
      interference: serviceInterference,
      engine_activity: serviceActivity,
      /** The engine's CPU by thread, the merges left behind included (null: no local node). */
      engine_threads_s: roundThreads(serviceThreads),
    },
    raw: {
      elapsed_s: seconds(rawMs),
      obs_per_s: round(rawRate),
      bulk: {
        elapsed_s: seconds(bulk.elapsedMs),
        refresh_s: seconds(bulk.refreshMs),
        documents: bulk.docs,
        history_points: exported.history,
        mib: round(exported.bytes / 2 ** 20),
        bodies: exported.batches.length,
        in_flight: 2,
        docs_per_s: round(bulk.docs / (bulk.elapsedMs / 1000)),
        elasticsearch_cpu_s: round(esCpuRaw),
        elasticsearch_merge_tail_s: round(bulk.mergeTailS),
        engine_activity: bulk.activity,
        engine_threads_s: roundThreads(bulk.threads),
        repeats_s: bulks.map((b) => seconds(b.elapsedMs)),
        interference: bulks.map((b) => b.interference),
      },
      embed: embed
        ? {
            texts: embed.texts,
            elapsed_s: seconds(embed.elapsedMs),
            texts_per_s: round(embed.texts / (embed.elapsedMs / 1000), 2),
          }
        : null,
      records_with_vectors: exported.withVectors,
    },
    ratio: round(ratio, 3),
    targets: {
      ratio: EMBEDDINGS ? '≥ 0.9 × (raw embedding + raw bulk)' : '≥ 0.7 × raw bulk',
      ratio_met: ratio >= (EMBEDDINGS ? 0.9 : 0.7),
      worker_rss_le_300_mib: (workerRss.peak_with_startup ?? Infinity) <= 300,
    },
    timeline,
  };

  const resultsFile = path.join(RESULTS_DIR, 'intake.json');
  const previous = existsSync(resultsFile)
    ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as { runs?: unknown[] })
    : {};
  writeFileSync(resultsFile, JSON.stringify({ runs: [...(previous.runs ?? []), result] }, null, 2) + '\n');

  const s = result.service;
  console.log(
    `\nIntake throughput — ${POSTS} posts, ${ACCOUNTS} accounts, seed ${SEED}, embeddings ${EMBEDDINGS ? 'on' : 'off'}, ${args.dist ? 'compiled' : 'tsx'} (run ${run})`,
  );
  console.table([
    { measure: 'observations', value: load.observations },
    {
      measure: 'documents (posts / accounts / history points on the raw side)',
      value: `${counts.posts} / ${counts.accounts} / ${RAW_WITHOUT_HISTORY ? 'left out' : counts.history}`,
    },
    { measure: 'service obs/s (first request → drained + refresh)', value: `${s.obs_per_s} (${s.elapsed_s} s)` },
    { measure: 'HTTP intake acceptance obs/s', value: `${s.http.obs_per_s} (${s.http.elapsed_s} s)` },
    ...(embed
      ? [
          {
            measure: 'raw embedding texts/s',
            value: `${result.raw.embed!.texts_per_s} (${embed.texts} texts, ${result.raw.embed!.elapsed_s} s)`,
          },
        ]
      : []),
    {
      measure: `raw bulk docs/s (median of ${RAW_REPEATS})`,
      value: `${result.raw.bulk.docs_per_s} (${result.raw.bulk.repeats_s.join(' / ')} s)`,
    },
    {
      measure: EMBEDDINGS ? 'raw obs/s (embed + bulk)' : 'raw obs/s (bulk)',
      value: `${result.raw.obs_per_s} (${result.raw.elapsed_s} s)`,
    },
    { measure: `ratio service / raw (target ${EMBEDDINGS ? '≥ 0.9' : '≥ 0.7'})`, value: result.ratio },
    {
      measure: 'worker Node flags (WORKER_NODE_OPTIONS)',
      value: result.options.worker_node_options ?? "none: V8's defaults",
    },
    {
      measure: 'worker RSS MiB: idle / peak in run / peak incl. start-up / final',
      value: `${workerRss.idle === null ? '-' : round(workerRss.idle)} / ${round(workerRss.peak_during_run ?? 0)} / ${round(workerRss.peak_with_startup ?? 0)} / ${round(workerRss.final ?? 0)}`,
    },
    {
      measure: 'CPU s: worker / API / Elasticsearch (service side)',
      value: `${s.cpu_s.worker} / ${s.cpu_s.api} / ${s.cpu_s.elasticsearch}`,
    },
    { measure: 'CPU s: Elasticsearch (raw bulk)', value: result.raw.bulk.elasticsearch_cpu_s },
    ...(s.engine_threads_s && result.raw.bulk.engine_threads_s
      ? [
          {
            measure: 'engine CPU s by thread, service; raw: JIT compilers / collector / the rest',
            value: [s.engine_threads_s, result.raw.bulk.engine_threads_s]
              .map((t) => `${t.jit} / ${t.gc} / ${t.rest}`)
              .join('; '),
          },
        ]
      : []),
    {
      measure: 'engine CPU s with the merges left behind: service / raw (ratio)',
      value: (() => {
        const service = s.cpu_s.elasticsearch + s.elasticsearch_merge_tail_s;
        const raw = result.raw.bulk.elasticsearch_cpu_s + result.raw.bulk.elasticsearch_merge_tail_s;
        return `${round(service)} / ${round(raw)} (${round(service / raw, 2)}×)`;
      })(),
    },
    ...(
      [
        ['service', s.engine_activity],
        ['raw bulk', result.raw.bulk.engine_activity],
      ] as const
    ).map(([side, a]) => ({
      measure: `engine, ${side}: index ops / refreshes (external) / merges (s) / gets`,
      value: `${a.index_ops} / ${a.refreshes} (${a.external_refreshes}) / ${a.merges} (${a.merge_s}) / ${a.gets}`,
    })),
    {
      measure: 'other work: CPU s / docs indexed / merge s (service; raw bulks)',
      value: [serviceInterference, ...bulks.map((b) => b.interference)]
        .map((i) => `${i.foreign_cpu_s} / ${i.foreign_index_ops} / ${i.foreign_merge_s}`)
        .join('; '),
    },
    {
      measure: 'observation jobs (retried)',
      value: `${observationJobs.jobs} (${observationJobs.retried}); writes ${JSON.stringify(observationJobs.totals)}`,
    },
    {
      measure: 'follow-up runs (retried)',
      value: `${followUpJobs.jobs} (${followUpJobs.retried}); ${JSON.stringify(followUpJobs.totals)}`,
    },
  ]);
  console.log(`results appended to ${path.relative(process.cwd(), resultsFile)}`);
}

// Until the stack takes over Ctrl-C (it cleans up and exits), exiting is enough: the files go at exit.
const exitOnSignal = () => process.exit(130);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, exitOnSignal);
const running: { stack?: ServiceStack } = {};
let tree: ServiceSnapshot | null = null;
process.once('exit', () => tree && rmSync(tree.dir, { recursive: true, force: true }));
let exitCode = 0;
try {
  tree = snapshotService(args['service-commit']);
  if (args.dist) {
    // The image's mode (Dockerfile): the compiled build, and glibc returning large freed blocks.
    const started = performance.now();
    compileService(tree.dir);
    log(`compiled the service tree in ${seconds(performance.now() - started)} s`);
  }
  await main(tree, await loadService(tree.dir), running);
} catch (error) {
  exitCode = 1;
  log(`FAILED: ${(error as Error).stack ?? String(error)}`);
} finally {
  await running.stack?.cleanup();
}
process.exit(exitCode);
