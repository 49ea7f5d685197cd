import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import type { Config } from '../internal/config.ts';
import { openConnections, type Connections } from './connections.ts';
import { openEmbedder, openEngine, type Closable } from './core.ts';

/** What a long-running process (API, worker, or both) owns: its connections, the engine and the embedder. */
export interface ServiceProcess extends Closable {
  config: Config;
  connections: Connections;
  engine: ElasticsearchEngine;
  embedder: Embedder;
}

/** Opens the parts an API or worker process shares between its components. */
export function openServiceProcess(config: Config, logger?: Pick<Logger, 'warn' | 'info'>): ServiceProcess {
  const connections = openConnections(config, logger);
  const embedder = openEmbedder(config, logger);
  return {
    config,
    connections,
    engine: openEngine(config, connections),
    embedder,
    async close() {
      await connections.close();
      await embedder.close().catch(() => undefined);
    },
  };
}
