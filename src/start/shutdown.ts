import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import { reasonOf } from '../internal/outages.ts';
import type { Closable } from './core.ts';

/** One step of shutdown, run in order. */
export interface ShutdownPhase {
  name: string;
  run(): Promise<unknown>;
  /**
   * How long this phase may take. Past it shutdown moves on: what the phase still waits for (a
   * job, a Redis that is down) is cut off when the last phase disconnects everything.
   */
  timeoutMs: number;
}

/**
 * The phases of a service process, in order: stop the HTTP API (the listener closes, in-flight
 * requests finish), stop the worker (running jobs finish, unless Redis is down), then disconnect
 * every connection, which also ends anything an earlier phase left waiting.
 */
export function serviceShutdownPhases(parts: {
  api?: Closable;
  worker?: Closable;
  process: Closable;
}): ShutdownPhase[] {
  const { api, worker } = parts;
  return [
    ...(api ? [{ name: 'http', timeoutMs: 8000, run: () => api.close() }] : []),
    // A job merges at most 500 observations, and an embeddings job postpones itself between two
    // slices of posts (JobContext.stopping); longer than this, a job is cut off and runs again.
    ...(worker ? [{ name: 'worker', timeoutMs: 10_000, run: () => worker.close() }] : []),
    { name: 'connections', timeoutMs: 3000, run: () => parts.process.close() },
  ];
}

/** Time left over the phases' own time-outs before the process is killed regardless (exit 1). */
const MARGIN_MS = 3000;

/**
 * One phased shutdown for API and worker processes (SIGINT, SIGTERM, uncaught errors): stop taking
 * work (HTTP listener, worker), let in-flight work finish, then close connections. Each phase has
 * its own deadline, so a Redis or Elasticsearch that is down cannot hold the process: a clean
 * signal exits 0 within the sum of the phases' time-outs, whatever the services do.
 */
export function installShutdown(logger: Logger, phases: ShutdownPhase[]): void {
  const deadlineMs = phases.reduce((sum, phase) => sum + phase.timeoutMs, 0) + MARGIN_MS;
  closeWithGrace(
    {
      delay: deadlineMs,
      // SIGUSR2 stays Node's: it is the signal operators give `--heapsnapshot-signal` (and
      // SIGUSR1 opens the inspector), so asking a running process for a heap snapshot must not
      // stop it (close-with-grace stops on it by default, for nodemon's restarts).
      skip: ['SIGUSR2'],
      // Its own messages ("second SIGINT, exiting", "killed by timeout") as log lines, not console text.
      logger: {
        error: (message: unknown) =>
          typeof message === 'string' ? logger.error(message) : logger.error({ err: message }, 'shutdown failed'),
      },
    },
    async ({ signal, err }) => {
      const started = Date.now();
      if (err) logger.error({ err }, 'shutting down after an error');
      else logger.info({ signal }, 'shutting down');
      for (const phase of phases) {
        const { timeoutMs } = phase;
        const outcome = await settle(
          Promise.resolve().then(() => phase.run()),
          timeoutMs,
        );
        if (outcome === 'done') logger.debug({ phase: phase.name }, 'shutdown phase done');
        else if (outcome === 'timed-out')
          logger.warn(
            { phase: phase.name, timeout_ms: timeoutMs },
            `shutdown phase ${phase.name} did not finish in time; moving on`,
          );
        else
          logger.warn(
            { phase: phase.name, reason: reasonOf(outcome.error) },
            `shutdown phase ${phase.name} failed; moving on`,
          );
      }
      logger.info({ ms: Date.now() - started }, 'stopped');
    },
  );
}

/** How a phase ended, within `ms`. */
async function settle(promise: Promise<unknown>, ms: number): Promise<'done' | 'timed-out' | { error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed-out'>((resolve) => {
    timer = setTimeout(() => resolve('timed-out'), ms);
  });
  try {
    return await Promise.race([promise.then(() => 'done' as const), timeout]);
  } catch (error) {
    return { error };
  } finally {
    clearTimeout(timer);
  }
}
