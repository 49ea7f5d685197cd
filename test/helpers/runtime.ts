import type { Client } from '@elastic/elasticsearch';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Embedder } from '../../src/embedding/embedder.ts';
import type { ElasticsearchEngine } from '../../src/engine/elasticsearch/engine.ts';
import type { IndexAdmin } from '../../src/engine/index-admin.ts';
import type { VisibilityEpoch } from '../../src/engine/visibility.ts';
import type { Config } from '../../src/internal/config.ts';
import { createProducer, INDEX_WRITING_QUEUES, type Producer } from '../../src/queues/registry.ts';
import { createApi, type Api } from '../../src/start/api.ts';
import type { Connections } from '../../src/start/connections.ts';
import type { Closable } from '../../src/start/core.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import { createRedisVisibilityEpoch } from '../../src/start/visibility-epoch.ts';
import { startWorkerProcess } from '../../src/start/worker-process.ts';
import { createIndexRebuilds, type IndexRebuilds } from '../../src/services/indices/rebuild.ts';
import { createRecordEmbeddings } from '../../src/services/intake/record-embeddings.ts';

/**
 * What integration tests reach into besides HTTP: one process's parts, composed the way the
 * entry points compose them (src/start), plus handles on the raw connections for assertions.
 */
export interface TestRuntime extends Closable {
  config: Config;
  /** This process's connections (another API on the same process: `createApi(config, connections, …)`). */
  connections: Connections;
  es: Client;
  redis: Redis;
  engine: ElasticsearchEngine;
  indexAdmin: IndexAdmin;
  embedder: Embedder;
  visibility: VisibilityEpoch;
  /** The observations queue, as producers see it. */
  queue: Producer<'observations'>;
  /** Every queue whose jobs write to the indices (observations, embeddings, follow-ups). */
  queues: Queue[];
  /** Job counts in `states`, summed over {@link queues}: the whole pipeline's backlog. */
  jobCounts(...states: Parameters<Queue['getJobCounts']>): Promise<Record<string, number>>;
  /** The API's services and its Fastify app (not listening). */
  api: Api;
  rebuilds: IndexRebuilds;
  /** Starts a worker on this process's engine and embedder; closed with the runtime. */
  startWorkerProcess(logger: Logger): Closable;
  /** Stops the workers started with {@link startWorkerProcess}, letting running jobs finish. */
  stopWorkers(): Promise<void>;
  /** Waits (bounded) for Redis; false when it did not answer. */
  ready(timeoutMs?: number): Promise<boolean>;
}

/** Opens a test runtime for `config`. Connections open lazily, as in the service. */
export function openTestRuntime(config: Config, logger?: Logger): TestRuntime {
  const owned = openServiceProcess(config, logger);
  const { connections, engine, embedder } = owned;
  const queues = { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX };
  const queue = createProducer('observations', queues);
  const others = INDEX_WRITING_QUEUES.filter((name) => name !== 'observations').map((name) =>
    createProducer(name, queues),
  );
  const all: Queue[] = [queue, ...others];
  const api = createApi(config, connections, { engine, embedder, ...(logger ? { logger } : {}) });
  const quiet = { warn: () => undefined };
  const workers: Closable[] = [];
  return {
    config,
    connections,
    es: connections.elasticsearch(),
    redis: connections.redis(),
    engine,
    indexAdmin: engine.admin,
    embedder,
    visibility: createRedisVisibilityEpoch({ redis: connections.redis(), prefix: config.REDIS_PREFIX }),
    queue,
    queues: all,
    async jobCounts(...states) {
      const sum: Record<string, number> = {};
      for (const counts of await Promise.all(all.map((q) => q.getJobCounts(...states)))) {
        for (const [state, n] of Object.entries(counts)) sum[state] = (sum[state] ?? 0) + n;
      }
      return sum;
    },
    api,
    rebuilds: createIndexRebuilds({
      admin: engine.admin,
      redis: connections.redis(),
      prefix: config.REDIS_PREFIX,
      queues: all,
      logger: quiet,
      records: async () => {
        await embedder.ready();
        return embedder.status().state === 'ready' ? createRecordEmbeddings({ store: engine.intake, embedder }) : null;
      },
    }),
    startWorkerProcess(workerLogger) {
      const started = startWorkerProcess(config, connections, { engine, embedder, logger: workerLogger });
      const worker: Closable = {
        async close() {
          // Closed by the test itself: not again by stopWorkers().
          const at = workers.indexOf(worker);
          if (at >= 0) workers.splice(at, 1);
          await started.close();
        },
      };
      workers.push(worker);
      return worker;
    },
    async stopWorkers() {
      for (const worker of workers.splice(0)) await worker.close();
    },
    ready: (timeoutMs) => connections.redisReady(timeoutMs),
    async close() {
      await api.close();
      for (const worker of workers.splice(0)) await worker.close();
      await Promise.all(all.map((q) => q.close().catch(() => undefined)));
      await owned.close();
    },
  };
}
