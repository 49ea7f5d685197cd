/**
 * Shared parts of the fault drills (test/drills): a 20,000-observation dataset with its expected
 * end state computed from the observations alone, a paced intake client that retries what the
 * service refused, the worker as a real subprocess, draining, and the end-state check against
 * Elasticsearch (counts, duplicates, newest fields, denormalized account snapshots, baselines).
 */
import { Client } from '@elastic/elasticsearch';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { mintId } from '../../src/contract/ids.ts';
import { viewRatiosToBaseline } from '../../src/domain/derived.ts';
import { snapshotOf, type AccountRecord } from '../../src/domain/records.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { freePort } from './redis-server.ts';
import { startStack, type Stack } from './stack.ts';

export type Obs = Record<string, any>;

const REAL_ELASTICSEARCH_URL = process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200';
const SHARED_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = new URL('../..', import.meta.url).pathname;

// ---------------------------------------------------------------------------------------------
// The dataset and its expected end state
// ---------------------------------------------------------------------------------------------

/** A last-writer-wins expectation: the newest stamp and its value; `tie` when two differ at it. */
interface Expect<T> {
  t: number;
  v: T;
  tie: boolean;
}

export interface ExpectedPost {
  id: string;
  platformId: string;
  status: Expect<string> | null;
  /** The newest available observation. */
  raw: Expect<Obs> | null;
  /** Per enrichment field. */
  enrichment: Map<string, Expect<unknown>>;
}

export interface ExpectedAccount {
  id: string;
  platformId: string;
  status: Expect<string> | null;
  /** The newest active observation. */
  profile: Expect<Obs> | null;
  enrichment: Map<string, Expect<unknown>>;
}

export interface ExpectedState {
  posts: Map<string, ExpectedPost>;
  accounts: Map<string, ExpectedAccount>;
}

export interface DrillDataset {
  observations: Obs[];
  expected: ExpectedState;
  /** How many observations repeat an entity with a newer, or an older, stamp. */
  newer: number;
  older: number;
}

/** Stable JSON: sorted keys, so equal values compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Obs)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Obs)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function offer<T>(current: Expect<T> | null | undefined, stamp: string, value: T): Expect<T> {
  const t = Date.parse(stamp);
  if (!current || t > current.t) return { t, v: value, tie: false };
  if (t === current.t && canonical(current.v) !== canonical(value)) return { ...current, tie: true };
  return current;
}

const ENRICHMENT_META = new Set(['kind', 'post_platform_id', 'account_platform_id', 'produced_at', 'media']);

/** The end state the observations imply, computed from them alone (not with the service's merge). */
export function expectedStateOf(observations: Obs[]): ExpectedState {
  const posts = new Map<string, ExpectedPost>();
  const accounts = new Map<string, ExpectedAccount>();
  const post = (platformId: string) => {
    const id = mintId('post', platformId);
    let p = posts.get(id);
    if (!p) posts.set(id, (p = { id, platformId, status: null, raw: null, enrichment: new Map() }));
    return p;
  };
  const account = (platformId: string) => {
    const id = mintId('account', platformId);
    let a = accounts.get(id);
    if (!a) accounts.set(id, (a = { id, platformId, status: null, profile: null, enrichment: new Map() }));
    return a;
  };
  for (const o of observations) {
    if (o.kind === 'post') {
      const p = post(o.platform_id);
      p.status = offer(p.status, o.observed_at, o.status);
      if (o.status === 'available') p.raw = offer(p.raw, o.observed_at, o);
    } else if (o.kind === 'account') {
      const a = account(o.platform_id);
      a.status = offer(a.status, o.observed_at, o.status);
      if (o.status === 'active') a.profile = offer(a.profile, o.observed_at, o);
    } else if (o.kind === 'post_enrichment' || o.kind === 'account_enrichment') {
      const target = o.kind === 'post_enrichment' ? post(o.post_platform_id) : account(o.account_platform_id);
      for (const [field, value] of Object.entries(o)) {
        if (ENRICHMENT_META.has(field)) continue;
        target.enrichment.set(field, offer(target.enrichment.get(field), o.produced_at, value));
      }
    }
  }
  return { posts, accounts };
}

/** A small seeded PRNG (mulberry32), so every run shuffles the same way. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const shift = (iso: string, minutes: number) =>
  new Date(Date.parse(iso) + minutes * 60_000).toISOString().replace('.000Z', 'Z');

/**
 * `total` observations: the seed generator's realistic dataset, plus newer and older repeats of
 * many of its entities (post views and captions, account followers and biographies, enrichment
 * summaries, a few posts becoming unavailable), shuffled so that repeats, posts and their
 * accounts and enrichments arrive in any order and in different requests.
 */
export function buildDrillDataset(options: {
  seed: number;
  total?: number;
  posts?: number;
  accounts?: number;
}): DrillDataset {
  const total = options.total ?? 20_000;
  const base: Obs[] = [
    ...generateObservations({ posts: options.posts ?? 8800, accounts: options.accounts ?? 400, seed: options.seed }),
  ];
  const extra: Obs[] = [];
  let newer = 0;
  let older = 0;
  let p = 0;
  let e = 0;
  let a = 0;
  let ae = 0;
  for (const o of base) {
    if (o.kind === 'post' && o.status === 'available') {
      const i = p++;
      if (i % 7 === 0) {
        newer++;
        extra.push({
          ...o,
          observed_at: shift(o.observed_at, 60 + (i % 50)),
          views: (o.views ?? 0) + 1000 + i,
          likes: o.likes + 10,
          caption: `${o.caption} (edited ${i})`,
        });
      }
      if (i % 17 === 3) {
        older++;
        extra.push({ ...o, observed_at: shift(o.observed_at, -90), views: 1, likes: 0, caption: `STALE caption ${i}` });
      }
      if (i % 97 === 5) {
        newer++;
        extra.push({
          kind: 'post',
          platform_id: o.platform_id,
          status: 'unavailable',
          observed_at: shift(o.observed_at, 240),
        });
      }
    } else if (o.kind === 'post_enrichment') {
      const j = e++;
      if (j % 9 === 0) {
        newer++;
        extra.push({
          kind: 'post_enrichment',
          post_platform_id: o.post_platform_id,
          produced_at: shift(o.produced_at, 30),
          content_summary: `updated summary ${j}`,
        });
      }
      if (j % 23 === 4) {
        older++;
        extra.push({
          kind: 'post_enrichment',
          post_platform_id: o.post_platform_id,
          produced_at: shift(o.produced_at, -30),
          content_summary: 'STALE summary',
          topics: ['stale_topic'],
        });
      }
    } else if (o.kind === 'account' && o.status === 'active') {
      const k = a++;
      if (k % 3 === 0) {
        newer++;
        extra.push({
          ...o,
          observed_at: shift(o.observed_at, 180),
          followers_count: o.followers_count + 5000 + k,
          biography: `${o.biography} (updated ${k})`,
        });
      }
      if (k % 5 === 1) {
        older++;
        extra.push({ ...o, observed_at: shift(o.observed_at, -180), followers_count: 1, biography: 'STALE biography' });
      }
    } else if (o.kind === 'account_enrichment') {
      const m = ae++;
      if (m % 4 === 0) {
        newer++;
        extra.push({
          kind: 'account_enrichment',
          account_platform_id: o.account_platform_id,
          produced_at: shift(o.produced_at, 60),
          publishing_summary: `updated publishing summary ${m}`,
        });
      }
    }
  }
  const observations = [...base, ...extra].slice(0, Math.max(base.length, total));
  const random = prng(options.seed);
  for (let i = observations.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [observations[i], observations[j]] = [observations[j]!, observations[i]!];
  }
  return { observations, expected: expectedStateOf(observations), newer, older };
}

// ---------------------------------------------------------------------------------------------
// The service under test
// ---------------------------------------------------------------------------------------------

/** The HTTP API, as a real process (`social-search serve`) listening on loopback. */
export interface ApiProcess {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number;
  readonly logFile: string;
  /** SIGTERM (graceful), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** The worker, as a real process (`social-search worker`). */
export interface WorkerProcess {
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM (graceful), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface Drill {
  name: string;
  stack: Stack;
  /** INDEX_PREFIX and REDIS_PREFIX. */
  prefix: string;
  /** The environment every process of this drill runs with. */
  env: Record<string, string>;
  /** A client of the real Elasticsearch (never through a fault proxy), for checks. */
  es: Client;
  /** A temp folder for logs; removed at close unless the drill failed. */
  dir: string;
  startWorkerProcess(extraEnv?: Record<string, string>): Promise<WorkerProcess>;
  /** Starts an API process on a free port; resolves once it answers `/readyz`. */
  startApi(extraEnv?: Record<string, string>): Promise<ApiProcess>;
  /** Runs `social-search <args>` to completion. */
  cli(
    args: string[],
    extraEnv?: Record<string, string>,
  ): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>;
  /** Registers clean-up work, run (last registered first) by {@link close}. */
  onClose(fn: () => Promise<void>): void;
  /** Keeps the temp folder (logs) for a failed drill. */
  keepLogs(): void;
  close(): Promise<void>;
}

/**
 * Opens a drill: the in-process API (intake and searches, no worker) with unique prefixes,
 * optionally on a fault proxy (`elasticsearchUrl`) or a dedicated Redis (`redisUrl`).
 */
export async function openDrill(
  name: string,
  options: { elasticsearchUrl?: string; redisUrl?: string; env?: Record<string, string> } = {},
): Promise<Drill> {
  const id = randomUUID().slice(0, 8);
  const prefix = `drill-${name}-${id}`;
  const env: Record<string, string> = {
    INDEX_PREFIX: prefix,
    REDIS_PREFIX: prefix,
    ELASTICSEARCH_URL: options.elasticsearchUrl ?? REAL_ELASTICSEARCH_URL,
    REDIS_URL: options.redisUrl ?? SHARED_REDIS_URL,
    EMBEDDINGS: 'off',
    NODE_ENV: 'test',
    ...options.env,
  };
  const dir = mkdtempSync(join(tmpdir(), `drill-${name}-`));
  // ELASTICSEARCH_URL may list the nodes of a cluster (test/cluster).
  const es = new Client({ nodes: REAL_ELASTICSEARCH_URL.split(','), requestTimeout: 60_000 });
  const cleanups: Array<() => Promise<void>> = [];
  const children = new Set<ChildProcess>();
  let keep = false;

  const stack = await startStack(
    name,
    { ...env, LOG_LEVEL: process.env.DRILL_API_LOG_LEVEL ?? 'silent', RATE_LIMIT_SEARCH_PER_MINUTE: '0' },
    { worker: false },
  );

  function spawnCli(args: string[], extraEnv: Record<string, string>, stdout: 'pipe' | WriteStream) {
    const child = spawn(process.execPath, [join(ROOT, 'bin/social-search.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env, LOG_LEVEL: 'info', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    if (stdout !== 'pipe') {
      child.stdout.pipe(stdout, { end: false });
      child.stderr.pipe(stdout, { end: false });
    }
    return child;
  }

  let workers = 0;
  let apis = 0;
  const stopper =
    (child: ChildProcess, exited: Promise<unknown>) =>
    async (graceMs = 30_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(graceMs).then(() => child.kill('SIGKILL'))]);
      await exited;
    };
  const drill: Drill = {
    name,
    stack,
    prefix,
    env,
    es,
    dir,
    async startWorkerProcess(extraEnv = {}) {
      const logFile = join(dir, `worker-${++workers}.log`);
      const log = createWriteStream(logFile);
      const workersBefore = await stack.runtime.queue.getWorkersCount().catch(() => 0);
      const child = spawnCli(['worker'], extraEnv, log);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      // Ready once it says so in its log, or once its queue worker is connected.
      const deadline = Date.now() + 60_000;
      for (;;) {
        await sleep(100);
        if (readFileSync(logFile, 'utf8').includes('"worker running"')) break;
        if ((await stack.runtime.queue.getWorkersCount().catch(() => 0)) > workersBefore) break;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`worker exited at start:\n${readFileSync(logFile, 'utf8')}`);
        if (Date.now() > deadline) throw new Error(`worker did not start:\n${readFileSync(logFile, 'utf8')}`);
      }
      return {
        pid: child.pid!,
        logFile,
        exited,
        kill: (signal) => void child.kill(signal),
        stop: stopper(child, exited),
      };
    },
    async startApi(extraEnv = {}) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const logFile = join(dir, `api-${++apis}.log`);
      const log = createWriteStream(logFile);
      const child = spawnCli(
        ['serve'],
        { HOST: '127.0.0.1', PORT: String(port), PUBLIC_BASE_URL: url, ...extraEnv },
        log,
      );
      const exited = new Promise<unknown>((resolve) => child.once('exit', resolve));
      const deadline = Date.now() + 60_000;
      for (;;) {
        await sleep(200);
        const ready = await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) break;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`API exited at start:\n${readFileSync(logFile, 'utf8')}`);
        if (Date.now() > deadline) throw new Error(`API did not become ready:\n${readFileSync(logFile, 'utf8')}`);
      }
      return { url, pid: child.pid!, logFile, stop: stopper(child, exited) };
    },
    async cli(args, extraEnv = {}) {
      const started = performance.now();
      const child = spawnCli(args, extraEnv, 'pipe');
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      return { code, stdout, stderr, ms: Math.round(performance.now() - started) };
    },
    onClose(fn) {
      cleanups.push(fn);
    },
    keepLogs() {
      keep = true;
    },
    async close() {
      const quietly = async (what: string, fn: () => Promise<unknown>) => {
        try {
          await Promise.race([fn(), sleep(30_000).then(() => Promise.reject(new Error('timed out')))]);
        } catch (error) {
          console.warn(`[${name}] clean-up: ${what}: ${(error as Error).message}`);
        }
      };
      for (const child of children) child.kill('SIGKILL');
      for (const fn of cleanups.reverse()) await quietly('registered clean-up', fn);
      await quietly('api', () => stack.app.close());
      await quietly('queue', () => stack.runtime.queue.obliterate({ force: true }));
      await quietly('indices', () => stack.runtime.indexAdmin.destroy());
      // Also directly on the real cluster, in case the service's client could not reach it.
      await quietly('indices (direct)', () => destroyIndices(es, prefix));
      await quietly('redis keys', () => deleteKeys(env.REDIS_URL!, prefix));
      await quietly('runtime', () => stack.runtime.close());
      await es.close().catch(() => undefined);
      if (keep || process.env.DRILL_KEEP_LOGS === '1') console.warn(`[${name}] logs kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
  return drill;
}

async function destroyIndices(es: Client, prefix: string) {
  const indices = Object.keys(
    await es.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all', allow_no_indices: true }),
  );
  if (indices.length > 0) await es.indices.delete({ index: indices });
  for (const name of ['posts', 'accounts'])
    await es.indices.deleteIndexTemplate({ name: `${prefix}-${name}` }).catch(() => undefined);
  await es.cluster.deleteComponentTemplate({ name: `${prefix}-shared-settings` }).catch(() => undefined);
}

async function deleteKeys(url: string, prefix: string) {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Intake, queue, draining
// ---------------------------------------------------------------------------------------------

export interface SendReport {
  requests: number;
  sent: number;
  /** Requests the service refused (503 while Redis was down, …) and that were sent again. */
  retried: number;
  statuses: Record<number, number>;
  ms: number;
}

/**
 * Sends observations through the HTTP intake (202, no wait) in requests of `requestSize`, as a
 * pipeline would: a refused request (5xx, or no answer) is sent again after a pause. With
 * `maxQueuedJobs`, waits before each request until the backlog is below it, so the intake is
 * spread over the processing instead of all queued in the first second.
 */
export async function sendObservations(
  stack: Stack,
  observations: Obs[],
  options: {
    requestSize?: number;
    maxQueuedJobs?: number;
    deadlineMs?: number;
    onRequest?: (sent: number) => void;
  } = {},
): Promise<SendReport> {
  const size = options.requestSize ?? 2500;
  const deadline = Date.now() + (options.deadlineMs ?? 300_000);
  const report: SendReport = { requests: 0, sent: 0, retried: 0, statuses: {}, ms: 0 };
  const started = performance.now();
  for (let i = 0; i < observations.length; i += size) {
    const chunk = observations.slice(i, i + size);
    if (options.maxQueuedJobs !== undefined) {
      // A backlog that cannot be read (Redis down) does not hold the request back: it is sent, refused, and sent again.
      while ((await backlog(stack).catch(() => 0)) >= options.maxQueuedJobs) {
        if (Date.now() > deadline) throw new Error('intake: backlog never went down');
        await sleep(100);
      }
    }
    for (;;) {
      if (Date.now() > deadline)
        throw new Error(
          `intake: request ${report.requests + 1} not accepted before the deadline (${JSON.stringify(report.statuses)})`,
        );
      let status: number;
      let body: any = null;
      try {
        const response = await stack.ingest(chunk, { wait: false });
        status = response.statusCode;
        body = response.body;
      } catch {
        status = 0;
      }
      report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      if (status === 202) {
        if (body.accepted !== chunk.length || body.rejected.length > 0) {
          throw new Error(`intake rejected observations: ${JSON.stringify(body.rejected.slice(0, 3))}`);
        }
        break;
      }
      if (status !== 0 && status < 500) throw new Error(`intake answered ${status}: ${JSON.stringify(body)}`);
      report.retried++;
      await sleep(250);
    }
    report.requests++;
    report.sent += chunk.length;
    options.onRequest?.(report.sent);
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}

/** Jobs queued but not yet running. */
async function backlog(stack: Stack): Promise<number> {
  const c = await stack.runtime.jobCounts('waiting', 'delayed', 'prioritized');
  return (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
}

export async function jobCounts(stack: Stack) {
  // A paused queue's jobs count as waiting. Every queue that writes: follow-up runs count too.
  return stack.runtime.jobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
}

/** How many job runs were repeats (a failed attempt retried, or a stalled job run again), from the completed jobs. */
export async function rerunsOf(stack: Stack): Promise<number> {
  const jobs = await stack.runtime.queue.getJobs(['completed'], 0, -1);
  return jobs.reduce((sum, job) => sum + Math.max(0, (job.attemptsStarted ?? 1) - 1), 0);
}

/** Waits until `predicate(counts)` holds (Redis errors while it is down are waited out). */
export async function waitForCounts(
  stack: Stack,
  predicate: (c: Record<string, number>) => boolean,
  timeoutMs: number,
  what: string,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await jobCounts(stack).catch(() => null);
    if (c && predicate(c)) return c;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(c)}`);
    await sleep(100);
  }
}

/**
 * Waits until nothing is waiting (or paused), running or delayed, failing at once when a job landed
 * in the failed set (with its reason: an observation left for an operator is a failed drill).
 */
export async function drain(stack: Stack, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await jobCounts(stack).catch(() => null);
    if (c && (c.failed ?? 0) > 0) {
      const failed = (await Promise.all(stack.runtime.queues.map((q) => q.getFailed(0, 5)))).flat();
      throw new Error(
        `${c.failed} job(s) failed for good: ${failed.map((j) => `${j.id}: ${j.failedReason} (attempts ${j.attemptsMade}, started ${j.attemptsStarted})`).join('; ')}`,
      );
    }
    if (c && (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0) return c;
    if (Date.now() > deadline) throw new Error(`queue not drained within ${timeoutMs} ms: ${JSON.stringify(c)}`);
    await sleep(200);
  }
}

// ---------------------------------------------------------------------------------------------
// The end-state check
// ---------------------------------------------------------------------------------------------

export interface StateReport {
  posts: { expected: number; count: number; scanned: number; indices: string[] };
  accounts: { expected: number; count: number; scanned: number; indices: string[] };
  /** Expected entities with no document. */
  missing: string[];
  /** Documents of no expected entity. */
  unexpected: string[];
  /** IDs present more than once behind an alias. */
  duplicates: string[];
  /** Fields that do not hold their newest observed value: `id field: stored ≠ expected`. */
  stale: string[];
  /** Posts whose copy of a linked account is not that account's current state. */
  staleSnapshots: string[];
  /** Posts whose view_ratio_to_account_baseline is not the one their author's posts imply. */
  wrongBaselines: string[];
  /** Registers skipped because two observations carry the same stamp with different content. */
  ties: number;
}

/** Every document behind `alias`, by ID (an ID behind the alias twice is listed twice). */
async function scanRecords(es: Client, alias: string): Promise<Array<{ id: string; index: string; record: any }>> {
  const out: Array<{ id: string; index: string; record: any }> = [];
  const pit = await es.openPointInTime({ index: alias, keep_alive: '2m' });
  try {
    let after: any[] | undefined;
    for (;;) {
      const page = await es.search<{ record: any }>({
        pit: { id: pit.id, keep_alive: '2m' },
        sort: [{ _shard_doc: 'asc' }],
        size: 2000,
        track_total_hits: false,
        _source: ['record'],
        ...(after ? { search_after: after } : {}),
      });
      const hits = page.hits.hits;
      if (hits.length === 0) break;
      for (const h of hits) out.push({ id: h._id!, index: h._index, record: h._source?.record });
      after = hits.at(-1)!.sort;
    }
  } finally {
    await es.closePointInTime({ id: pit.id }).catch(() => undefined);
  }
  return out;
}

async function aliasTargets(es: Client, alias: string): Promise<string[]> {
  return Object.keys(await es.indices.getAlias({ name: alias })).sort();
}

const RAW_FIELDS = ['views', 'likes', 'comments', 'caption', 'posted_at', 'author_platform_id'] as const;
const PROFILE_FIELDS = ['followers_count', 'handle', 'biography', 'is_private'] as const;

/** Compares what Elasticsearch holds for `prefix` with the expected state. */
export async function checkState(es: Client, prefix: string, expected: ExpectedState): Promise<StateReport> {
  const postsAlias = `${prefix}-posts`;
  const accountsAlias = `${prefix}-accounts`;
  await es.indices.refresh({ index: [postsAlias, accountsAlias] });
  const [postDocs, accountDocs] = await Promise.all([scanRecords(es, postsAlias), scanRecords(es, accountsAlias)]);
  const report: StateReport = {
    posts: {
      expected: expected.posts.size,
      count: (await es.count({ index: postsAlias })).count,
      scanned: postDocs.length,
      indices: await aliasTargets(es, postsAlias),
    },
    accounts: {
      expected: expected.accounts.size,
      count: (await es.count({ index: accountsAlias })).count,
      scanned: accountDocs.length,
      indices: await aliasTargets(es, accountsAlias),
    },
    missing: [],
    unexpected: [],
    duplicates: [],
    stale: [],
    staleSnapshots: [],
    wrongBaselines: [],
    ties: 0,
  };
  const byId = (docs: typeof postDocs) => {
    const map = new Map<string, any>();
    for (const d of docs) {
      if (map.has(d.id)) report.duplicates.push(`${d.id} (also in ${d.index})`);
      map.set(d.id, d.record);
    }
    return map;
  };
  const posts = byId(postDocs);
  const accounts = byId(accountDocs);
  for (const id of posts.keys()) if (!expected.posts.has(id)) report.unexpected.push(id);
  for (const id of accounts.keys()) if (!expected.accounts.has(id)) report.unexpected.push(id);

  const stale = (id: string, field: string, stored: unknown, wanted: unknown) => {
    if (canonical(stored) !== canonical(wanted))
      report.stale.push(`${id} ${field}: stored ${short(stored)} ≠ newest ${short(wanted)}`);
  };
  const register = <T>(
    id: string,
    field: string,
    stored: { t: string; v: unknown } | null | undefined,
    want: Expect<T> | null,
    value: (v: T) => unknown = (v) => v,
  ) => {
    if (want === null) {
      if (stored) report.stale.push(`${id} ${field}: stored ${short(stored)}, expected none`);
      return;
    }
    if (want.tie) {
      report.ties++;
      return;
    }
    if (!stored) {
      report.stale.push(`${id} ${field}: missing, newest is ${new Date(want.t).toISOString()}`);
      return;
    }
    stale(id, `${field} stamp`, Date.parse(stored.t), want.t);
    stale(id, field, stored.v, value(want.v));
  };

  for (const [id, want] of expected.posts) {
    const record = posts.get(id);
    if (!record) {
      report.missing.push(`post ${id} (${want.platformId})`);
      continue;
    }
    register(id, 'status', record.status, want.status);
    if (want.raw && !want.raw.tie) {
      register(id, 'raw', record.raw ? { t: record.raw.t, v: pick(record.raw.v, RAW_FIELDS) } : null, want.raw, (o) =>
        pick(o, RAW_FIELDS),
      );
    } else register(id, 'raw', record.raw ? { t: record.raw.t, v: null } : null, want.raw, () => null);
    for (const [field, w] of want.enrichment) register(id, `enrichment.${field}`, record.enrichment?.[field], w);
  }
  for (const [id, want] of expected.accounts) {
    const record = accounts.get(id);
    if (!record) {
      report.missing.push(`account ${id} (${want.platformId})`);
      continue;
    }
    register(id, 'status', record.status, want.status);
    register(
      id,
      'profile',
      record.profile ? { t: record.profile.t, v: pick(record.profile.v, PROFILE_FIELDS) } : null,
      want.profile,
      (o) => pick(o, PROFILE_FIELDS),
    );
    for (const [field, w] of want.enrichment) register(id, field, record[field], w);
  }

  // Denormalized account data follows every account change: each post's copy of each linked
  // account is that account's current state as posts keep it (counters coarse, no metrics:
  // src/domain/volatile-facts.ts).
  for (const [id, record] of posts) {
    const raw = record.raw?.v;
    if (!raw) continue;
    const linked = new Set<string>([
      raw.author_platform_id,
      ...(raw.coauthor_platform_ids ?? []),
      ...(raw.audio?.attribution_account_platform_id ? [raw.audio.attribution_account_platform_id] : []),
    ]);
    for (const platformId of linked) {
      const accountId = mintId('account', platformId);
      const account = accounts.get(accountId);
      if (!account) continue;
      const copy = record.accounts?.[accountId];
      const snapshot = snapshotOf(account as AccountRecord);
      const current = {
        status: snapshot.status,
        profile: snapshot.profile,
        niches: snapshot.niches,
        publishing_languages: snapshot.publishing_languages,
      };
      const held = copy
        ? {
            status: copy.status,
            profile: copy.profile,
            niches: copy.niches,
            publishing_languages: copy.publishing_languages,
          }
        : null;
      if (canonical(held) !== canonical(current)) {
        report.staleSnapshots.push(
          `${id} copy of ${accountId}: followers ${copy?.profile?.followers_count ?? '∅'} (account: ${current.profile?.followers_count ?? '∅'}), status ${copy?.status ?? '∅'} (account: ${current.status ?? '∅'})`,
        );
      }
    }
  }

  // view_ratio_to_account_baseline, from the expected posts of each author (contract §4 formula).
  const byAuthor = new Map<string, Array<{ id: string; postedAt: string; views: number | null }>>();
  for (const [id, want] of expected.posts) {
    if (want.status?.v !== 'available' || !want.raw) continue;
    const author = mintId('account', want.raw.v.author_platform_id);
    const list = byAuthor.get(author) ?? [];
    list.push({
      id,
      postedAt: new Date(Date.parse(want.raw.v.posted_at)).toISOString(),
      views: want.raw.v.views ?? null,
    });
    byAuthor.set(author, list);
  }
  for (const list of byAuthor.values()) {
    for (const [id, ratio] of viewRatiosToBaseline(list)) {
      const stored = posts.get(id)?.view_ratio_to_account_baseline ?? null;
      const same =
        ratio === null
          ? stored === null
          : stored !== null && Math.abs(stored - ratio) <= 1e-9 * Math.max(1, Math.abs(ratio));
      if (!same) report.wrongBaselines.push(`${id}: stored ${stored}, expected ${ratio}`);
    }
  }
  return report;
}

function pick(o: Obs, fields: readonly string[]): Obs {
  const out: Obs = {};
  for (const f of fields) out[f] = f === 'posted_at' && typeof o[f] === 'string' ? Date.parse(o[f]) : (o[f] ?? null);
  return out;
}

function short(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
}

/** The problems of a report, for an assertion message (at most `max` of each kind). */
export function problemsOf(report: StateReport, max = 10): string[] {
  const out: string[] = [];
  const list = (label: string, items: string[]) => {
    if (items.length > 0) out.push(`${items.length} ${label}:\n    ${items.slice(0, max).join('\n    ')}`);
  };
  if (report.posts.count !== report.posts.expected)
    out.push(`posts: ${report.posts.count} documents, expected ${report.posts.expected}`);
  if (report.accounts.count !== report.accounts.expected)
    out.push(`accounts: ${report.accounts.count} documents, expected ${report.accounts.expected}`);
  if (report.posts.scanned !== report.posts.count || report.accounts.scanned !== report.accounts.count)
    out.push(`_count and scan disagree: ${JSON.stringify(report)}`);
  if (report.posts.indices.length !== 1) out.push(`posts alias points at ${report.posts.indices.join(', ')}`);
  if (report.accounts.indices.length !== 1) out.push(`accounts alias points at ${report.accounts.indices.join(', ')}`);
  list('missing', report.missing);
  list('unexpected', report.unexpected);
  list('duplicated', report.duplicates);
  list('stale fields', report.stale);
  list('stale account copies in posts', report.staleSnapshots);
  list('wrong baselines', report.wrongBaselines);
  return out;
}

/** One line per drill, for the log. */
export function summary(name: string, facts: Record<string, unknown>): void {
  console.log(
    `\n[drill ${name}] ${Object.entries(facts)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ')}\n`,
  );
}
