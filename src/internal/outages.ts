import { fieldOf } from './typed-objects.ts';

/**
 * Outage logging: a dependency that goes away is reported once when it goes and once when it is
 * back, however many reconnect attempts, failed commands and driver events happen in between.
 * A process watches each of its connections through one {@link OutageLog}; whatever else hears
 * about the same outage (BullMQ's `error` events, a failed request) asks {@link isConnectionError}
 * and stays quiet, since the outage is already in the log.
 */

/** What an outage log writes to (pino's shape). */
export interface OutageLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** One logical connection's outage state: several physical connections may report into it. */
export interface OutageLog {
  /** `member` (one physical connection; default: the log itself) failed with `error`. */
  down(error: unknown, member?: object): void;
  /** `member` works again. The outage ends when every member that went down is back. */
  up(member?: object): void;
  /** `member` is closed on purpose: it no longer counts, and its leaving logs nothing. */
  leave(member: object): void;
  /** True while at least one member is down. */
  readonly isDown: boolean;
}

/**
 * An outage log for the dependency `name` ("Redis", "Redis (queue worker)", "Elasticsearch").
 * Logs one warn line when the first member goes down, with the first error's message (never a
 * stack: an unreachable server is not a bug), and one info line with the outage's length when
 * the last member is back.
 */
export function createOutageLog(name: string, logger?: OutageLogger, now: () => number = Date.now): OutageLog {
  const failing = new Set<object>();
  let since = 0;
  const self: OutageLog = {
    down(error, member = self) {
      if (failing.size === 0) {
        since = now();
        logger?.warn({ dependency: name, reason: reasonOf(error) }, `${name} unreachable; retrying until it is back`);
      }
      failing.add(member);
    },
    up(member = self) {
      if (!failing.delete(member) || failing.size > 0) return;
      const seconds = Math.round((now() - since) / 100) / 10;
      logger?.info({ dependency: name, down_seconds: seconds }, `${name} reachable again after ${seconds} s`);
    },
    leave(member) {
      failing.delete(member);
    },
    get isDown() {
      return failing.size > 0;
    },
  };
  return self;
}

// Node socket errors and ioredis' own messages for a connection that is down or closing.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES =
  /Connection is closed|Stream isn't writeable|Command timed out|max retries per request|connect ETIMEDOUT|Socket closed unexpectedly/i;

/**
 * True when `error` only says a connection is down (refused, reset, closed, timed out), as
 * opposed to a bug or a server's refusal of a command. Looks through `cause` chains, so a
 * domain error wrapping a driver error counts too.
 */
export function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Object && depth < 5; depth++) {
    const [code, message, name] = [fieldOf(current, 'code'), fieldOf(current, 'message'), fieldOf(current, 'name')];
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
    current = fieldOf(current, 'cause');
  }
  return false;
}

/** A one-line reason for a log: the error's message (and its cause's), never a stack. */
export function reasonOf(error: unknown): string {
  if (!(error instanceof Object)) return String(error);
  const [message, cause] = [fieldOf(error, 'message'), fieldOf(error, 'cause')];
  const own =
    typeof message === 'string' && message !== ''
      ? message
      : error instanceof Error
        ? error.name
        : Object.prototype.toString.call(error);
  const inner = fieldOf(cause, 'message');
  return typeof inner === 'string' && inner !== '' && inner !== own ? `${own} (${inner})` : own;
}
