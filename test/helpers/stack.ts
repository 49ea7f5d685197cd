import type { FastifyInstance, InjectOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/internal/config.ts';
import { openTestRuntime, type TestRuntime } from './runtime.ts';

/** A running service on the real Elasticsearch and Redis, isolated by unique prefixes. */
export interface Stack {
  config: Config;
  runtime: TestRuntime;
  app: FastifyInstance;
  /** A key with both scopes. */
  key: string;
  /** Sends observations through the HTTP intake (NDJSON), waiting for indexing by default. */
  /** Sends observations to the intake; waited (`?wait=vectors`) unless `wait: false`, or `vectors: false` (`?wait=true`). */
  ingest(
    observations: unknown[],
    options?: { wait?: boolean; vectors?: boolean },
  ): Promise<{ statusCode: number; body: any }>;
  /** GET with the stack's key (or the given Authorization header value; null for none). */
  get(
    path: string,
    authorization?: string | null,
  ): Promise<{ statusCode: number; headers: Record<string, unknown>; body: any }>;
  inject(options: InjectOptions): Promise<{ statusCode: number; headers: Record<string, unknown>; body: any }>;
  /** POST a JSON body with the stack's key (the search operations). */
  post(path: string, body: unknown): Promise<{ statusCode: number; headers: Record<string, unknown>; body: any }>;
  close(): Promise<void>;
}

/** Starts a stack for one test file. `name` makes leftovers attributable. */
export async function startStack(
  name: string,
  env: Record<string, string> = {},
  options: { worker?: boolean } = {},
): Promise<Stack> {
  const id = randomUUID().slice(0, 8);
  const config = loadConfig({
    ...process.env,
    INDEX_PREFIX: `test-${name}-${id}`,
    REDIS_PREFIX: `test-${name}-${id}`,
    PUBLIC_BASE_URL: 'https://api.example.test',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    INTAKE_WAIT_TIMEOUT_MS: '30000',
    // Cursor walks make hundreds of searches a minute with one key; rate-limit.test.ts sets its own.
    RATE_LIMIT_SEARCH_PER_MINUTE: '100000',
    // Tests of refusals send them one after another; refusal-pause.test.ts turns the pause on.
    RATE_LIMIT_REFUSAL_PAUSE_MS: '0',
    ...env,
  });
  const runtime = openTestRuntime(config);
  await runtime.ready();
  await runtime.indexAdmin.apply();
  const logger = pino({ level: 'silent' });
  if (options.worker !== false) runtime.startWorkerProcess(logger);
  const app = runtime.api.app;
  await app.ready();
  const created = await runtime.api.keys.create({ owner: 'tests@example.com', name, scopes: ['search', 'ingest'] });

  const inject: Stack['inject'] = async (opts) => {
    const response = await app.inject(opts);
    let body: unknown = response.body;
    try {
      body = response.json();
    } catch {
      /* not JSON */
    }
    return { statusCode: response.statusCode, headers: response.headers, body };
  };

  return {
    config,
    runtime,
    app,
    key: created.key,
    inject,
    post(path, body) {
      return inject({
        method: 'POST',
        url: path,
        headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    },
    ingest(observations, { wait = true, vectors = true } = {}) {
      return inject({
        method: 'POST',
        // Waited, vectors included by default: what a test ingests is searchable by meaning at once.
        url: `/internal/v1/social/observations${wait ? `?wait=${vectors ? 'vectors' : 'true'}` : ''}`,
        headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/x-ndjson' },
        payload: observations.map((o) => JSON.stringify(o)).join('\n'),
      });
    },
    get(path, authorization) {
      const headers: Record<string, string> = {};
      if (authorization !== null) headers.authorization = authorization ?? `Bearer ${created.key}`;
      return inject({ method: 'GET', url: path, headers });
    },
    async close() {
      // The whole API, not only its app: its usage recorder flushes once more when closed, which
      // after the clean-up below left usage keys behind.
      await runtime.api.close();
      await runtime.stopWorkers();
      await runtime.queue.obliterate({ force: true }).catch(() => undefined);
      await runtime.indexAdmin.destroy();
      const keys = await runtime.redis.keys(`${config.REDIS_PREFIX}:*`);
      if (keys.length > 0) await runtime.redis.del(...keys);
      await runtime.close();
    },
  };
}
