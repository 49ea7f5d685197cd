/**
 * One API node inside the bench's own process, on an index the caller names (INDEX_PREFIX), for
 * latency benches that compare it with the raw engine (the other shape, the service as child
 * processes on a fresh prefix, is service-stack.ts).
 */
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/internal/config.ts';
import { createApi, type Api } from '../../src/start/api.ts';
import { openKeys } from '../../src/start/core.ts';
import { openServiceProcess, type ServiceProcess } from '../../src/start/process.ts';

/**
 * The service's configuration for a bench in this process: production mode (no per-response
 * schema check), a fresh signing secret, `defaults` unless the environment says otherwise,
 * `overrides` whatever it says.
 */
export function benchConfig(defaults: Record<string, string> = {}, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'production',
    SIGNING_SECRET: randomBytes(32).toString('hex'),
    ...defaults,
    ...process.env,
    ...overrides,
  });
}

/** An API node in the bench's own process ({@link startInProcessApi}). */
export interface InProcessApi {
  config: Config;
  service: ServiceProcess;
  /** Null when `API_URL` names a service running elsewhere. */
  api: Api | null;
  /** Base URL the bench sends its requests to. */
  address: string;
  /** A key with the asked scopes (default `search`; none: no key), created in the prefix's key store. */
  key: string;
  close(): Promise<void>;
}

/**
 * Opens the service's parts on the environment's INDEX_PREFIX / REDIS_PREFIX and serves the API on
 * a free loopback port in this process, configured by {@link benchConfig} (`defaults` e.g. a rate
 * limit far above the bench's pace: the limiter runs and is measured, never trips; `overrides`
 * e.g. `SEARCH_RANKING`). With `apiUrl` (a service run as `social-search serve` on
 * the same prefixes, so the load generator and the service do not share an event loop) nothing
 * listens here and only the key is made. `model`: wait for the embedder and fail unless it is ready.
 */
export async function startInProcessApi(options: {
  name: string;
  defaults?: Record<string, string>;
  overrides?: Record<string, string>;
  scopes?: Array<'search' | 'ingest'>;
  apiUrl?: string;
  model?: boolean;
  listen?: boolean;
}): Promise<InProcessApi> {
  const config = benchConfig(options.defaults, options.overrides);
  const service = openServiceProcess(config);
  const { connections, engine, embedder } = service;
  await connections.redisReady();
  if (options.model) {
    await embedder.ready();
    if (embedder.status().state !== 'ready') throw new Error('set MODEL_DIR: this bench needs the model');
  }
  const api = options.apiUrl ? null : createApi(config, connections, { engine, embedder });
  const address =
    options.apiUrl ?? (options.listen === false ? '' : await api!.app.listen({ host: '127.0.0.1', port: 0 }));
  const keys = openKeys(config, connections, { cached: false });
  const scopes = options.scopes ?? ['search'];
  const key =
    scopes.length > 0 ? (await keys.create({ owner: 'bench@example.com', name: options.name, scopes })).key : '';
  return {
    config,
    service,
    api,
    address,
    key,
    async close() {
      await api?.close();
      await keys.close();
      await service.close();
    },
  };
}
