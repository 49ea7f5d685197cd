import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHolders } from '../../src/start/core.ts';
import { startApiProcess, type ApiProcess } from '../helpers/api-process.ts';
import { DashboardClient } from '../helpers/dashboard-client.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Two API nodes on one Redis: this test process (stack.app) and a `social-search serve` process.
const SEARCHES = 4;
const READS = 6;
let stack: Stack;
let other: ApiProcess;

beforeAll(async () => {
  const env = {
    RATE_LIMIT_SEARCH_PER_MINUTE: String(SEARCHES),
    RATE_LIMIT_READ_PER_MINUTE: String(READS),
    TRUSTED_PROXIES: '127.0.0.1',
  };
  stack = await startStack('apiprocs', env, { worker: false });
  other = await startApiProcess(stack.config, env);
});

afterAll(async () => {
  await other?.stop();
  await stack.close();
});

async function newKey(name: string) {
  return stack.runtime.api.keys.create({ owner: 'processes@example.com', name, scopes: ['search'] });
}

/** A search on this process (`'here'`) or on the other one. */
async function search(node: 'here' | 'there', key: string) {
  const body = JSON.stringify({ post: { query: 'kite' } });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (node === 'here') {
    const r = await stack.app.inject({ method: 'POST', url: '/v1/social/posts/search', headers, payload: body });
    return { status: r.statusCode, header: (n: string) => r.headers[n] as string | undefined };
  }
  const r = await fetch(`${other.url}/v1/social/posts/search`, { method: 'POST', headers, body });
  await r.arrayBuffer();
  return { status: r.status, header: (n: string) => r.headers.get(n) ?? undefined };
}

async function read(key: string) {
  const r = await fetch(`${other.url}/v1/social/posts/nope`, { headers: { authorization: `Bearer ${key}` } });
  await r.arrayBuffer();
  return { status: r.status, header: (n: string) => r.headers.get(n) ?? undefined };
}

describe('two API processes on one Redis', () => {
  it('share one search budget per key, with RateLimit-Policy and RateLimit headers on every limited response', async () => {
    const { key } = await newKey('shared budget');
    const seen: Array<[number, string | undefined, string | undefined]> = [];
    for (const node of ['here', 'there', 'here', 'there', 'here'] as const) {
      const r = await search(node, key);
      seen.push([r.status, r.header('ratelimit-policy'), r.header('ratelimit')]);
    }
    expect(seen.map(([s]) => s)).toEqual([200, 200, 200, 200, 429]);
    for (const [, policy] of seen) expect(policy).toBe(`"search";q=${SEARCHES};w=60`);
    expect(seen.map(([, , r]) => /r=(\d+)/.exec(r ?? '')?.[1])).toEqual(['3', '2', '1', '0', '0']);
    const limited = await search('there', key);
    expect(limited.status).toBe(429);
    expect(Number(limited.header('retry-after'))).toBeGreaterThan(0);
    expect(limited.header('ratelimit')).toMatch(/^"search";r=0;t=\d+$/);
  });

  it('limits GETs by their own, higher budget, apart from searches', async () => {
    const { key } = await newKey('reads');
    for (let i = 0; i < SEARCHES; i++) expect((await search('here', key)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i <= READS; i++) {
      const r = await read(key);
      statuses.push(r.status);
      expect(r.header('ratelimit-policy')).toBe(`"read";q=${READS};w=60`);
    }
    // Searches spent nothing of the read budget: six reads answered, the seventh refused.
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 429]);
  });

  it("applies a key's own limit on the other process from its next request", async () => {
    const { id, key } = await newKey('own limit');
    expect((await search('there', key)).header('ratelimit-policy')).toBe(`"search";q=${SEARCHES};w=60`);
    await stack.runtime.api.keys.setLimits(id, { search: 50 });
    // Published on the key channel: the other process re-reads the key at once.
    let policy: string | undefined;
    for (let i = 0; i < 20 && policy !== '"search";q=50;w=60'; i++)
      policy = (await search('there', key)).header('ratelimit-policy');
    expect(policy).toBe('"search";q=50;w=60');
  });

  it('refuses a key revoked in the dashboard on the other process within one second', async () => {
    const holders = openHolders(stack.config, stack.runtime.connections);
    const address = `revoker-${stack.config.REDIS_PREFIX}@example.com`;
    const { code } = await holders.invite({ email: address, days: 1 });
    const client = new DashboardClient(stack.app);
    await client.get('/dashboard/sign-up');
    expect(
      (await client.post('/dashboard/sign-up', { email: address, password: 'correct horse battery', invitation: code }))
        .status,
    ).toBe(303);
    await client.get('/dashboard/keys');
    const created = await client.post('/dashboard/keys', { name: 'to revoke', scopes: 'search' });
    const key = /id="new-key">([^<]+)</.exec(created.body)![1]!;
    const id = `key_${key.slice(4, 20)}`;
    // The other process has verified and cached the key.
    expect((await read(key)).status).toBe(404);
    expect((await read(key)).status).toBe(404);

    const revoked = await client.post(`/dashboard/keys/${id}/revoke`, {});
    expect(revoked.status).toBe(303);
    const start = performance.now();
    let status = 0;
    while (status !== 401 && performance.now() - start < 5_000) status = (await read(key)).status;
    const latencyMs = performance.now() - start;
    console.log(`[api-processes] revocation seen by the other process after ${latencyMs.toFixed(1)} ms`);
    expect(status).toBe(401);
    expect(latencyMs).toBeLessThan(1_000);
  });
});
