import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const problemType = (name: string) => `https://api.example.test/problems/${name}`;
const LIMIT = 3;

let stack: Stack;
// A second API node on the same Redis: the budget is per key, not per node.
let otherRuntime: TestRuntime;
let otherNode: FastifyInstance;
let other: string;

beforeAll(async () => {
  stack = await startStack('ratelimit', { RATE_LIMIT_SEARCH_PER_MINUTE: String(LIMIT) }, { worker: false });
  otherRuntime = openTestRuntime(stack.config);
  await otherRuntime.ready();
  otherNode = otherRuntime.api.app;
  await otherNode.ready();
  other = (
    await stack.runtime.api.keys.create({ owner: 'other@example.com', name: 'other customer', scopes: ['search'] })
  ).key;
});

afterAll(async () => {
  await otherNode.close();
  await otherRuntime.close();
  await stack.close();
});

const search = (app: FastifyInstance, key: string, path = '/v1/social/posts/search') =>
  app.inject({
    method: 'POST',
    url: path,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ post: { query: 'kite' } }),
  });

describe('search rate limit', () => {
  it('counts searches per key across API nodes and answers 429 rate-limit-exceeded with Retry-After', async () => {
    const first = await search(stack.app, stack.key);
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe(String(LIMIT));
    expect(first.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
    // The other node draws on the same budget, and account search on the same as post search.
    expect((await search(otherNode, stack.key)).headers['ratelimit-remaining']).toBe(String(LIMIT - 2));
    expect((await search(stack.app, stack.key, '/v1/social/accounts/search')).statusCode).toBe(422);

    const limited = await search(otherNode, stack.key);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    const problem = limited.json();
    expect(problem).toEqual({
      type: problemType('rate-limit-exceeded'),
      status: 429,
      request_id: limited.headers['x-request-id'],
      detail: expect.stringMatching(/3 searches per minute; retry in \d+ s/),
    });
  });

  it('leaves other keys, reads and unauthenticated requests alone', async () => {
    expect((await search(stack.app, stack.key)).statusCode).toBe(429);
    expect((await search(stack.app, other)).statusCode).toBe(200);
    // Reads are not searches.
    const read = await stack.get('/v1/social/posts/unknown-post');
    expect(read.statusCode).toBe(404);
    // Authentication comes first: a bad key is a 401, and cannot spend anyone's budget.
    const unauthenticated = await search(stack.app, stack.key.slice(0, -2) + 'xx');
    expect(unauthenticated.statusCode).toBe(401);
  });
});

describe('read rate limit in leases', () => {
  const READS = 200; // a lease of 2 beyond each counted request (a hundredth of the limit)
  const read = (app: FastifyInstance, key: string) =>
    app.inject({ method: 'GET', url: '/v1/social/taxonomies/niches', headers: { authorization: `Bearer ${key}` } });

  it('answers each node from its lease, never more than the limit across nodes, and counts in Redis once a lease', async () => {
    const created = await stack.runtime.api.keys.create({
      owner: 'leases@example.com',
      name: 'leases',
      scopes: ['search'],
    });
    await stack.runtime.api.keys.setLimits(created.id, { read: READS });
    const counter = `${stack.config.REDIS_PREFIX}:ratelimit:read:${created.id}`;
    const redis = stack.runtime.connections.redis();

    // The first read takes itself and a lease of 2; the next two spend the lease, in memory.
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++)
      remaining.push(String((await read(stack.app, created.key)).headers['ratelimit-remaining']));
    expect(remaining).toEqual(['199', '198', '197']);
    expect(Number(await redis.get(counter))).toBe(3);
    // The other node takes its own lease: the first node's is counted as spent.
    expect((await read(otherNode, created.key)).headers['ratelimit-remaining']).toBe('196');
    expect(Number(await redis.get(counter))).toBe(6);

    // Past the limit, both nodes refuse; no more is ever answered than the limit, and at most a
    // lease per node fewer.
    let answered = 4;
    let refused = 0;
    for (let i = 0; i < READS + 20; i++) {
      const status = (await read(i % 2 === 0 ? stack.app : otherNode, created.key)).statusCode;
      if (status === 200) answered++;
      else if (status === 429) refused++;
    }
    expect(answered).toBeLessThanOrEqual(READS);
    expect(answered).toBeGreaterThanOrEqual(READS - 2 * 2);
    expect(refused).toBe(READS + 24 - answered);
  });
});

describe('read rate limit in leases, in bursts', () => {
  it('keeps every unit a burst took: each is answered before the node asks Redis again', async () => {
    const created = await stack.runtime.api.keys.create({
      owner: 'burst@example.com',
      name: 'burst',
      scopes: ['search'],
    });
    await stack.runtime.api.keys.setLimits(created.id, { read: 1000 }); // leases of 10
    const counter = `${stack.config.REDIS_PREFIX}:ratelimit:read:${created.id}`;
    const redis = stack.runtime.connections.redis();
    const read = () =>
      stack.app.inject({
        method: 'GET',
        url: '/v1/social/taxonomies/niches',
        headers: { authorization: `Bearer ${created.key}` },
      });

    // Twenty at once: each may take a lease before any answers.
    const burst = await Promise.all(Array.from({ length: 20 }, read));
    expect(burst.every((r) => r.statusCode === 200)).toBe(true);
    // Then one at a time until the node asks Redis again: the leases the burst took were spent first.
    let answered = burst.length;
    const counted = Number(await redis.get(counter));
    while (Number(await redis.get(counter)) === counted) {
      expect((await read()).statusCode).toBe(200);
      answered++;
    }
    // Every unit Redis counted before that was answered: none was lost to a replaced lease.
    expect(answered - 1).toBe(counted);
  });
});
