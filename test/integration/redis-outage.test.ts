import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountObs } from '../helpers/fixtures.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A Redis outage as clients see it: the intake refuses at once (503, nothing half-accepted),
// reads and searches keep answering for the keys this node already verified, a key it has never
// seen is a 503 (the service cannot tell), and everything works again once Redis is back.
// Its own redis-server, stopped and started for real: the shared one serves other test files.

const KEY_CACHE_TTL_MS = 200;
const KEY_CACHE_STALE_IF_ERROR_MS = 4000;
let redis: RedisServer;
let stack: Stack;

beforeAll(async () => {
  redis = await startRedisServer();
  stack = await startStack('redis-outage', {
    REDIS_URL: redis.url,
    KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS),
    KEY_CACHE_STALE_IF_ERROR_MS: String(KEY_CACHE_STALE_IF_ERROR_MS),
  });
});
afterAll(async () => {
  // Cleaning up needs Redis (the test may have failed while it was stopped).
  if (redis && !(await redis.command('PING').catch(() => '')).startsWith('+PONG')) await redis.start();
  await stack?.close();
  await redis?.close();
});

/** Sends a request and measures how long it took to answer. */
async function timed<T>(request: () => Promise<T>): Promise<{ response: T; ms: number }> {
  const started = performance.now();
  const response = await request();
  return { response, ms: performance.now() - started };
}

const bearer = (key: string) => `Bearer ${key}`;
const accountSearch = (key: string) =>
  stack.inject({
    method: 'POST',
    url: '/v1/social/accounts/search',
    headers: { authorization: bearer(key), 'content-type': 'application/json' },
    payload: JSON.stringify({ account: { query: 'outage' } }),
  });

describe('while Redis is down', () => {
  it('refuses intake at once, serves cached keys past their TTL, answers 503 for unseen keys, and recovers', async () => {
    expect(
      (
        await stack.ingest([
          accountObs({ platform_id: 'outage-a', handle: 'outage.reader', biography: 'outage drills' }),
        ])
      ).statusCode,
    ).toBe(200);
    // Verified on this node before the outage: the stack's key, and one revoked afterwards.
    expect((await stack.get('/v1/social/accounts/@outage.reader')).statusCode).toBe(200);
    const verifiedAt = Date.now();
    const revoked = await stack.runtime.api.keys.create({ owner: 'outage@example.com', name: 'revoked before' });
    expect((await stack.get('/v1/social/accounts/@outage.reader', bearer(revoked.key))).statusCode).toBe(200);
    await stack.runtime.api.keys.revoke(revoked.id);
    // Valid, but never seen by this node.
    const unseen = await stack.runtime.api.keys.create({ owner: 'outage@example.com', name: 'never used here' });

    await redis.stop();
    // Past the cache's TTL: what keeps the key working is the outage, not a fresh entry.
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_TTL_MS * 3));

    const intake = await timed(() =>
      stack.inject({
        method: 'POST',
        url: '/internal/v1/social/observations',
        headers: { authorization: bearer(stack.key), 'content-type': 'application/x-ndjson' },
        payload: JSON.stringify(accountObs({ platform_id: 'outage-b' })),
      }),
    );
    expect(intake.response.statusCode).toBe(503);
    expect(intake.response.body.type).toMatch(/\/problems\/service-unavailable$/);
    expect(intake.response.headers['retry-after']).toBe('5');
    expect(intake.ms).toBeLessThan(1000);

    const read = await timed(() => stack.get('/v1/social/accounts/@outage.reader'));
    expect(read.response.statusCode).toBe(200);
    expect(read.response.body.handle).toBe('outage.reader');
    // Searches go through the rate limiter, which cannot count: it lets them pass without waiting
    // on Redis, and does not invent a budget it could not read.
    for (let i = 0; i < 5; i++) {
      const search = await timed(() => accountSearch(stack.key));
      expect(search.response.statusCode).toBe(200);
      expect(search.response.body.data.map((a: { handle: string }) => a.handle)).toContain('outage.reader');
      expect(search.response.headers['ratelimit-remaining']).toBeUndefined();
      expect(search.ms).toBeLessThan(1000);
    }

    const unknown = await timed(() => stack.get('/v1/social/accounts/@outage.reader', bearer(unseen.key)));
    expect(unknown.response.statusCode).toBe(503);
    expect(unknown.ms).toBeLessThan(1000);
    // A revocation made before the outage is not undone by it.
    expect((await stack.get('/v1/social/accounts/@outage.reader', bearer(revoked.key))).statusCode).toBe(503);

    // Stale-if-error has a bound: past it, even a key seen before answers 503.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, verifiedAt + KEY_CACHE_STALE_IF_ERROR_MS + 200 - Date.now())),
    );
    expect((await stack.get('/v1/social/accounts/@outage.reader')).statusCode).toBe(503);

    await redis.start();
    // Ready means every request-path connection is back, the intake's included: it may reconnect
    // up to 2 s after the others, and until then the intake answered 503 (a flaky test, 6a3627e).
    expect(await stack.runtime.ready(10_000)).toBe(true);
    expect((await stack.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const after = await stack.ingest([accountObs({ platform_id: 'outage-c', handle: 'after.outage' })]);
    expect(after.statusCode).toBe(200);
    expect((await stack.get('/v1/social/accounts/@after.outage')).statusCode).toBe(200);
    expect((await stack.get('/v1/social/accounts/@after.outage', bearer(unseen.key))).statusCode).toBe(200);
    expect((await stack.get('/v1/social/accounts/@after.outage', bearer(revoked.key))).statusCode).toBe(401);
  });
});

describe('a worker started while Redis is down', () => {
  it('takes jobs once Redis is back, though it could not connect when it started', async () => {
    const server = await startRedisServer();
    const late = await startStack('redis-late-worker', { REDIS_URL: server.url }, { worker: false });
    try {
      await server.stop();
      late.runtime.startWorkerProcess(pino({ level: 'silent' }));
      // Long enough for the worker's first run to fail on its connection.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await server.start();
      expect(await late.runtime.ready(10_000)).toBe(true);
      const response = await late.ingest([accountObs({ platform_id: 'late-worker', handle: 'late.worker' })]);
      expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
      expect((await late.get('/v1/social/accounts/@late.worker')).statusCode).toBe(200);
    } finally {
      if (!(await server.command('PING').catch(() => '')).startsWith('+PONG')) await server.start();
      await late.close();
      await server.close();
    }
  });
});
