import { pino, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.ts';

/** Fields that must never reach a log line: credentials, wherever a logger meets them. */
export const LOG_REDACTIONS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'];

// Query parameters that carry a credential: a delivery URL's signature (a day's access to media)
// and a dashboard invitation code.
const SECRET_PARAMS = /([?&](?:sig|invitation)=)[^&#]*/g;

/** A request URL fit for a log line: credentials in its query string are replaced. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

/** Fastify's request fields, with the URL made loggable. */
function serializeRequest(req: {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}) {
  return {
    method: req.method,
    url: req.url === undefined ? undefined : loggableUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** The process logger's options: JSON lines, credentials redacted wherever they appear. */
export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    base: { service: 'social-search' },
    redact: {
      paths: [...LOG_REDACTIONS, 'key', 'secret', '*.key', '*.secret', '*.authorization'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { req: serializeRequest },
  };
}

/** The process logger: pino JSON on stdout (or stderr for CLI commands whose stdout is data). */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination: 1 | 2 = 1): Logger {
  return pino(loggerOptions(config), pino.destination(destination));
}
