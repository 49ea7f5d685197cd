import type { Logger } from 'pino';
import type { IndexAdmin } from '../engine/index-admin.ts';
import type { Config } from '../internal/config.ts';
import { createProducer, INDEX_WRITING_QUEUES, type Producer } from '../queues/registry.ts';
import { createIndexRebuilds, type IndexRebuilds } from '../services/indices/rebuild.ts';
import { createRecordEmbeddings } from '../services/intake/record-embeddings.ts';
import type { Connections } from './connections.ts';
import { openEmbedder, openEngine, type Closable } from './core.ts';

/** The queues whose jobs write to the indices, by name. */
type IndexWritingQueues = { [Name in (typeof INDEX_WRITING_QUEUES)[number]]: Producer<Name> };

/** Jobs by state of each queue that writes to the indices (observations, embeddings, follow-ups), in that order; `paused` is 1 or 0. */
export type QueueDepths = Record<
  (typeof INDEX_WRITING_QUEUES)[number],
  Record<'waiting' | 'active' | 'delayed' | 'failed' | 'paused', number>
>;

/** What the `indices` commands use: the index administration, rebuilds and the depth of the queues that write to the indices. */
export interface IndexOperations extends Closable {
  admin: IndexAdmin;
  rebuilds: IndexRebuilds;
  queueDepths(): Promise<QueueDepths>;
}

/** Opens the index operations. The embedding model loads only when a rebuild asks for it. */
export function openIndexOperations(config: Config, connections: Connections, logger: Logger): IndexOperations {
  const engine = openEngine(config, connections);
  const queues = { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX };
  const writing: IndexWritingQueues = {
    observations: createProducer('observations', queues),
    embeddings: createProducer('embeddings', queues),
    'follow-ups': createProducer('follow-ups', queues),
  };
  const all = INDEX_WRITING_QUEUES.map((name) => writing[name]);
  let embedder: ReturnType<typeof openEmbedder> | undefined;
  const rebuilds = createIndexRebuilds({
    admin: engine.admin,
    redis: connections.redis(),
    prefix: config.REDIS_PREFIX,
    queues: all,
    logger,
    records: async () => {
      embedder ??= openEmbedder(config, logger);
      await embedder.ready();
      return embedder.status().state === 'ready' ? createRecordEmbeddings({ store: engine.intake, embedder }) : null;
    },
  });
  return {
    admin: engine.admin,
    rebuilds,
    async queueDepths() {
      // Filled below with every one of INDEX_WRITING_QUEUES before it is returned.
      const depths = {} as QueueDepths;
      for (const name of INDEX_WRITING_QUEUES) {
        const queue = writing[name];
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
        depths[name] = {
          waiting: counts['waiting'] ?? 0,
          active: counts['active'] ?? 0,
          delayed: counts['delayed'] ?? 0,
          failed: counts['failed'] ?? 0,
          paused: (await queue.isPaused()) ? 1 : 0,
        };
      }
      return depths;
    },
    async close() {
      await Promise.all(all.map((q) => q.close().catch(() => undefined)));
      await embedder?.close().catch(() => undefined);
    },
  };
}
