import type { Command } from 'commander';
import { createLogger } from '../../internal/logger.ts';
import { lowerCpuPriority } from '../../start/background-priority.ts';
import { startEmbeddings } from '../../start/embeddings.ts';
import { openServiceProcess } from '../../start/process.ts';
import { installShutdown, serviceShutdownPhases } from '../../start/shutdown.ts';
import { configOrExit } from '../context.ts';

/** `serve` (HTTP API) and `worker` (BullMQ workers): long-running processes. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP API')
    .action(async () => {
      const config = configOrExit();
      const logger = createLogger(config);
      // An intake-only node serves no searches: its bursts of validation yield the cores to those that do.
      if (config.API_ROUTES === 'intake') lowerCpuPriority(config.BACKGROUND_NICENESS, logger, 'intake node');
      const owned = openServiceProcess(config, logger);
      if (!(await owned.connections.redisReady()))
        logger.warn('Redis is not reachable yet; requests answer 503 until it is');
      await startEmbeddings(owned.embedder, config.SEARCH_RANKING, logger, config, owned.engine.health);
      // Each process loads its own command's code only: a worker holds none of the HTTP layer.
      const { createApi } = await import('../../start/api.ts');
      const api = createApi(config, owned.connections, { engine: owned.engine, embedder: owned.embedder, logger });
      installShutdown(logger, serviceShutdownPhases({ api, process: owned }));
      const address = await api.app.listen({ host: config.HOST, port: config.PORT });
      logger.info({ address, base_url: config.PUBLIC_BASE_URL }, 'API listening');
    });

  program
    .command('worker')
    .description('run the BullMQ workers (indexing, enrichment updates, derived metrics)')
    .action(async () => {
      const config = configOrExit();
      const logger = createLogger(config);
      lowerCpuPriority(config.BACKGROUND_NICENESS, logger, 'worker');
      const owned = openServiceProcess(config, logger, { writes: true });
      if (!(await owned.connections.redisReady()))
        logger.warn('Redis is not reachable yet; the worker takes jobs once it is');
      await startEmbeddings(owned.embedder, config.SEARCH_RANKING, logger, config, owned.engine.health);
      const { startWorkerProcess } = await import('../../start/worker-process.ts');
      const worker = startWorkerProcess(config, owned.connections, {
        engine: owned.engine,
        embedder: owned.embedder,
        logger,
      });
      installShutdown(logger, serviceShutdownPhases({ worker, process: owned }));
      logger.info({ concurrency: config.WORKER_CONCURRENCY }, 'worker running');
    });
}
