import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../src/internal/config.ts';
import { freePort } from './redis-server.ts';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** An API node in a process of its own (`social-search serve`), as operators run several; or a worker. */
export interface ApiProcess {
  url: string;
  pid: number;
  /** What it logged so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `social-search serve` on a free port with the configuration of `config` (same indices,
 * same Redis prefix) plus `env`, and waits until `/healthz` answers. `selfBaseUrl`: its own
 * address is its PUBLIC_BASE_URL (for a browser). `command: 'worker'` starts `social-search worker`
 * instead and waits until it says it is running (its `url` then answers nothing).
 */
export async function startApiProcess(
  config: Config,
  env: Record<string, string> = {},
  options: { selfBaseUrl?: boolean; command?: 'serve' | 'worker' } = {},
): Promise<ApiProcess> {
  const command = options.command ?? 'serve';
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'bin/social-search.js'), command], {
    cwd: ROOT,
    env: {
      ...process.env,
      ELASTICSEARCH_URL: config.ELASTICSEARCH_URL.join(','),
      REDIS_URL: config.REDIS_URL,
      INDEX_PREFIX: config.INDEX_PREFIX,
      REDIS_PREFIX: config.REDIS_PREFIX,
      PUBLIC_BASE_URL: config.PUBLIC_BASE_URL,
      SIGNING_SECRET: config.SIGNING_SECRET,
      EMBEDDINGS: 'off',
      NODE_ENV: 'test',
      LOG_LEVEL: command === 'worker' ? 'info' : 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      // A browser needs links and cookies for the address it really talks to.
      ...(options.selfBaseUrl ? { PUBLIC_BASE_URL: url } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the ${command} process exited at start:\n${output}`);
    const up =
      command === 'worker'
        ? output.includes('"msg":"worker running"')
        : await fetch(`${url}/healthz`).then(
            (r) => r.ok,
            () => false,
          );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the ${command} process did not start:\n${output}`);
    }
    await sleep(100);
  }
  return {
    url,
    pid: child.pid!,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
      await exited;
    },
  };
}
