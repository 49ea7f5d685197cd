/**
 * A service stack for benches that load it from outside: `social-search serve` (one or more API
 * nodes) and `social-search worker` as child processes of the bench, under a fresh INDEX_PREFIX /
 * REDIS_PREFIX on the shared Elasticsearch and Redis, as an operator would run them. Everything it
 * creates (indices, templates, Redis keys, processes) goes at {@link ServiceStack.cleanup}.
 *
 * The other shape, one API node inside the bench's own process, is in-process-api.ts.
 *
 * Elasticsearch: `ELASTICSEARCH_URLS` (comma-separated, a cluster's nodes) or `ELASTICSEARCH_URL`;
 * the service processes get them all as ELASTICSEARCH_URL and the rest of the environment as is.
 */
import { Client } from '@elastic/elasticsearch';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createIndexAdmin } from '../../src/engine/elasticsearch/admin/index-admin.ts';
import { createProducer, INDEX_WRITING_QUEUES, type Producer, type QueueName } from '../../src/queues/registry.ts';
import { engineCpuMs } from './engine-cpu.ts';
import { cpuSeconds, machineBusySeconds, RssSampler, startChild, type ServiceChild } from './processes.ts';
import { freePort } from './ports.ts';
import { REPO_ROOT } from './service-snapshot.ts';

export { REPO_ROOT };
const PROBE = path.join(REPO_ROOT, 'bench/soak/memory-probe.mjs');

/** The Elasticsearch nodes benches talk to (raw sides, cleanup), from the environment. */
export function elasticsearchUrls(): string[] {
  const list = process.env['ELASTICSEARCH_URLS'] ?? process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200';
  return list
    .split(',')
    .map((u) => u.trim().replace(/\/+$/, ''))
    .filter(Boolean);
}

export const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** One service process and the file its memory probe writes (see memory-probe.mjs). */
export interface StackProcess {
  child: ServiceChild;
  probeFile: string;
}

/** An API node: its process and base URL. */
export interface StackApi extends StackProcess {
  url: string;
}

/** What {@link startStack} starts. */
export interface StackOptions {
  /** Names the prefix and log files: `bench-<label>-<run>`. */
  label: string;
  apis: number;
  worker: boolean;
  /** Service environment on top of the bench's own (e.g. MODEL_DIR, EMBEDDINGS, MALLOC_ARENA_MAX). */
  env: NodeJS.ProcessEnv;
  /** API node `index`'s on top of `env` (e.g. API_ROUTES: an intake node apart). */
  apiEnv?: (index: number) => NodeJS.ProcessEnv;
  /** The worker's on top of `env` (e.g. the model while the API has none; NODE_OPTIONS of its own). */
  workerEnv?: NodeJS.ProcessEnv;
  /** Extra `node` options of the service processes (e.g. `--max-old-space-size=160`). */
  nodeArgs?: string[];
  /** The worker's on top of `nodeArgs` (flags NODE_OPTIONS refuses, e.g. `--cpu-prof`). */
  workerNodeArgs?: string[];
  /** Every API node's on top of `nodeArgs` (as `workerNodeArgs`). */
  apiNodeArgs?: string[];
  /** Where the service runs from (a snapshot of another commit); default this checkout. */
  root?: string;
  /**
   * How `serve` and `worker` start: `bin`, through the `bin/social-search` launcher as `npx
   * social-search` runs them (its process defaults included; node options go to NODE_OPTIONS),
   * or `node bin/social-search.js` (none). Default `bin` when the root has the launcher.
   */
  launcher?: 'bin' | 'node';
  /**
   * Run on this existing prefix (a loaded index, e.g. the scaling table's): its indices are kept
   * at cleanup, only the stack's Redis keys are deleted.
   */
  existingPrefix?: string;
  /** How often the memory probe samples, ms (0: no probe). */
  probeIntervalMs?: number;
  /** How often each process's resident memory is read from /proc, from its start on (none: not read). */
  rssIntervalMs?: number;
  /** Leave the indices (the raw side's too) and Redis keys in place at cleanup. */
  keep?: boolean;
  /** Wait for `/readyz` (model loaded) up to this long. */
  readyTimeoutMs?: number;
}

/** A running stack. */
export interface ServiceStack {
  /** Names this run in the prefixes. */
  run: string;
  prefix: string;
  /** For a raw side's indices beside the service's (`bench-<label>-raw-<run>`), deleted at cleanup. */
  rawPrefix: string;
  /** A folder for the run's files (datasets, bulk bodies), removed at cleanup. */
  scratch: string;
  apis: StackApi[];
  worker: StackProcess | null;
  /** A key with the `search` and `ingest` scopes. */
  key: string;
  es: Client;
  redis: Redis;
  queues: { [N in (typeof INDEX_WRITING_QUEUES)[number]]: Producer<N> };
  /** Resident memory of every process (with {@link StackOptions.rssIntervalMs}). */
  rss: RssSampler | null;
  /** Jobs not yet done (waiting, active, delayed, prioritized) per index-writing queue. */
  queueDepth(): Promise<Record<QueueName, number>>;
  /**
   * Waits until no index-writing queue (or none of `queues`) holds a job, then refreshes the
   * stack's indices: every write is visible.
   */
  drained(timeoutMs: number, options?: { what?: string; queues?: QueueName[] }): Promise<void>;
  /** Rejects as soon as a service process exits unasked, with its last output. */
  failure: Promise<never>;
  /** Stops one of the stack's processes (e.g. the worker once the seed is indexed). */
  stop(proc: StackProcess): Promise<void>;
  cleanup(): Promise<void>;
}

/** Polls `check` until it is true. */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Starts the stack; on any failure what was started is cleaned up before the error propagates. */
export async function startStack(options: StackOptions): Promise<ServiceStack> {
  const run = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const prefix = options.existingPrefix ?? `bench-${options.label}-${run}`;
  const rawPrefix = `bench-${options.label}-raw-${run}`;
  const logDir = path.join(REPO_ROOT, 'bench/results');
  const scratch = path.join(REPO_ROOT, '.scratch', prefix);
  mkdirSync(logDir, { recursive: true });
  mkdirSync(scratch, { recursive: true });
  const root = options.root ?? REPO_ROOT;
  const bin = path.join(root, 'bin/social-search.js');
  const launcher = options.launcher ?? (existsSync(path.join(root, 'bin/social-search')) ? 'bin' : 'node');
  const nodeArgs = options.nodeArgs ?? [];
  // The services get every node, as an operator configures them (the client spreads requests over them).
  const esUrl = elasticsearchUrls().join(',');
  const es = new Client({ nodes: elasticsearchUrls(), requestTimeout: 600_000 });
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const queues = INDEX_WRITING_QUEUES.map((name) => createProducer(name, { connection: redis, prefix }));
  const byName = Object.fromEntries(queues.map((q) => [q.name, q])) as ServiceStack['queues'];
  const rss = options.rssIntervalMs ? new RssSampler([], options.rssIntervalMs) : null;
  const children: ServiceChild[] = [];
  const stopped = new Set<ServiceChild>();
  let fail!: (error: Error) => void;
  const failure = new Promise<never>((_resolve, reject) => (fail = reject));
  failure.catch(() => undefined);
  const env = (extra: NodeJS.ProcessEnv, probeFile: string, launched = false): NodeJS.ProcessEnv => {
    const nodeOptions = [
      extra['NODE_OPTIONS'] ?? process.env['NODE_OPTIONS'] ?? '',
      launched && launcher === 'bin' ? nodeArgs.join(' ') : '',
      probeFile && options.probeIntervalMs ? `--import=${PROBE}` : '',
    ];
    return {
      ...process.env,
      ELASTICSEARCH_URL: esUrl,
      INDEX_PREFIX: prefix,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
      ...options.env,
      ...extra,
      NODE_OPTIONS: nodeOptions.filter(Boolean).join(' '),
      ...(probeFile && options.probeIntervalMs
        ? { SOAK_PROBE_FILE: probeFile, SOAK_PROBE_INTERVAL_MS: String(options.probeIntervalMs) }
        : {}),
    };
  };

  const admin = (indexPrefix: string) =>
    createIndexAdmin({
      client: es,
      indexPrefix,
      templatesDir: path.join(REPO_ROOT, 'index-templates'),
      visibility: { current: async () => '0', advance: async () => undefined },
    });
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      rss?.stop();
      for (const child of children) stopped.add(child);
      await Promise.all(children.map((c) => c.stop(15_000).catch(() => undefined)));
      await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
      for (const own of options.keep ? [] : options.existingPrefix ? [rawPrefix] : [prefix, rawPrefix])
        await admin(own)
          .destroy()
          .catch((e: unknown) => log(`could not delete ${own} indices: ${String(e)}`));
      if (options.keep) log(`kept: indices ${prefix}-*, ${rawPrefix}-* and Redis keys ${prefix}:*`);
      let cursor = '0';
      while (!options.keep) {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.unlink(...keys);
        if ((cursor = next) === '0') break;
      }
      rmSync(scratch, { recursive: true, force: true });
      redis.disconnect();
      await es.close().catch(() => undefined);
    })());

  // Ctrl-C or TERM at any point, set-up included, leaves nothing behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up ${prefix}`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  try {
    execFileSync(process.execPath, [bin, 'indices', 'apply'], {
      cwd: root,
      env: env({ EMBEDDINGS: 'off' }, ''),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const spawn = (
      name: string,
      args: string[],
      extra: NodeJS.ProcessEnv,
      ownNodeArgs: string[] = [],
    ): StackProcess => {
      const probeFile = path.join(scratch, `${name}.probe.jsonl`);
      const logFile = path.join(logDir, `${options.label}-${name}.log`);
      const child =
        launcher === 'bin'
          ? startChild(name, [path.join(root, 'bin/social-search'), ...args], {
              cwd: root,
              env: env(extra, probeFile, true),
              logFile,
              command: '/bin/sh',
            })
          : startChild(name, [...nodeArgs, ...ownNodeArgs, bin, ...args], {
              cwd: root,
              env: env(extra, probeFile, true),
              logFile,
            });
      children.push(child);
      rss?.add(child.pid);
      void child.exited.then((code) => {
        if (!stopped.has(child)) fail(new Error(`${name} exited (${code}):\n${child.tail()}`));
      });
      return { child, probeFile };
    };
    const worker = options.worker ? spawn('worker', ['worker'], options.workerEnv ?? {}, options.workerNodeArgs) : null;
    const apis: StackApi[] = [];
    for (let i = 0; i < options.apis; i++) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      apis.push({
        ...spawn(
          options.apis > 1 ? `api${i + 1}` : 'api',
          ['serve'],
          {
            ...options.apiEnv?.(i),
            HOST: '127.0.0.1',
            PORT: String(port),
            PUBLIC_BASE_URL: url,
          },
          options.apiNodeArgs,
        ),
        url,
      });
    }
    const ready = Promise.all(
      apis.map((api) =>
        until(
          `${api.child.name} /readyz`,
          async () => (await fetch(`${api.url}/readyz`)).status === 200,
          options.readyTimeoutMs ?? 180_000,
        ),
      ),
    );
    await Promise.race([ready, failure]);
    // A timed run starts once the worker takes jobs, not while it loads.
    if (worker)
      await Promise.race([
        until(
          'the worker',
          async () => (await byName.observations.getWorkers()).length > 0,
          options.readyTimeoutMs ?? 300_000,
        ),
        failure,
      ]);
    const created = execFileSync(
      process.execPath,
      [
        bin,
        'keys',
        'create',
        '--owner',
        'bench@example.com',
        '--name',
        options.label,
        '--scopes',
        'search,ingest',
        '--json',
      ],
      {
        cwd: root,
        env: env({ EMBEDDINGS: 'off' }, ''),
        encoding: 'utf8',
      },
    );
    const key = (JSON.parse(created) as { key: string }).key;
    const queueDepth = async () => {
      const out = {} as Record<QueueName, number>;
      for (const q of queues) {
        const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        out[q.name as QueueName] = Object.values(counts).reduce((a, b) => a + b, 0);
      }
      return out;
    };
    return {
      run,
      prefix,
      rawPrefix,
      scratch,
      apis,
      worker,
      key,
      es,
      redis,
      queues: byName,
      rss,
      failure,
      cleanup,
      async stop(proc) {
        stopped.add(proc.child);
        // Time for a profiled process to write its profile (`--worker-node-arg=--cpu-prof`): at
        // 15 s a worker profiled through a 20,000-post run was killed before it had (2026-12-06).
        await proc.child.stop(60_000);
      },
      async drained(timeoutMs, { what = 'the queues to drain', queues: names } = {}) {
        const empty = async () =>
          Object.entries(await queueDepth()).every(([name, n]) => n === 0 || !(names ?? [name]).includes(name));
        await until(what, empty, timeoutMs, 100);
        await es.indices.refresh({
          index: `${prefix}-posts,${prefix}-post-vectors,${prefix}-accounts,${prefix}-metrics`,
          ignore_unavailable: true,
          allow_no_indices: true,
        });
      },
      queueDepth,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** CPU seconds so far, for a bench to take the difference over a phase (see {@link stackCpu}). */
export interface StackCpu {
  es: number;
  worker: number;
  /** Every API node's. */
  api: number;
  /** This process's. */
  bench: number;
  /** The whole machine's busy time: less the others, what else ran meanwhile (the machine is shared). */
  machine: number;
}

/** The CPU seconds so far of the engine, the stack's processes, this bench and the machine. */
export async function stackCpu(stack: Pick<ServiceStack, 'es' | 'worker' | 'apis'>): Promise<StackCpu> {
  const own = process.cpuUsage();
  return {
    es: (await engineCpuMs(stack.es)) / 1000,
    worker: stack.worker ? (cpuSeconds(stack.worker.child.pid) ?? 0) : 0,
    api: stack.apis.reduce((sum, api) => sum + (cpuSeconds(api.child.pid) ?? 0), 0),
    bench: (own.user + own.system) / 1e6,
    machine: machineBusySeconds(),
  };
}

/** The last line the memory probe of `proc` wrote, or null. */
export function lastProbe(proc: StackProcess): Record<string, number> | null {
  try {
    const lines = readFileSync(proc.probeFile, 'utf8').trimEnd().split('\n');
    return JSON.parse(lines.at(-1)!) as Record<string, number>;
  } catch {
    return null;
  }
}
