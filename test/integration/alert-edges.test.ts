import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/services/alerts/webhook-address.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// The edges of alerts' API: a pull cursor that is well formed but names no position there can be
// (a 422, not a 500), a page whose entries all lost their summaries (its cursor still moves on),
// a webhook host name resolving to a private address (refused at creation, as a literal is).
let stack: Stack;
beforeAll(async () => {
  stack = await startStack('alert-edges');
});
afterAll(async () => {
  await stack?.close();
});

const cursorOf = (position: string) => Buffer.from(position, 'utf8').toString('base64url');

describe('the matches cursor', () => {
  it('answers 422 for a well-formed position no stream can hold, or one in the future', async () => {
    const search = await stack.post('/v1/social/saved-searches', { name: 'c', post: { query: 'cursor' } });
    expect(search.statusCode).toBe(201);
    for (const position of [
      '99999999999999999999-0',
      `${Date.now() + 86_400_000}-0`,
      '1-99999999999999999999',
      'x-1',
    ]) {
      const response = await stack.get(
        `/v1/social/saved-searches/${search.body.id}/matches?cursor=${cursorOf(position)}`,
      );
      expect(response.statusCode, position).toBe(422);
      expect(response.body.detail).toBe('query parameter /cursor: not a cursor of this list');
    }
    const fine = await stack.get(
      `/v1/social/saved-searches/${search.body.id}/matches?cursor=${cursorOf(`${Date.now() - 1000}-0`)}`,
    );
    expect(fine.statusCode).toBe(200);
  });

  it('moves on past a page whose events all lost their summaries, never repeating its cursor', async () => {
    await stack.ingest([accountObs({ platform_id: 'edge-author' })], { vectors: false });
    const search = await stack.post('/v1/social/saved-searches', { name: 'e', post: { query: 'zanzibar' } });
    await stack.ingest(
      [1, 2, 3].map((i) => postObs('edge-author', { platform_id: `edge-${i}`, caption: `Zanzibar trip, day ${i}` })),
      { vectors: false },
    );
    const url = `/v1/social/saved-searches/${search.body.id}/matches`;
    const deadline = Date.now() + 20_000;
    while ((await stack.get(`${url}?limit=10`)).body.data.length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const all = (await stack.get(`${url}?limit=10`)).body.data as Array<{ data: { post: { id: string } } }>;
    expect(all).toHaveLength(3);
    // The first two posts' summaries evicted (the operator's memory policy, say).
    const keys = await stack.runtime.redis.keys(`${stack.config.REDIS_PREFIX}:alert-store:summary:*`);
    const lost = keys.filter((k) => !k.includes(`:${all[2]!.data.post.id}:`));
    expect(lost).toHaveLength(2);
    await stack.runtime.redis.del(...lost);

    const first = await stack.get(`${url}?limit=2`);
    expect(first.body.data).toEqual([]);
    expect(first.body.has_more).toBe(true);
    const second = await stack.get(`${url}?limit=2&cursor=${first.body.next_cursor}`);
    expect(first.body.next_cursor).not.toBe(second.body.next_cursor);
    expect(second.body.data.map((e: { data: { post: { id: string } } }) => e.data.post.id)).toEqual([
      all[2]!.data.post.id,
    ]);
    expect(second.body.has_more).toBe(false);
  });
});

describe('webhook addresses at creation', () => {
  it('refuses a host name that resolves to a private or loopback address, as the docs say (422 naming /url)', async () => {
    // This machine's own name: /etc/hosts points it at a loopback or private address.
    const name = hostname();
    const answers = await lookup(name, { all: true });
    expect(answers.length, `${name} should resolve on this machine`).toBeGreaterThan(0);
    expect(
      answers.some((a) => !isPublicAddress(a.address)),
      `${name} resolves to ${JSON.stringify(answers)}`,
    ).toBe(true);
    const response = await stack.post('/v1/social/webhook-endpoints', { url: `https://${name}/hooks` });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(422);
    expect(response.body.detail).toBe(`/url: ${name} resolves to a private or loopback address`);
    expect((await stack.get('/v1/social/webhook-endpoints')).body.data).toEqual([]);
    // A name that does not resolve (yet) is accepted: every delivery resolves and checks it again.
    const later = await stack.post('/v1/social/webhook-endpoints', { url: 'https://hooks.invalid/in' });
    expect(later.statusCode, JSON.stringify(later.body)).toBe(201);
  });
});
