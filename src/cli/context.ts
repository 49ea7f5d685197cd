import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../internal/config.ts';
import { DomainError } from '../internal/errors.ts';
import { createLogger } from '../internal/logger.ts';
import { createRuntime, type Runtime } from '../start/runtime.ts';

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

/**
 * Runs a one-shot command with a runtime, closing it afterwards. Domain errors print their detail
 * (never a stack trace) and exit 1. Logs go to stderr: stdout is the command's output.
 */
export async function runCommand(fn: (runtime: Runtime, logger: Logger) => Promise<number | void>): Promise<void> {
  const config = configOrExit();
  const logger = createLogger({ LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL }, 2);
  const runtime = createRuntime(config, logger);
  let code: number = EXIT.ok;
  try {
    await runtime.ready();
    code = (await fn(runtime, logger)) ?? EXIT.ok;
  } catch (error) {
    if (error instanceof DomainError) {
      process.stderr.write(`social-search: ${error.detail}\n`);
      code = EXIT.failed;
    } else {
      process.stderr.write(`social-search: ${(error as Error).stack ?? String(error)}\n`);
      code = EXIT.failed;
    }
  } finally {
    await runtime.close();
  }
  process.exitCode = code;
}

/** Writes one line of output. */
export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}
