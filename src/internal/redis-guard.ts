import { InternalError, ServiceUnavailableError } from './errors.ts';

// Server replies that mean "busy or not ready", so a retry can succeed; other replies are bugs.
const TRANSIENT_REPLY = /^(LOADING|BUSY|OOM|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;

/** How a Redis-backed store runs its commands: bounded in time, failures translated. */
export interface RedisGuard {
  /** Runs `operation`, giving up after the timeout; driver failures become domain errors. */
  run<T>(this: void, operation: () => Promise<T>): Promise<T>;
  /** The values of a MULTI or pipeline result; throws its first failure. */
  unwrap(this: void, results: [Error | null, unknown][] | null): unknown[];
}

/**
 * Creates the guard of one store. `unreachable` is the 503 detail ("the key store is unreachable"):
 * the driver's own message names hosts and ports, so it is kept only as the `cause` (for logs).
 * The timeout matters for a Redis that accepts connections but never answers: the caller's client
 * may have no command timeout of its own.
 */
export function createRedisGuard(options: { unreachable: string; timeoutMs?: number }): RedisGuard {
  const { unreachable } = options;
  const timeoutMs = options.timeoutMs ?? 2_000;

  function translate(error: unknown): Error {
    if (error instanceof ServiceUnavailableError || error instanceof InternalError) return error;
    if (error instanceof Error && error.name === 'ReplyError' && !TRANSIENT_REPLY.test(error.message)) {
      return new InternalError(`${unreachable.replace(/ is unreachable$/, '')} rejected a command`, { cause: error });
    }
    return new ServiceUnavailableError(unreachable, { cause: error });
  }

  return {
    async run(operation) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ServiceUnavailableError(unreachable, { cause: new Error('timed out') })),
          timeoutMs,
        );
      });
      try {
        return await Promise.race([operation(), timeout]);
      } catch (error) {
        throw translate(error);
      } finally {
        clearTimeout(timer);
      }
    },
    unwrap(results) {
      if (!results) throw new ServiceUnavailableError(unreachable);
      return results.map(([error, value]) => {
        if (error) throw error;
        return value;
      });
    },
  };
}
