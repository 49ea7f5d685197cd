import type { Logger } from 'pino';
import type { IndexAdmin } from '../engine/index-admin.ts';
import type { Config } from '../internal/config.ts';
import { createProducer, INDEX_WRITING_QUEUES, type Producer } from '../queues/registry.ts';
import { createIndexRebuilds, type IndexRebuilds } from '../services/indices/rebuild.ts';
import { createRecordEmbeddings } from '../services/intake/record-embeddings.ts';
import type { Connections } from './connections.ts';
import { openEmbedder, openEngine, type Closable } from './core.ts';

/** What the `indices` commands use: the index administration, rebuilds and the intake queue's depth. */
export interface IndexOperations extends Closable {
  admin: IndexAdmin;
  rebuilds: IndexRebuilds;
  observations: Producer<'observations'>;
}

/** Opens the index operations. The embedding model loads only when a rebuild asks for it. */
export function openIndexOperations(config: Config, connections: Connections, logger: Logger): IndexOperations {
  const engine = openEngine(config, connections);
  const queues = { connection: connections.redis(), prefix: config.REDIS_PREFIX };
  const observations = createProducer('observations', queues);
  const others = INDEX_WRITING_QUEUES.filter((name) => name !== 'observations').map((name) => createProducer(name, queues));
  let embedder: ReturnType<typeof openEmbedder> | undefined;
  const rebuilds = createIndexRebuilds({
    admin: engine.admin,
    redis: connections.redis(),
    prefix: config.REDIS_PREFIX,
    queues: [observations, ...others],
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
    observations,
    async close() {
      await Promise.all([observations, ...others].map((q) => q.close().catch(() => undefined)));
      await embedder?.close().catch(() => undefined);
    },
  };
}
