/**
 * Memory under sustained load (bench/memory.md, "Memory under sustained load").
 *
 *   npm run bench:soak -- --minutes 15            # the reported run
 *   npm run bench:soak -- --minutes 3 --sample-seconds 10   # a quick check
 *
 * Starts one `social-search serve` and one `social-search worker` (children of this process, the
 * model loaded in both, under a fresh prefix), seeds a demo dataset through the intake, then drives
 * the mixed load of mix.ts (post searches with and without a query, account searches, GETs, intake
 * batches) at a fixed rate (or `--rate max`) and every `--sample-seconds` records, per process:
 * VmRSS, its anonymous and file-backed parts and thread count (/proc), and what the process says of
 * itself (V8 heap, external, ArrayBuffers; memory-probe.mjs). Native memory = anonymous RSS − V8
 * heap − external: onnxruntime, glibc arenas, thread stacks.
 *
 * Options: --minutes (15), --rate (300, or max), --connections (16), --sample-seconds (30),
 * --posts (seeded posts, 3000), --intake-batch (10 observations), --seed (7), --label,
 * --intake-posts N with --intake-every S (5): instead of the mix's share of intake batches, the next
 * N new posts' observations in one request every S seconds, beside the reads (issue 56's soak: 8
 * search clients and 200 new posts every 5 s, `--connections 8 --rate max --intake-posts 200`),
 * --env NAME=VALUE (repeatable: service environment, e.g. MALLOC_ARENA_MAX=4 or EMBEDDINGS=off),
 * --node-arg ARG (repeatable: node options of both processes), --dist (the compiled build, as the
 * image runs it), --service-commit REV (measure another commit, e.g. the one before a change),
 * --launcher bin|node (`bin/social-search` as `npx social-search` starts it, the default when
 * the service has it; or `node bin/social-search.js`).
 * Prints a table; writes bench/results/soak-<label>-<run>.json. Deletes everything it made.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { generateObservations } from '../../src/seed/generator.ts';
import { cpuSeconds } from '../lib/processes.ts';
import { startLoad } from '../lib/load.ts';
import { lastProbe, log, REPO_ROOT, startStack, type ServiceStack, type StackProcess } from '../lib/service-stack.ts';
import { readTargets, seedThroughIntake } from '../lib/stack-data.ts';
import { compileService, snapshotService } from '../lib/service-snapshot.ts';
import { cli, numberArg } from '../lib/args.ts';
import { createMix, DEFAULT_WEIGHTS } from './mix.ts';
import { MODEL_DIR } from '../lib/model.ts';
import { writeResult } from '../lib/measure.ts';

const args = cli({
  options: {
    minutes: { type: 'number', default: 15, min: 0.1 },
    // Requests per second overall, or `max`: as fast as the connections go.
    rate: { type: 'string', default: '300' },
    connections: { type: 'int', default: 16, min: 1 },
    'sample-seconds': { type: 'number', default: 30, min: 1 },
    posts: { type: 'int', default: 3000, min: 1 },
    'intake-batch': { type: 'int', default: 10, min: 1 },
    'intake-posts': { type: 'int', default: 0, min: 0 },
    'intake-every': { type: 'number', default: 5, min: 0.1 },
    seed: { type: 'int', default: 7, min: 0 },
    label: { type: 'string', default: 'soak' },
    env: { type: 'list' },
    'node-arg': { type: 'list' },
    dist: { type: 'boolean' },
    'service-commit': { type: 'string' },
    launcher: { type: 'string', choices: ['bin', 'node'] },
  },
});
const MINUTES = args.minutes;
const RATE = args.rate === 'max' ? null : numberArg('--rate', args.rate, { type: 'number', min: 1 });
const CONNECTIONS = args.connections;
const SAMPLE_S = args['sample-seconds'];
const POSTS = args.posts;
const SEED = args.seed;
const MiB = 1024 * 1024;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The service environment: production mode, the model, a rate limit that counts but never trips, and --env. */
function serviceEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: 'production',
    SIGNING_SECRET: randomBytes(32).toString('hex'),
    // Both budgets (searches, reads) count every request in Redis, as in production, but never trip.
    RATE_LIMIT_SEARCH_PER_MINUTE: '100000000',
    // One key stands for every customer: no per-key share of the node either.
    SEARCH_IN_FLIGHT_PER_KEY: '0',
    RATE_LIMIT_READ_PER_MINUTE: '100000000',
    MODEL_DIR,
    EMBEDDINGS: 'on',
  };
  if (args.dist) env['SOCIAL_SEARCH_DIST'] = '1';
  for (const pair of args.env) {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env ${pair}: expected NAME=VALUE`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** /proc/<pid>/status: resident memory, its anonymous and file-backed parts (MiB), threads. */
function procStatus(pid: number): { rss: number; anon: number; file: number; threads: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return {
      rss: round(field('VmRSS') / 1024),
      anon: round(field('RssAnon') / 1024),
      file: round(field('RssFile') / 1024),
      threads: field('Threads'),
    };
  } catch {
    return null;
  }
}

/** One process at one sample. */
interface ProcessSample {
  rss: number;
  anon: number;
  file: number;
  threads: number;
  heap_total: number | null;
  heap_used: number | null;
  external: number | null;
  array_buffers: number | null;
  /** Anonymous RSS − V8 heap − external: what neither V8 nor ArrayBuffers account for. */
  native: number | null;
  cpu_s: number | null;
}

function sampleProcess(proc: StackProcess): ProcessSample | null {
  const status = procStatus(proc.child.pid);
  if (!status) return null;
  const probe = lastProbe(proc);
  const mib = (key: string) => (probe && typeof probe[key] === 'number' ? round(probe[key] / MiB) : null);
  const heapTotal = mib('heap_total');
  const external = mib('external');
  return {
    ...status,
    heap_total: heapTotal,
    heap_used: mib('heap_used'),
    external,
    array_buffers: mib('array_buffers'),
    native: heapTotal !== null && external !== null ? round(status.anon - heapTotal - external) : null,
    cpu_s: cpuSeconds(proc.child.pid),
  };
}

interface Row {
  t_s: number;
  api: ProcessSample | null;
  worker: ProcessSample | null;
  requests_per_s: number;
  non2xx: number;
  errors: number;
  queues: Record<string, number>;
}

function printRow(row: Row): void {
  const p = (s: ProcessSample | null) =>
    s
      ? `${s.rss.toFixed(0).padStart(4)} (heap ${String(s.heap_total ?? '?').padStart(5)}/${String(s.heap_used ?? '?').padStart(5)} ext ${String(s.external ?? '?').padStart(5)} native ${String(s.native ?? '?').padStart(5)})`
      : '—';
  process.stdout.write(
    `${String(row.t_s).padStart(5)} s  api ${p(row.api)}  worker ${p(row.worker)}  ${String(row.requests_per_s).padStart(6)} req/s  non2xx ${row.non2xx} errors ${row.errors}  queued ${JSON.stringify(row.queues)}\n`,
  );
}

/**
 * --intake-posts: every --intake-every seconds, the next observations up to N new posts in one
 * intake request (one at a time: a slow answer delays the next, it does not pile them up).
 */
function steadyIntake(stack: ServiceStack, observations: Iterator<Record<string, unknown>>) {
  const totals = { requests: 0, posts: 0, observations: 0, failed: 0 };
  const posts = args['intake-posts'];
  if (posts === 0) return { totals, stop: () => undefined };
  let busy = false;
  const send = async () => {
    const lines: string[] = [];
    let batchPosts = 0;
    while (batchPosts < posts) {
      const next = observations.next();
      if (next.done) break;
      if (next.value['kind'] === 'post') batchPosts++;
      lines.push(JSON.stringify(next.value));
    }
    if (lines.length === 0) return;
    const response = await fetch(`${stack.apis[0]!.url}/internal/v1/social/observations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
      body: `${lines.join('\n')}\n`,
    }).catch(() => null);
    totals.requests++;
    if (response?.ok) {
      totals.posts += batchPosts;
      totals.observations += lines.length;
    } else totals.failed++;
    await response?.arrayBuffer().catch(() => undefined);
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void send().finally(() => (busy = false));
  }, args['intake-every'] * 1000);
  return { totals, stop: () => clearInterval(timer) };
}

async function main(): Promise<void> {
  if (!existsSync(path.join(MODEL_DIR, 'config.json')) && !args.env.includes('EMBEDDINGS=off'))
    throw new Error(`no model at ${MODEL_DIR} (set MODEL_DIR)`);
  const root = args['service-commit'] ? snapshotService(args['service-commit']).dir : REPO_ROOT;
  if (args.dist) {
    log('compiling the service (npm run build)…');
    compileService(root);
  }
  const env = serviceEnv();
  const launcher = args.launcher === 'bin' || args.launcher === 'node' ? args.launcher : undefined;
  const dropSnapshot = () => root !== REPO_ROOT && rmSync(root, { recursive: true, force: true });
  const stack: ServiceStack = await startStack({
    label: args.label,
    apis: 1,
    worker: true,
    env,
    nodeArgs: args['node-arg'],
    probeIntervalMs: 5000,
    root,
    ...(launcher ? { launcher } : {}),
  }).catch((error: unknown) => {
    dropSnapshot();
    throw error;
  });
  // Interrupted: the stack cleans itself up; the snapshot of another commit goes too.
  process.once('exit', () => void dropSnapshot());
  try {
    const api = stack.apis[0]!;
    const worker = stack.worker!;
    log(`prefix ${stack.prefix}; API ${api.url} (pid ${api.child.pid}), worker pid ${worker.child.pid}`);
    // One dataset: its beginning is the seed, the rest arrives through the mix's intake batches.
    const observations = generateObservations({
      posts: POSTS + 200_000,
      accounts: Math.max(10, Math.round(POSTS / 5)),
      seed: SEED,
    });
    let t = performance.now();
    const seeded = await seedThroughIntake(stack, observations, POSTS);
    log(
      `seeded ${seeded.observations} observations (${seeded.posts} posts) in ${round((performance.now() - t) / 1000)} s`,
    );
    const targets = await readTargets(stack);
    log(`targets: ${targets.posts.length} posts, ${targets.accounts.length} accounts`);
    const idle = { api: sampleProcess(api), worker: sampleProcess(worker) };
    const mix = createMix({
      targets,
      observations,
      seed: SEED,
      intakeBatch: args['intake-batch'],
      ...(args['intake-posts'] > 0 ? { weights: { ...DEFAULT_WEIGHTS, intake: 0 } } : {}),
    });
    const intake = steadyIntake(stack, observations);
    const load = startLoad({
      urls: [api.url],
      connections: CONNECTIONS,
      rate: RATE,
      durationS: Math.round(MINUTES * 60),
      headers: { authorization: `Bearer ${stack.key}` },
      next: mix,
    });

    const rows: Row[] = [];
    t = performance.now();
    let last = { responses: 0, at: t };
    const sample = async () => {
      const now = performance.now();
      const progress = load.progress();
      const row: Row = {
        t_s: Math.round((now - t) / 1000),
        api: sampleProcess(api),
        worker: sampleProcess(worker),
        requests_per_s: round((progress.responses - last.responses) / ((now - last.at) / 1000)),
        non2xx: progress.non2xx,
        errors: progress.errors,
        queues: await stack.queueDepth().catch(() => ({})),
      };
      last = { responses: progress.responses, at: now };
      rows.push(row);
      printRow(row);
    };
    const timer = setInterval(() => void sample(), SAMPLE_S * 1000);
    const result = await Promise.race([load.done, stack.failure]).finally(() => {
      clearInterval(timer);
      intake.stop();
    });
    await sample();

    const summary = {
      date: new Date().toISOString(),
      label: args.label,
      options: {
        minutes: MINUTES,
        rate: RATE ?? 'max',
        connections: CONNECTIONS,
        sample_s: SAMPLE_S,
        posts: POSTS,
        seed: SEED,
        dist: args.dist,
        service_commit: args['service-commit'] ?? null,
        launcher: launcher ?? 'default',
        env: args.env,
        node_args: args['node-arg'],
        intake_posts: args['intake-posts'],
        intake_every_s: args['intake-every'],
      },
      seeded,
      targets: { posts: targets.posts.length, accounts: targets.accounts.length },
      idle,
      load: result,
      steady_intake: intake.totals,
      rows,
    };
    const file = writeResult(`soak-${args.label}-${stack.prefix.split('-').at(-1)}.json`, summary);
    process.stdout.write(`\nidle before load: api ${idle.api?.rss} MiB, worker ${idle.worker?.rss} MiB\n`);
    process.stdout.write(
      `load: ${result.requests} responses in ${result.duration_s} s (${result.requests_per_s}/s), non2xx ${result.non2xx}, errors ${result.errors} (timeouts ${result.timeouts}), p50 ${result.latency.p50_ms} ms, p99 ${result.latency.p99_ms} ms\n`,
    );
    for (const [kind, k] of Object.entries(result.kinds))
      process.stdout.write(
        `  ${kind.padEnd(16)} ${String(k.requests).padStart(7)}  p50 ${k.p50_ms} ms  p99 ${k.p99_ms} ms  ${JSON.stringify(k.statuses)}\n`,
      );
    if (args['intake-posts'] > 0)
      process.stdout.write(
        `steady intake: ${intake.totals.posts} posts in ${intake.totals.requests} requests, ${intake.totals.failed} failed\n`,
      );
    process.stdout.write(`results: ${path.relative(REPO_ROOT, file)}\n`);
    // Refused requests (a 429 from a budget that tripped, a 503) are cheap answers: the memory and
    // latency of such a run do not describe the load it meant to apply.
    if (result.non2xx > 0 || result.errors > 0 || intake.totals.failed > 0)
      throw new Error(
        `${result.non2xx} answers were not 2xx and ${result.errors} requests failed: this run does not measure the intended load`,
      );
  } finally {
    await stack.cleanup();
    dropSnapshot();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`soak failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
