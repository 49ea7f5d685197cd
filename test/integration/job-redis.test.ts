import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/internal/config.ts';
import { openAlertRedis } from '../../src/services/alerts/alert-redis.ts';
import { createSearchStore } from '../../src/services/alerts/search-store.ts';
import { openJobAlertStores } from '../../src/start/alerts.ts';
import { openConnections, type Connections } from '../../src/start/connections.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';

// A busy Redis (a long script, a large pipeline ahead) answers late, not never: the request path
// answers 503 after 2 s, but a job that gave up would be redone whole, so the worker's stores wait.
// Its own redis-server: a busy shared one would stall every test file running beside this one.

let server: RedisServer;
let config: Config;
let connections: Connections;
let blocker: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  config = loadConfig({
    ...process.env,
    REDIS_URL: server.url,
    REDIS_PREFIX: `test-job-redis-${randomUUID().slice(0, 8)}`,
  });
  connections = openConnections(config);
  blocker = new Redis(config.REDIS_URL);
});
afterAll(async () => {
  blocker?.disconnect();
  await connections?.close();
  await server?.close();
});

/** Keeps Redis busy for `ms` (one script looping on TIME): every other client's commands wait. */
function busyRedis(ms: number): Promise<unknown> {
  const script = `
    local function now() local t = redis.call('TIME') return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end
    local start = now()
    while now() - start < tonumber(ARGV[1]) do end
    return 1`;
  return blocker.eval(script, 0, String(ms));
}

describe('a busy Redis', () => {
  it('fails a request-path command after 2 s but is waited out by the worker’s alert store', async () => {
    const api = createSearchStore(openAlertRedis({ redis: connections.redis(), prefix: config.REDIS_PREFIX }));
    const job = openJobAlertStores(config, connections).searches;
    expect(await connections.redisReady()).toBe(true);
    // The job connection opens on first use: ready before Redis turns busy.
    for (let i = 0; ; i++) {
      if ((await job.count().catch(() => null)) !== null) break;
      if (i > 50) throw new Error('the job connection never became ready');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const busy = busyRedis(3_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const [fromApi, fromJob] = await Promise.allSettled([api.count(), job.count()]);
    await busy;
    expect(fromApi.status).toBe('rejected');
    expect((fromApi as PromiseRejectedResult).reason.message).toBe('the alert store is unreachable');
    expect(fromJob).toEqual({ status: 'fulfilled', value: 0 });
    expect(performance.now() - started).toBeGreaterThan(2_000);
  });
});
