import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

/** Fields that must never reach a log line: credentials, wherever a logger meets them. */
export const LOG_REDACTIONS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'];

/** The process logger: pino JSON on stdout (or stderr for CLI commands whose stdout is data). */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination: 1 | 2 = 1): Logger {
  return pino(
    {
      level: config.LOG_LEVEL,
      base: { service: 'social-search' },
      redact: { paths: [...LOG_REDACTIONS, 'key', 'secret', '*.key', '*.secret', '*.authorization'], censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.destination(destination),
  );
}
