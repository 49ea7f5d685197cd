/**
 * The service inside the bench's own process, as the relevance and alert benches run it:
 * in-process runtimes, an HTTP intake node with its worker for loading, one HTTP API node per
 * ranking mode for asking, and the waits that make "everything sent is indexed (and embedded)" a
 * fact before any query is asked. (The service as child processes: service-stack.ts; one API node
 * alone: in-process-api.ts.)
 */
import type { Client } from '@elastic/elasticsearch';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { Embedder } from '../../src/embedding/embedder.ts';
import type { IndexAdmin } from '../../src/engine/index-admin.ts';
import { loadConfig, type Config } from '../../src/internal/config.ts';
import { createProducer, type Producer } from '../../src/queues/registry.ts';
import type { KeyService } from '../../src/services/keys/key-service.ts';
import { createApi } from '../../src/start/api.ts';
import { openKeys, type Closable } from '../../src/start/core.ts';
import { openServiceProcess, type ServiceProcess } from '../../src/start/process.ts';
import { startWorkerProcess } from '../../src/start/worker-process.ts';
import { MODEL_DIR } from './model.ts';

/**
 * A harness environment on `prefix`: production settings (no per-response schema check in the
 * timings), a fresh signing secret, the shared model when present and a long intake wait (a
 * waited request embeds what it changed inline, on cores the worker shares: the default 30 s is
 * too tight to be a useful failure signal), then `defaults`, the process's environment, the
 * prefix and `overrides`.
 */
export function harnessEnv(
  prefix: string,
  defaults: NodeJS.ProcessEnv = {},
  overrides: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'production',
    SIGNING_SECRET: randomBytes(32).toString('hex'),
    ...(existsSync(MODEL_DIR) ? { MODEL_DIR } : {}),
    INTAKE_WAIT_TIMEOUT_MS: '600000',
    ...defaults,
    ...process.env,
    INDEX_PREFIX: prefix,
    REDIS_PREFIX: prefix,
    ...overrides,
  };
}

/** The benches' logger: LOG_LEVEL (default warnings and up), on stderr. */
export const benchLogger = (): Logger => pino({ level: process.env['LOG_LEVEL'] ?? 'warn' }, pino.destination(2));

/** The ranking modes of config `SEARCH_RANKING`. */
export type RankingMode = Config['SEARCH_RANKING'];

/**
 * One in-process service: its process parts (connections, engine, embedder), with handles on
 * what the harness drives directly (indices, keys, the observations queue, the raw connections).
 */
export interface Runtime {
  readonly config: Config;
  readonly process: ServiceProcess;
  readonly logger: Logger;
  readonly es: Client;
  readonly redis: Redis;
  /** The connection queue producers use (Connections.producerRedis: BullMQ's scripts stay off `redis`). */
  readonly producerRedis: Redis;
  readonly indexAdmin: IndexAdmin;
  readonly embedder: Embedder;
  readonly keys: KeyService;
  /** The observations queue, as producers see it. */
  readonly queue: Producer<'observations'>;
  /** Waits (bounded) for Redis; false when it did not answer. */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A node listening on a free loopback port. */
export interface ApiNode {
  readonly runtime: Runtime;
  readonly baseUrl: string;
  /** What `/readyz` says about embeddings (`checks.embeddings`), verbatim. */
  readonly embeddings: string;
  close(): Promise<void>;
}

/** Builds a runtime from the harness environment with per-node overrides. */
export function harnessRuntime(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  overrides: Record<string, string> = {},
): Runtime {
  // The harness asks hundreds of queries a minute with one key: lift the rate limit (still counted).
  const config = loadConfig({
    RATE_LIMIT_SEARCH_PER_MINUTE: '1000000',
    SEARCH_IN_FLIGHT_PER_KEY: '0',
    ...env,
    ...overrides,
  });
  const owned = openServiceProcess(config, logger);
  const { connections } = owned;
  const keys = openKeys(config, connections, { cached: false });
  const queue = createProducer('observations', {
    connection: connections.producerRedis(),
    prefix: config.REDIS_PREFIX,
  });
  return {
    config,
    process: owned,
    logger,
    es: connections.elasticsearch(),
    redis: connections.redis(),
    producerRedis: connections.producerRedis(),
    indexAdmin: owned.engine.admin,
    embedder: owned.embedder,
    keys,
    queue,
    ready: (timeoutMs) => connections.redisReady(timeoutMs),
    async close() {
      await keys.close();
      await queue.close().catch(() => undefined);
      await owned.close();
    },
  };
}

async function readyEmbeddings(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/readyz`);
  const body = (await response.json()) as { status?: string; checks?: Record<string, string> };
  if (body.checks?.['elasticsearch'] === undefined || body.checks['redis'] === undefined) {
    throw new Error(`/readyz answered ${response.status} without the expected checks: ${JSON.stringify(body)}`);
  }
  // Elasticsearch or Redis not ready means nothing below would be measured: stop here.
  for (const name of ['elasticsearch', 'redis']) {
    if (body.checks[name]!.startsWith('unavailable')) throw new Error(`/readyz: ${name} ${body.checks[name]}`);
  }
  return body.checks['embeddings'] ?? 'absent from /readyz (this build has no embeddings check)';
}

/**
 * Starts an HTTP node over `runtime` on 127.0.0.1:0. The model is loaded before the first request
 * (as `serve` does), so model loading never lands in a measured latency; a model that fails to
 * load is not fatal here: `/readyz` reports it and the caller labels the numbers as BM25.
 */
export async function startApiNode(runtime: Runtime): Promise<ApiNode> {
  await runtime.ready();
  await runtime.embedder.ready().catch(() => undefined);
  const { config, connections, engine, embedder } = runtime.process;
  const api = createApi(config, connections, { engine, embedder, logger: runtime.logger });
  const baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    runtime,
    baseUrl,
    embeddings: await readyEmbeddings(baseUrl),
    async close() {
      await api.close();
    },
  };
}

/** Whether a `/readyz` embeddings line means queries can rank by meaning. */
export function embeddingsServe(readyzLine: string): boolean {
  return readyzLine.startsWith('ready');
}

/**
 * Sends one intake request (NDJSON) and fails loudly unless every line was accepted: a silently
 * rejected line (an account, say) can leave posts unservable and every score at zero.
 */
export async function sendObservations(
  node: Pick<ApiNode, 'baseUrl'>,
  key: string,
  observations: readonly unknown[],
  options: { wait: boolean },
): Promise<void> {
  // A 503 accepted nothing ("retry shortly", the intake contract): sent again, a few times, as a
  // client would, rather than ending a run on a Redis busy for a moment (a machine shared with tests).
  let response: Response;
  let text: string;
  for (let attempt = 1; ; attempt++) {
    response = await fetch(`${node.baseUrl}/internal/v1/social/observations${options.wait ? '?wait=true' : ''}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
      body: observations.map((o) => JSON.stringify(o)).join('\n'),
    });
    text = await response.text();
    if (response.status !== 503 || attempt === 5) break;
    await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
  }
  const expected = options.wait ? 200 : 202;
  if (response.status !== expected)
    throw new Error(`intake answered ${response.status} (expected ${expected}): ${text.slice(0, 1000)}`);
  const body = JSON.parse(text) as { accepted: number; rejected: Array<{ line: number; detail: string }> };
  if (body.rejected.length > 0 || body.accepted !== observations.length) {
    const shown = body.rejected
      .slice(0, 5)
      .map((r) => `line ${r.line}: ${r.detail}`)
      .join('\n  ');
    throw new Error(`intake accepted ${body.accepted} of ${observations.length} observations; rejected:\n  ${shown}`);
  }
}

/**
 * `read`, asked again every 500 ms while it fails, until `deadline` (epoch ms): a Redis stalled for
 * a moment under a run's load times a command out, and a rejection that reaches a bench's
 * top-level await ends the whole run.
 */
export async function retrying<T>(read: () => Promise<T>, deadline = Date.now() + 10_000): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

const PENDING_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Resolves once `queue` has no pending job. Fails when a job lands in the failed set (its
 * attempts ran out) or after `timeoutMs`; a job that keeps failing retries with back-off meanwhile,
 * and the worker logs why at `warn`.
 */
export async function waitForQueueIdle(
  queue: Queue,
  options: { timeoutMs: number; onProgress?: (pending: number) => void },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const countsOf = (...states: Parameters<Queue['getJobCounts']>) =>
    retrying(() => queue.getJobCounts(...states), deadline);
  const failedBefore = (await countsOf('failed'))['failed'] ?? 0;
  for (;;) {
    const counts = await countsOf(...PENDING_STATES, 'failed');
    const pending = PENDING_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    if ((counts['failed'] ?? 0) > failedBefore)
      throw new Error(`queue ${queue.name}: ${counts['failed']! - failedBefore} job(s) failed for good`);
    options.onProgress?.(pending);
    if (pending === 0) return;
    if (Date.now() > deadline)
      throw new Error(`queue ${queue.name}: ${pending} job(s) still pending after ${options.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** What the posts index holds, counted in the engine (a check of the load, not a measurement). */
export interface PostCounts {
  /** Every post document. */
  readonly total: number;
  /** Posts search can return (raw facts and author observed, status available). */
  readonly servable: number;
  /** Posts with a vector. */
  readonly withVectors: number;
}

/**
 * Deleted documents still in the posts index's segments. Lucene's BM25 statistics (document
 * count, document frequencies, average length) include them until a merge drops them, so an
 * index that saw updates ranks slightly differently from a freshly loaded one (on SciFact:
 * 0.6819 instead of 0.6836 nDCG@10 with ~3,300 deleted copies).
 */
export async function deletedPosts(runtime: Runtime): Promise<number> {
  const stats = await runtime.es.indices.stats({ index: `${runtime.config.INDEX_PREFIX}-posts`, metric: 'docs' });
  return stats._all.primaries?.docs?.deleted ?? 0;
}

/** Merges the posts index and its vector documents into one segment each, dropping deleted documents (so BM25 statistics are exact). */
export async function forceMergePosts(runtime: Runtime): Promise<void> {
  // The posts and their vector documents: one segment each, so kNN searches one HNSW graph and
  // repeated runs on an index answer alike (across segments the engine's kNN shares its running
  // threshold between concurrent leaf searches, and the hits can differ from run to run).
  const index = `${runtime.config.INDEX_PREFIX}-posts,${runtime.config.INDEX_PREFIX}-post-vectors`;
  await runtime.es.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: true });
  await runtime.es.indices.refresh({ index });
}

/** Counts the posts under the runtime's INDEX_PREFIX. */
export async function countPosts(runtime: Runtime): Promise<PostCounts> {
  const index = `${runtime.config.INDEX_PREFIX}-posts`;
  const count = async (query?: object, of = index) =>
    (await runtime.es.count({ index: of, ...(query ? { query } : {}) })).count;
  const [total, servable, withVectors] = await Promise.all([
    count(),
    count({ term: { servable: true } }),
    // A post's vectors are in its vector document (a post's record may not name them yet); the
    // count is of top-level documents, not of the passages nested in them.
    count(undefined, `${runtime.config.INDEX_PREFIX}-post-vectors`),
  ]);
  return { total, servable, withVectors };
}

/** Drops everything the harness keeps under its prefixes: indices, templates, queues, keys. */
export async function destroyPrefix(runtime: Runtime): Promise<void> {
  await runtime.indexAdmin.destroy();
  const keys: string[] = [];
  // SCAN, not KEYS: the Redis may be shared with a large seeded prefix.
  for await (const batch of runtime.redis.scanStream({ match: `${runtime.config.REDIS_PREFIX}:*`, count: 1000 }))
    keys.push(...(batch as string[]));
  for (let i = 0; i < keys.length; i += 1000) await runtime.redis.del(...keys.slice(i, i + 1000));
}

/** The loading side: an intake node, the worker behind it and the embeddings queue to watch. */
export interface Loader {
  readonly node: ApiNode;
  /** The `embeddings` queue, or null when the worker runs without a model. */
  readonly embeddingQueue: Queue | null;
  /**
   * Holds embedding jobs back (they stay queued) or lets them run. On 2 cores the model and the
   * indexing halve each other's speed, and indexing is what the waits below block on.
   */
  holdEmbeddings(hold: boolean): Promise<void>;
  /** Stops the worker (running jobs finish; queued ones stay in Redis for the next worker). */
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the intake node and the worker on `runtime` (whose indices must exist), with embedding
 * jobs held or not from the start. Whatever the hold, {@link Loader.close} lifts it once the
 * worker has stopped, so an interrupted run never leaves the queue paused for the next one.
 */
export async function startLoader(
  runtime: Runtime,
  logger: Logger,
  options: { holdEmbeddings: boolean },
): Promise<Loader> {
  const node = await startApiNode(runtime);
  const embeddingQueue = embeddingsServe(node.embeddings)
    ? createProducer('embeddings', { connection: runtime.producerRedis, prefix: runtime.config.REDIS_PREFIX })
    : null;
  const { config, connections, engine, embedder } = runtime.process;
  const started = startWorkerProcess(config, connections, { engine, embedder, logger });
  let worker: Closable | null = started;
  // After the worker's start-up check, which resumes a queue it finds paused with no rebuild
  // running (src/services/indices/rebuild.ts): held before it, the hold would be lifted.
  await started.started;
  if (options.holdEmbeddings) await embeddingQueue?.pause();
  else await embeddingQueue?.resume();
  const stopWorker = async () => {
    await worker?.close();
    worker = null;
    // The worker's model thread holds a few hundred MB and a core's worth of threads: free them
    // before the measured nodes load their own.
    await runtime.embedder.close().catch(() => undefined);
  };
  return {
    node,
    embeddingQueue,
    async holdEmbeddings(hold) {
      if (hold) await embeddingQueue?.pause();
      else await embeddingQueue?.resume();
    },
    stopWorker,
    async close() {
      await node.close();
      await stopWorker();
      // Resumed only once no worker runs: the jobs wait in Redis for the next run's worker.
      await embeddingQueue?.resume().catch(() => undefined);
      await embeddingQueue?.close().catch(() => undefined);
    },
  };
}

/**
 * Loads `observations` (null: none, only the vectors still queued) through a loader on `runtime`:
 * sent in requests of 500 not waited for, the records indexed, then the held embedding jobs run to
 * the end and a waited no-op (the first observation again) makes every write visible. A run
 * stopped midway resumes: the queued embedding jobs wait in Redis. `requireModel`: fail when the
 * worker has no model.
 */
export async function loadObservations(
  runtime: Runtime,
  logger: Logger,
  key: string,
  observations: Iterable<Record<string, unknown>> | null,
  options: { requireModel?: boolean } = {},
): Promise<void> {
  const loader = await startLoader(runtime, logger, { holdEmbeddings: true });
  try {
    let batch: Array<Record<string, unknown>> = [];
    let first: Record<string, unknown> | undefined;
    for (const observation of observations ?? []) {
      first ??= observation;
      batch.push(observation);
      if (batch.length === 500) {
        await sendObservations(loader.node, key, batch, { wait: false });
        batch = [];
      }
    }
    if (batch.length > 0) await sendObservations(loader.node, key, batch, { wait: false });
    if (first) await waitForQueueIdle(loader.node.runtime.queue, { timeoutMs: 3_600_000 });
    await loader.holdEmbeddings(false);
    if (!loader.embeddingQueue && options.requireModel) throw new Error('the worker has no model (MODEL_DIR)');
    if (loader.embeddingQueue)
      await waitForQueueIdle(loader.embeddingQueue, {
        timeoutMs: 3_600_000,
        onProgress: (pending) => logger.info({ pending }, 'embedding'),
      });
    if (first) await sendObservations(loader.node, key, [first], { wait: true });
  } finally {
    await loader.close();
  }
}
