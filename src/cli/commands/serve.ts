import type { Command } from 'commander';
import { createLogger } from '../../internal/logger.ts';
import { createRuntime } from '../../start/runtime.ts';
import { createServer, listen } from '../../start/server.ts';
import { installShutdown } from '../../start/shutdown.ts';
import { startEmbeddings } from '../../start/embeddings.ts';
import { startWorker } from '../../start/worker.ts';
import { configOrExit } from '../context.ts';

/** `serve` (HTTP API) and `worker` (BullMQ workers): long-running processes. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP API')
    .action(async () => {
      const config = configOrExit();
      const logger = createLogger(config);
      const runtime = createRuntime(config, logger);
      if (!(await runtime.ready())) logger.warn('Redis is not reachable yet; requests answer 503 until it is');
      await startEmbeddings(runtime, logger);
      const app = createServer(runtime, logger);
      installShutdown(logger, () => [
        { name: 'http', run: () => app.close() },
        { name: 'connections', run: () => runtime.close() },
      ]);
      const address = await listen(app, runtime);
      logger.info({ address, base_url: config.PUBLIC_BASE_URL }, 'API listening');
    });

  program
    .command('worker')
    .description('run the BullMQ workers (indexing, enrichment updates, derived metrics)')
    .action(async () => {
      const config = configOrExit();
      const logger = createLogger(config);
      const runtime = createRuntime(config, logger);
      await runtime.ready();
      await startEmbeddings(runtime, logger);
      const worker = startWorker(runtime, logger);
      installShutdown(logger, () => [
        { name: 'worker', run: () => worker.close() },
        { name: 'connections', run: () => runtime.close() },
      ]);
      logger.info({ concurrency: config.WORKER_CONCURRENCY }, 'worker running');
    });
}
