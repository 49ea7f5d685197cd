import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';

/** One step of shutdown, run in order. */
export interface ShutdownPhase {
  name: string;
  run(): Promise<unknown>;
}

/**
 * One phased shutdown for API and worker processes (SIGINT, SIGTERM, uncaught errors): stop taking
 * work (HTTP listener, worker), let in-flight work finish, then close connections.
 */
export function installShutdown(logger: Logger, phases: () => ShutdownPhase[], delayMs = 20_000): void {
  closeWithGrace({ delay: delayMs }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down');
    for (const phase of phases()) {
      try {
        await phase.run();
        logger.debug({ phase: phase.name }, 'shutdown phase done');
      } catch (error) {
        logger.warn({ err: error, phase: phase.name }, 'shutdown phase failed');
      }
    }
  });
}
