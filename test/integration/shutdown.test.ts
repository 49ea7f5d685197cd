import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/internal/config.ts';
import { generateKey } from '../../src/services/keys/key-format.ts';
import { openConnections } from '../../src/start/connections.ts';
import { openEngine } from '../../src/start/core.ts';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { until } from '../helpers/wait.ts';

// Ctrl+C (SIGINT) or SIGTERM of a long-running process while Redis, and Elasticsearch, are down:
// it stops within its deadline with exit code 0, and its log says each outage once, with no
// stack trace. The processes run as an operator runs them (the real executable), on their own
// redis-server, which the test stops for real.

let redis: RedisServer;
const prefix = `test-shutdown-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  redis = await startRedisServer();
});
// Each test stops it; the next starts it again.
beforeEach(async () => {
  if (!(await redis.command('PING').catch(() => '')).startsWith('+PONG')) await redis.start();
});
afterAll(async () => {
  await redis?.close();
  // quickstart installs templates and indices under this file's prefix.
  const config = loadConfig({ ...process.env, INDEX_PREFIX: prefix });
  const connections = openConnections(config);
  await openEngine(config, connections).admin.destroy();
  await connections.close();
});

/** A running `social-search` subprocess and everything it has written so far. */
interface Running {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output matches `pattern`. */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  /** Sends `signal` and resolves with the exit code and how long the process took to exit. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

function run(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['bin/social-search.js', ...args], {
    env: {
      ...process.env,
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      INDEX_PREFIX: prefix,
      EMBEDDINGS: 'off',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(output)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${pattern} within ${ms} ms; output:\n${output}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then(() => {
          if (!pattern.test(output)) {
            cleanup();
            reject(new Error(`exited before ${pattern}; output:\n${output}`));
          }
        });
        check();
      });
    },
    async stop(signal) {
      const started = performance.now();
      child.kill(signal);
      const code = await Promise.race([
        exited,
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000)),
      ]);
      if (code === 'hung') child.kill('SIGKILL');
      return { code: code === 'hung' ? null : code, ms: performance.now() - started };
    },
  };
}

/** Log lines (pino JSON) whose message matches `pattern`. */
function lines(output: string, pattern: RegExp): string[] {
  return output.split('\n').filter((line) => pattern.test(line));
}

/** What every stop must look like: prompt, clean, and each outage said once without a stack. */
function expectCleanStop(stopped: { code: number | null; ms: number }, output: string, dependencies: string[]) {
  expect(stopped.code, output).toBe(0);
  expect(stopped.ms, output).toBeLessThan(10_000);
  expect(output).not.toMatch(/"stack"|\n\s+at /);
  for (const dependency of dependencies) {
    const escaped = dependency.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(lines(output, new RegExp(`"msg":"${escaped} unreachable`)), dependency).toHaveLength(1);
  }
  expect(output).toMatch(/"msg":"stopped"/);
}

describe('signals that are not a stop', () => {
  it('worker: SIGUSR2 with --heapsnapshot-signal writes a heap snapshot and the worker goes on', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'heap-snapshot-'));
    const worker = run(['worker'], {
      NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}`,
    });
    try {
      await worker.waitFor(/"msg":"worker running"/);
      worker.child.kill('SIGUSR2');
      await until(() => readdirSync(dir).some((name) => name.endsWith('.heapsnapshot')), {
        timeoutMs: 30_000,
        what: 'a heap snapshot',
      });
      // A stop would begin right after the snapshot (it was an orderly shutdown): give it time to.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(worker.child.exitCode).toBeNull();
      expect(worker.output()).not.toMatch(/"msg":"shutting down"/);
      expectCleanStop(await worker.stop('SIGTERM'), worker.output(), []);
    } finally {
      worker.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('shutdown while the services are down', () => {
  it('worker: SIGTERM with Redis down', async () => {
    const worker = run(['worker'], {});
    try {
      await worker.waitFor(/"msg":"worker running"/);
      await redis.stop();
      await worker.waitFor(/Redis \(queue worker\) unreachable/);
      // Reconnect attempts go on meanwhile: none of them may add to the log.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expectCleanStop(await worker.stop('SIGTERM'), worker.output(), ['Redis', 'Redis (queue worker)']);
    } finally {
      worker.child.kill('SIGKILL');
    }
  });

  it('serve: SIGTERM with Redis and Elasticsearch down, after answering 503s', async () => {
    const port = await freePort();
    const deadEngine = `http://127.0.0.1:${await freePort()}`;
    const api = run(['serve'], { PORT: String(port), ELASTICSEARCH_URL: deadEngine });
    try {
      await api.waitFor(/"msg":"API listening"/);
      await redis.stop();
      await api.waitFor(/"msg":"Redis unreachable/);
      const base = `http://127.0.0.1:${port}`;
      // A well-formed key the API cannot check without Redis.
      const key = generateKey().key;
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${base}/v1/social/accounts/@anyone`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await response.body?.cancel();
        expect(response.status).toBe(503);
      }
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      const output = api.output();
      expectCleanStop(await api.stop('SIGTERM'), api.output(), ['Redis', 'Elasticsearch']);
      // Each 503 says what it answered, on one line.
      expect(lines(output, /"problem":"service-unavailable"/)).toHaveLength(5);
    } finally {
      api.child.kill('SIGKILL');
    }
  });

  it('quickstart: Ctrl+C with Redis down', async () => {
    const port = await freePort();
    const quickstart = run(['quickstart', '--posts', '0', '--accounts', '0'], {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    });
    try {
      await quickstart.waitFor(/Press Ctrl\+C to stop/, 60_000);
      await redis.stop();
      await quickstart.waitFor(/Redis \(queue worker\) unreachable/);
      // The shared connection reports at its first failed reconnect, which may come a little later
      // on a loaded machine: stop once both have, so the check is about the log, not a race.
      await quickstart.waitFor(/"msg":"Redis unreachable/);
      expectCleanStop(await quickstart.stop('SIGINT'), quickstart.output(), ['Redis', 'Redis (queue worker)']);
    } finally {
      quickstart.child.kill('SIGKILL');
    }
  });
});
