import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';

const PAUSE_MS = 3000;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack('refusal-pause', { RATE_LIMIT_REFUSAL_PAUSE_MS: String(PAUSE_MS) }, { worker: false });
});

afterAll(async () => {
  await stack.close();
});

const search = (key: string | null, remoteAddress = '127.0.0.1') =>
  stack.app.inject({
    method: 'POST',
    url: '/v1/social/posts/search',
    remoteAddress,
    headers: { ...(key !== null && { authorization: `Bearer ${key}` }), 'content-type': 'application/json' },
    payload: JSON.stringify({ post: { query: 'kite' } }),
  });

async function keyWithSearches(name: string, searches: number) {
  const created = await stack.runtime.api.keys.create({ owner: `${name}@example.com`, name, scopes: ['search'] });
  await stack.runtime.api.keys.setLimits(created.id, { search: searches });
  return created;
}

describe('a key that keeps asking past its budget', () => {
  it('gets its next 429s after a pause, while another key is answered at once', async () => {
    const hammering = await keyWithSearches('hammering', 2);
    expect([(await search(hammering.key)).statusCode, (await search(hammering.key)).statusCode]).toEqual([200, 200]);
    // The refusal that finds the budget spent goes at once.
    const first = await search(hammering.key);
    expect(first.statusCode).toBe(429);

    // Told to retry later, the key keeps 20 searches in flight: none is answered within the pause.
    const startedAt = Date.now();
    let answered = 0;
    const burst = Array.from({ length: 20 }, () =>
      search(hammering.key).then((response) => (answered++, { response, ms: Date.now() - startedAt })),
    );
    const other = await search(stack.key);
    expect(other.statusCode).toBe(200);
    expect(answered).toBe(0);

    const refused = await Promise.all(burst);
    for (const { response, ms } of refused) {
      expect(ms).toBeGreaterThanOrEqual(PAUSE_MS - 50);
      expect(response.statusCode).toBe(429);
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(response.headers['ratelimit-remaining']).toBe('0');
      expect(response.json()).toEqual({
        type: 'https://api.example.test/problems/rate-limit-exceeded',
        status: 429,
        request_id: response.headers['x-request-id'],
        detail: expect.stringMatching(/2 searches per minute; retry in \d+ s/),
      });
    }
    // The operator sees them: 20 paused, none held any more, none past the bounds.
    const metrics = String((await stack.inject({ method: 'GET', url: '/metrics' })).body);
    expect(metrics).toMatch(/^refusals_paused_total 20$/m);
    expect(metrics).toMatch(/^refusals_held 0$/m);
    expect(metrics).toMatch(/^refusals_over_bound_total 0$/m);
  });

  it('is answered, not refused, when its window ends within the pause', async () => {
    const key = await keyWithSearches('window-ends', 2);
    await search(key.key);
    await search(key.key);
    // The window has 1.5 s left when the node learns the budget is spent.
    const counter = `${stack.config.REDIS_PREFIX}:ratelimit:search:${key.id}`;
    await stack.runtime.connections.redis().pexpire(counter, 1500);
    expect((await search(key.key)).statusCode).toBe(429);

    const startedAt = Date.now();
    const next = await search(key.key);
    expect(next.statusCode).toBe(200);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(next.headers['ratelimit-remaining']).toBe('1');
  });
});

describe('a client that keeps presenting a key it was refused', () => {
  it('gets its next 401s after a pause, while another credential is refused at once and a valid key answered', async () => {
    const wrong = `${stack.key.slice(0, -4)}xxxx`;
    const first = await search(wrong);
    expect(first.statusCode).toBe(401);

    const startedAt = Date.now();
    let answered = 0;
    const again = Array.from({ length: 10 }, () =>
      search(wrong).then((response) => (answered++, { response, ms: Date.now() - startedAt })),
    );
    // Another credential's first refusal is not paused, and a valid key is answered meanwhile.
    const otherWrong = await search(`${stack.key.slice(0, -4)}yyyy`);
    expect(otherWrong.statusCode).toBe(401);
    expect((await search(stack.key)).statusCode).toBe(200);
    expect(answered).toBe(0);

    for (const { response, ms } of await Promise.all(again)) {
      expect(ms).toBeGreaterThanOrEqual(PAUSE_MS - 50);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({
        type: 'https://api.example.test/problems/authentication-required',
        status: 401,
        request_id: response.headers['x-request-id'],
      });
    }
  });

  it('gets its next 403s for a scope the key lacks after a pause too', async () => {
    const intakeOnly = await stack.runtime.api.keys.create({
      owner: 'pipeline@example.com',
      name: 'pipeline',
      scopes: ['ingest'],
    });
    expect((await search(intakeOnly.key)).statusCode).toBe(403);
    const startedAt = Date.now();
    const again = await search(intakeOnly.key);
    expect(again.statusCode).toBe(403);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(PAUSE_MS - 50);
  });
});

describe('a client that presents a new key each time', () => {
  it('gets its refusals at once up to ten keys a minute, then after a pause; a valid key and another address are answered at once', async () => {
    const guesser = '10.0.0.7';
    const guess = (i: number) => `${stack.key.slice(0, -8)}guess${String(i).padStart(3, '0')}`;
    const startedAt = Date.now();
    for (let i = 0; i < 10; i++) expect((await search(guess(i), guesser)).statusCode).toBe(401);
    // A client that mistypes its key a few times learns each mistake at once.
    expect(Date.now() - startedAt).toBeLessThan(PAUSE_MS);

    const pausedFrom = Date.now();
    let answered = 0;
    const more = Array.from({ length: 5 }, (_, i) =>
      search(guess(10 + i), guesser).then((response) => (answered++, { response, ms: Date.now() - pausedFrom })),
    );
    // Only refusals wait: a valid key from the same address, and a new guess from another, go at once.
    expect((await search(stack.key, guesser)).statusCode).toBe(200);
    expect((await search(guess(99), '10.0.0.8')).statusCode).toBe(401);
    expect(answered).toBe(0);
    for (const { response, ms } of await Promise.all(more)) {
      expect(ms).toBeGreaterThanOrEqual(PAUSE_MS - 50);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ type: 'https://api.example.test/problems/authentication-required' });
    }
  });

  it('counts a request without a key as one credential: its second 401 comes after the pause', async () => {
    const address = '10.0.0.9';
    const first = Date.now();
    expect((await search(null, address)).statusCode).toBe(401);
    expect(Date.now() - first).toBeLessThan(PAUSE_MS);
    const second = Date.now();
    expect((await search(null, address)).statusCode).toBe(401);
    expect(Date.now() - second).toBeGreaterThanOrEqual(PAUSE_MS - 50);
  });
});
