import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import type { Config } from '../internal/config.ts';
import { readSearchTimes } from '../engine/elasticsearch/admin/search-times.ts';
import { startWritePacing } from '../internal/write-pacing.ts';
import { openConnections, type Connections } from './connections.ts';
import { openEmbedder, openEngine, type Closable } from './core.ts';

/** What a long-running process (API, worker, or both) owns: its connections, the engine and the embedder. */
export interface ServiceProcess extends Closable {
  config: Config;
  connections: Connections;
  engine: ElasticsearchEngine;
  embedder: Embedder;
}

/**
 * Opens the parts an API or worker process shares between its components. `writes`: the process
 * runs a worker, whose engine writes yield to slow searches (WRITE_PACING; its signal is read each
 * second for the process's lifetime, so API-only processes do not read it).
 */
export function openServiceProcess(
  config: Config,
  logger?: Pick<Logger, 'warn' | 'info'>,
  options: { writes?: boolean } = {},
): ServiceProcess {
  const connections = openConnections(config, logger);
  const embedder = openEmbedder(config, logger);
  const pacing =
    options.writes === true && config.WRITE_PACING === 'searches'
      ? startWritePacing({ sample: () => readSearchTimes(connections.elasticsearch()) })
      : null;
  return {
    config,
    connections,
    engine: openEngine(config, connections, pacing ? { writePacing: pacing } : {}),
    embedder,
    async close() {
      pacing?.close();
      await connections.close();
      await embedder.close().catch(() => undefined);
    },
  };
}
