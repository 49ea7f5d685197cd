import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../internal/config.ts';
import { DomainError } from '../internal/errors.ts';
import { createLogger } from '../internal/logger.ts';
import { openConnections, type Connections } from '../start/connections.ts';
import type { Closable } from '../start/core.ts';

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Loads the configuration, or prints why it is invalid and exits 2. */
export function configOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`social-search: ${error.message}\n`);
      process.exit(EXIT.usage);
    }
    throw error;
  }
}

/** What a one-shot command starts with; it builds the parts it uses from src/start. */
export interface CommandContext {
  config: Config;
  connections: Connections;
  logger: Logger;
  /** Registers something the command opened, to be closed when it ends; returns it. */
  use: <T extends Closable>(part: T) => T;
}

/**
 * Runs a one-shot command, closing what it opened afterwards. Domain errors print their detail
 * (never a stack trace) and exit 1. Logs go to stderr: stdout is the command's output.
 */
export async function runCommand(fn: (context: CommandContext) => Promise<number | void>): Promise<void> {
  const config = configOrExit();
  const logger = createLogger({ LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL }, 2);
  const connections = openConnections(config, logger);
  const opened: Closable[] = [];
  let code: number;
  try {
    code = (await fn({ config, connections, logger, use: (part) => (opened.push(part), part) })) ?? EXIT.ok;
  } catch (error) {
    process.stderr.write(
      `social-search: ${error instanceof DomainError ? error.detail : error instanceof Error && error.stack ? error.stack : String(error)}\n`,
    );
    code = EXIT.failed;
  } finally {
    for (const part of opened.reverse()) await part.close().catch(() => undefined);
    await connections.close();
  }
  process.exitCode = code;
}

/** Writes one line of output. */
export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}
