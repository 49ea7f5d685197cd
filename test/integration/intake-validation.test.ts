import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/internal/config.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const URL_PATH = '/internal/v1/social/observations';
const PROBLEMS = 'https://api.example.test/problems';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('intake-validation');
});
afterAll(async () => stack?.close());

function post(body: string, contentType: string, options: { wait?: boolean; key?: string | null } = {}) {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? stack.key}`;
  return stack.inject({
    method: 'POST',
    url: `${URL_PATH}${options.wait === false ? '' : '?wait=true'}`,
    headers,
    payload: body,
  });
}

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; body: any },
  status: number,
  name: string,
) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    type: `${PROBLEMS}/${name}`,
    status,
    request_id: response.headers['x-request-id'],
  });
  expect(typeof response.body.detail).toBe('string');
}

/** Polls `probe` until it returns true, at most `ms`. */
async function eventually(probe: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('line validation', () => {
  it('reports each bad NDJSON line with its 1-based line number and field pointer, and indexes the good ones', async () => {
    const good = (o: object) => JSON.stringify(o);
    const { handle: _h, ...noHandle } = accountObs({ platform_id: 'v-nohandle' });
    const badMedia = postObs('v-acc', { platform_id: 'v-badmedia' });
    delete (badMedia.media[0] as Record<string, unknown>).width;
    const lines = [
      good(accountObs({ platform_id: 'v-acc', handle: 'valid.author' })), // 1
      '', // 2 (blank lines are counted)
      '{"kind": "account", "platform_id": ', // 3 not JSON
      good({ kind: 'tweet', platform_id: 'x', observed_at: '2026-06-01T10:00:00Z' }), // 4 unknown kind
      good(noHandle), // 5 missing field
      good(postObs('v-acc', { platform_id: 'v-tz', observed_at: '2026-06-01T10:00:00+02:00' })), // 6 not UTC
      good(postObs('v-acc', { platform_id: 'v-date', posted_at: '2026-02-30T10:00:00Z' })), // 7 no such date
      good(accountObs({ platform_id: 'v-extra', nickname: 'nick' })), // 8 unknown field
      good(accountObs({ platform_id: 'v-type', followers_count: '12k' })), // 9 wrong type
      `${good(postObs('v-acc', { platform_id: 'v-post', shortcode: 'ValidPost1' }))}\r`, // 10 (CRLF)
      '   ', // 11
      good(badMedia), // 12 nested missing field
      good(postEnrichmentObs('v-post', { topics: ['validated_topic'] })), // 13
    ];
    const response = await post(`${lines.join('\n')}\n`, 'application/x-ndjson');
    expect(response.statusCode).toBe(200);
    expect(response.body.request_id).toBe(response.headers['x-request-id']);
    expect(response.body.accepted).toBe(3);
    const rejected = response.body.rejected as Array<{ line: number; detail: string }>;
    expect(rejected.map((r) => r.line)).toEqual([3, 4, 5, 6, 7, 8, 9, 12]);
    const detail = Object.fromEntries(rejected.map((r) => [r.line, r.detail]));
    expect(detail[3]).toMatch(/JSON/);
    expect(detail[4]).toMatch(/^\/kind: .*"account"/);
    expect(detail[5]).toMatch(/^\/handle: required/);
    expect(detail[6]).toMatch(/^\/observed_at: .*UTC/);
    expect(detail[7]).toMatch(/^\/posted_at: .*2026-02-30/);
    expect(detail[8]).toBe('/nickname: unknown field');
    expect(detail[9]).toMatch(/^\/followers_count: .*number/);
    expect(detail[12]).toMatch(/^\/media\/0\/width: required/);

    const got = await stack.get(`/v1/social/posts/${mintId('post', 'v-post')}`);
    expect(got.statusCode).toBe(200);
    expect(got.body).toMatchObject({
      shortcode: 'ValidPost1',
      topics: ['validated_topic'],
      author: { handle: 'valid.author' },
    });
    for (const id of ['v-nohandle', 'v-extra', 'v-type']) {
      expect((await stack.get(`/v1/social/accounts/${mintId('account', id)}`)).statusCode, id).toBe(404);
    }
    expect((await stack.get(`/v1/social/posts/${mintId('post', 'v-tz')}`)).statusCode).toBe(404);
  });

  it('accepts a JSON array, numbering entries by array position', async () => {
    const body = [accountObs({ platform_id: 'v-arr', handle: 'array.author' }), { platform_id: 'no-kind' }, 'a string'];
    const response = await post(JSON.stringify(body), 'application/json');
    expect(response.statusCode).toBe(200);
    expect(response.body.accepted).toBe(1);
    expect(response.body.rejected).toEqual([
      { line: 2, detail: expect.stringMatching(/^\/kind:/) },
      { line: 3, detail: expect.any(String) },
    ]);
    expect((await stack.get('/v1/social/accounts/array.author')).body.id).toBe(mintId('account', 'v-arr'));
  });

  it('answers 202 at once without wait; the observation becomes visible shortly after', async () => {
    const response = await stack.ingest([accountObs({ platform_id: 'v-async', handle: 'async.author' })], {
      wait: false,
    });
    expect(response.statusCode).toBe(202);
    expect(response.body).toMatchObject({ accepted: 1, rejected: [] });
    await eventually(
      async () => (await stack.get(`/v1/social/accounts/${mintId('account', 'v-async')}`)).statusCode === 200,
    );
  });
});

describe('whole-request errors', () => {
  it('answers 400 for a JSON body that is not an array and for empty bodies', async () => {
    expectProblem(await post(JSON.stringify(accountObs()), 'application/json'), 400, 'malformed-request');
    expectProblem(await post('', 'application/x-ndjson'), 400, 'malformed-request');
    expectProblem(await post('\n\n', 'application/x-ndjson'), 400, 'malformed-request');
    expectProblem(await post('', 'application/json'), 400, 'malformed-request');
    expectProblem(await post('[', 'application/json'), 400, 'malformed-request');
  });

  it('answers 415 for another content type', async () => {
    expectProblem(await post(JSON.stringify(accountObs()), 'text/plain'), 415, 'unsupported-media-type');
  });

  it('answers 413 beyond 5,000 observations or 20 MiB, and accepts nothing', async () => {
    // Jobs of earlier tests may still move between states: count all jobs, whatever their state.
    const totalJobs = async () => Object.values(await stack.runtime.queue.getJobCounts()).reduce((a, b) => a + b, 0);
    const before = await totalJobs();
    const many = Array.from({ length: 5001 }, (_, i) => JSON.stringify(accountObs({ platform_id: `v-big-${i}` })));
    expectProblem(await post(many.join('\n'), 'application/x-ndjson'), 413, 'payload-too-large');
    // bad lines count too: 5,000 good lines plus one bad one is still too many
    expectProblem(
      await post([...many.slice(0, 5000), '{oops'].join('\n'), 'application/x-ndjson'),
      413,
      'payload-too-large',
    );
    const huge = JSON.stringify(postObs('v-acc', { platform_id: 'v-huge', caption: 'x'.repeat(21 * 1024 * 1024) }));
    expectProblem(await post(huge, 'application/x-ndjson'), 413, 'payload-too-large');
    expect(await totalJobs()).toBe(before);
    expect((await stack.get(`/v1/social/accounts/${mintId('account', 'v-big-0')}`)).statusCode).toBe(404);
    // exactly 5,000 is allowed
    const ok = await post(many.slice(0, 5000).join('\n'), 'application/x-ndjson', { wait: false });
    expect(ok.statusCode).toBe(202);
    expect(ok.body.accepted).toBe(5000);
  });

  it('needs a key with the ingest scope', async () => {
    const searchOnly = await stack.runtime.api.keys.create({
      owner: 'reader@example.com',
      name: 'reader',
      scopes: ['search'],
    });
    const body = JSON.stringify(accountObs({ platform_id: 'v-denied' }));
    expectProblem(await post(body, 'application/x-ndjson', { key: searchOnly.key }), 403, 'insufficient-scope');
    expectProblem(await post(body, 'application/x-ndjson', { key: null }), 401, 'authentication-required');
    expect((await stack.get(`/v1/social/accounts/${mintId('account', 'v-denied')}`)).statusCode).toBe(404);
  });
});

describe('outages', () => {
  /** A runtime and app built by hand: startStack would fail installing indices on a dead engine. */
  async function degraded(env: Record<string, string>, prefix: string) {
    const runtime = openTestRuntime(
      loadConfig({
        ...process.env,
        INDEX_PREFIX: prefix,
        REDIS_PREFIX: prefix,
        PUBLIC_BASE_URL: 'https://api.example.test',
        LOG_LEVEL: 'silent',
        NODE_ENV: 'test',
        ...env,
      }),
    );
    const app = runtime.api.app;
    await app.ready();
    return { runtime, app };
  }

  async function timed(run: () => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>) {
    const started = Date.now();
    const response = await run();
    return {
      ms: Date.now() - started,
      statusCode: response.statusCode,
      headers: response.headers,
      body: JSON.parse(response.body),
    };
  }

  async function clearRedis(runtime: TestRuntime, prefix: string) {
    await runtime.queue.obliterate({ force: true }).catch(() => undefined);
    const keys = await runtime.redis.keys(`${prefix}:*`);
    if (keys.length > 0) await runtime.redis.del(...keys);
  }

  it('answers 503 within 5 s while Elasticsearch is unreachable, and queues intake for when it returns', async () => {
    const prefix = `test-intake-es-down-${randomUUID().slice(0, 8)}`;
    const { runtime, app } = await degraded({ ELASTICSEARCH_URL: 'http://127.0.0.1:1' }, prefix);
    let recovered: TestRuntime | undefined;
    try {
      expect(await runtime.ready()).toBe(true);
      const { key } = await runtime.api.keys.create({
        owner: 'ops@example.com',
        name: 'es-down',
        scopes: ['search', 'ingest'],
      });
      const authorization = `Bearer ${key}`;
      for (const url of [`/v1/social/posts/${mintId('post', 'x')}`, `/v1/social/accounts/${mintId('account', 'x')}`]) {
        const r = await timed(() => app.inject({ method: 'GET', url, headers: { authorization } }));
        expect(r.statusCode, url).toBe(503);
        expect(r.ms).toBeLessThan(5000);
        expect(r.body).toMatchObject({ type: `${PROBLEMS}/service-unavailable`, status: 503 });
        expect(r.headers['retry-after']).toBeDefined();
      }
      // intake does not need the engine: the observation is queued in Redis...
      const queued = await app.inject({
        method: 'POST',
        url: URL_PATH,
        headers: { authorization, 'content-type': 'application/x-ndjson' },
        payload: [
          accountObs({ platform_id: 'es-down-acc', handle: 'survivor' }),
          postObs('es-down-acc', { platform_id: 'es-down-post' }),
        ]
          .map((o) => JSON.stringify(o))
          .join('\n'),
      });
      expect(queued.statusCode).toBe(202);
      expect(queued.json().accepted).toBe(2);
      // ...and indexed once a worker reaches a working engine
      recovered = openTestRuntime(
        loadConfig({
          ...process.env,
          INDEX_PREFIX: prefix,
          REDIS_PREFIX: prefix,
          LOG_LEVEL: 'silent',
          NODE_ENV: 'test',
        }),
      );
      await recovered.indexAdmin.apply();
      const worker = recovered.startWorkerProcess(pino({ level: 'silent' }));
      try {
        const id = mintId('post', 'es-down-post');
        await eventually(
          async () =>
            (await recovered!.engine.intake.posts.get([id])).get(id)?.accounts[mintId('account', 'es-down-acc')] !==
            undefined,
        );
      } finally {
        await worker.close();
      }
    } finally {
      // The whole API, not only its app: its usage recorder flushes once more when closed, which
      // after the clean-up left usage keys behind.
      await runtime.api.close();
      await clearRedis(runtime, prefix);
      await recovered?.indexAdmin.destroy();
      await recovered?.close();
      await runtime.close();
    }
  });

  it('answers 503 within 5 s while Redis is unreachable (reads and intake both authenticate through it)', async () => {
    const prefix = `test-intake-redis-down-${randomUUID().slice(0, 8)}`;
    const { runtime, app } = await degraded({ REDIS_URL: 'redis://127.0.0.1:1' }, prefix);
    try {
      const authorization = `Bearer ${stack.key}`;
      const requests = [
        () => app.inject({ method: 'GET', url: `/v1/social/posts/${mintId('post', 'x')}`, headers: { authorization } }),
        () => app.inject({ method: 'GET', url: '/v1/social/accounts/someone', headers: { authorization } }),
        () =>
          app.inject({
            method: 'POST',
            url: URL_PATH,
            headers: { authorization, 'content-type': 'application/x-ndjson' },
            payload: JSON.stringify(accountObs({ platform_id: 'redis-down' })),
          }),
      ];
      for (const request of requests) {
        const r = await timed(request);
        expect(r.statusCode).toBe(503);
        expect(r.ms).toBeLessThan(5000);
        expect(r.body).toMatchObject({ type: `${PROBLEMS}/service-unavailable`, status: 503 });
      }
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
