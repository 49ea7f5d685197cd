/**
 * A service stack for benches that load it from outside: `social-search serve` (one or more API
 * nodes) and `social-search worker` as child processes of the bench, under a fresh INDEX_PREFIX /
 * REDIS_PREFIX on the shared Elasticsearch and Redis, as an operator would run them. Everything it
 * creates (indices, templates, Redis keys, processes) goes at {@link ServiceStack.cleanup}.
 *
 * Elasticsearch: `ELASTICSEARCH_URLS` (comma-separated, a cluster's nodes) or `ELASTICSEARCH_URL`;
 * the service processes get them all as ELASTICSEARCH_URL and the rest of the environment as is.
 */
import { Client } from '@elastic/elasticsearch';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { createIndexAdmin } from '../../src/engine/elasticsearch/admin/index-admin.ts';
import { createProducer, INDEX_WRITING_QUEUES, type QueueName } from '../../src/queues/registry.ts';
import { startChild, type ServiceChild } from '../intake/processes.ts';
import { freePort } from './ports.ts';

export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
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
  /** Extra `node` options of the service processes (e.g. `--max-old-space-size=160`). */
  nodeArgs?: string[];
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
  /** Wait for `/readyz` (model loaded) up to this long. */
  readyTimeoutMs?: number;
}

/** A running stack. */
export interface ServiceStack {
  prefix: string;
  apis: StackApi[];
  worker: StackProcess | null;
  /** A key with the `search` and `ingest` scopes. */
  key: string;
  es: Client;
  redis: Redis;
  /** Jobs not yet done (waiting, active, delayed, prioritized) per index-writing queue. */
  queueDepth(): Promise<Record<QueueName, number>>;
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
  const children: ServiceChild[] = [];
  const stopped = new Set<ServiceChild>();
  let fail!: (error: Error) => void;
  const failure = new Promise<never>((_resolve, reject) => (fail = reject));
  failure.catch(() => undefined);
  const env = (extra: NodeJS.ProcessEnv, probeFile: string, launched = false): NodeJS.ProcessEnv => {
    const nodeOptions = [
      process.env['NODE_OPTIONS'] ?? '',
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

  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const child of children) stopped.add(child);
      await Promise.all(children.map((c) => c.stop(15_000).catch(() => undefined)));
      await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
      const admin = createIndexAdmin({
        client: es,
        indexPrefix: prefix,
        templatesDir: path.join(REPO_ROOT, 'index-templates'),
        visibility: { current: async () => '0', advance: async () => undefined },
      });
      if (!options.existingPrefix)
        await admin.destroy().catch((e: unknown) => log(`could not delete ${prefix} indices: ${String(e)}`));
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
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
    const spawn = (name: string, args: string[], extra: NodeJS.ProcessEnv): StackProcess => {
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
          : startChild(name, [...nodeArgs, bin, ...args], { cwd: root, env: env(extra, probeFile, true), logFile });
      children.push(child);
      void child.exited.then((code) => {
        if (!stopped.has(child)) fail(new Error(`${name} exited (${code}):\n${child.tail()}`));
      });
      return { child, probeFile };
    };
    const worker = options.worker ? spawn('worker', ['worker'], {}) : null;
    const apis: StackApi[] = [];
    for (let i = 0; i < options.apis; i++) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      apis.push({
        ...spawn(options.apis > 1 ? `api${i + 1}` : 'api', ['serve'], {
          HOST: '127.0.0.1',
          PORT: String(port),
          PUBLIC_BASE_URL: url,
        }),
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
    return {
      prefix,
      apis,
      worker,
      key,
      es,
      redis,
      failure,
      cleanup,
      async stop(proc) {
        stopped.add(proc.child);
        await proc.child.stop(15_000);
      },
      async queueDepth() {
        const out = {} as Record<QueueName, number>;
        for (const q of queues) {
          const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
          out[q.name as QueueName] = Object.values(counts).reduce((a, b) => a + b, 0);
        }
        return out;
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
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

/**
 * Sends observations through the intake of `apiUrl` (NDJSON requests of `perRequest`, 202, two in
 * flight) until `posts` post observations have gone, then waits until the worker has indexed them
 * (observations and follow-ups queues empty; embeddings may go on) and refreshes.
 */
export async function seedThroughIntake(
  stack: ServiceStack,
  observations: Iterator<Record<string, unknown>>,
  posts: number,
  perRequest = 500,
): Promise<{ observations: number; posts: number }> {
  const pool = new Pool(stack.apis[0]!.url, { connections: 2 });
  let sentPosts = 0;
  let sent = 0;
  const nextBody = (): string | null => {
    const lines: string[] = [];
    while (lines.length < perRequest && sentPosts < posts) {
      const next = observations.next();
      if (next.done) break;
      if (next.value['kind'] === 'post') sentPosts++;
      lines.push(JSON.stringify(next.value));
    }
    sent += lines.length;
    return lines.length > 0 ? `${lines.join('\n')}\n` : null;
  };
  const lane = async () => {
    for (let body = nextBody(); body !== null; body = nextBody()) {
      const response = await pool.request({
        path: '/internal/v1/social/observations',
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
      });
      const text = await response.body.text();
      const answer = JSON.parse(text) as { rejected?: unknown[] };
      if (response.statusCode !== 202 || (answer.rejected?.length ?? 0) > 0)
        throw new Error(`seeding: intake answered ${response.statusCode}: ${text.slice(0, 500)}`);
    }
  };
  await Promise.race([Promise.all([lane(), lane()]), stack.failure]);
  await pool.close();
  await until(
    'the worker to index the seed',
    async () => {
      const depth = await stack.queueDepth();
      return depth.observations === 0 && depth['follow-ups'] === 0;
    },
    30 * 60_000,
    500,
  );
  await stack.es.indices.refresh({ index: `${stack.prefix}-posts,${stack.prefix}-accounts` });
  return { observations: sent, posts: sentPosts };
}

/** Ids and alternate keys of what the stack's indices hold, for GETs (up to `max` of each). */
export async function readTargets(
  stack: ServiceStack,
  max = 10_000,
): Promise<{
  posts: Array<{ id: string; shortcode: string | null }>;
  accounts: Array<{ id: string; handle: string | null }>;
}> {
  const ids = async (index: string, field: string) => {
    const response = await stack.es.search({
      index,
      size: max,
      _source: false,
      fields: [field],
      query: { term: { servable: true } },
    });
    return response.hits.hits.map((h) => ({
      id: h._id!,
      value: ((h.fields?.[field] as string[] | undefined) ?? [null])[0] ?? null,
    }));
  };
  const posts = await ids(`${stack.prefix}-posts`, 'shortcode');
  const accounts = await ids(`${stack.prefix}-accounts`, 'handle');
  return {
    posts: posts.map((p) => ({ id: p.id, shortcode: p.value })),
    accounts: accounts.map((a) => ({ id: a.id, handle: a.value })),
  };
}

/**
 * The service as committed at `rev`, exported (`git archive`, read-only for the repository) into
 * a scratch folder with this checkout's node_modules linked, so a bench can measure the code
 * before a change in the same conditions as after it. The caller removes the folder.
 */
export function exportCommit(rev: string): string {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  }).trim();
  const dir = path.join(REPO_ROOT, '.scratch', `service-${commit.slice(0, 10)}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const files = ['bin', 'src', 'index-templates', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  execFileSync(
    'sh',
    ['-c', `git --no-optional-locks archive --format=tar ${commit} ${files.join(' ')} | tar -x -C '${dir}'`],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

/** Compiles the service at `root` as the Docker image does (`tsconfig.build.json` into `root/dist`). */
export function compileService(root: string): void {
  execFileSync(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
}
