import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAITING_PER_KEY } from '../../src/http/plugins/rate-limit.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
let other: string;
beforeAll(async () => {
  // One search of a key at a time on this node, the next 64 waiting.
  stack = await startStack('search-fair-share', { SEARCH_IN_FLIGHT_PER_KEY: '1' }, { worker: false });
  other = (
    await stack.runtime.api.keys.create({ owner: 'other@example.com', name: 'other customer', scopes: ['search'] })
  ).key;
});
afterAll(async () => stack?.close());

const search = (key: string, query: string) =>
  stack.app.inject({
    method: 'POST',
    url: '/v1/social/posts/search',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ post: { query } }),
  });

describe("one key's burst of searches on a node", () => {
  it("waits in the key's own queue, answers 429 past it, and never holds another key's search", async () => {
    let burstAnswered = 0;
    const burst = Array.from({ length: 2 * WAITING_PER_KEY }, (_, i) =>
      search(stack.key, `kite surfing ${i}`).then((answer) => (answer.statusCode === 200 && burstAnswered++, answer)),
    );
    const others = await search(other, 'kite surfing');
    expect(others.statusCode).toBe(200);
    // The other key's search went to the engine at once: most of the burst still waits.
    expect(burstAnswered).toBeLessThan(WAITING_PER_KEY / 2);
    const answers = await Promise.all(burst);
    const answered = answers.filter((a) => a.statusCode === 200);
    const refused = answers.filter((a) => a.statusCode === 429);
    // One running and 64 waiting are answered; the rest are refused at once.
    expect(answered.length).toBeGreaterThanOrEqual(1 + WAITING_PER_KEY);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length + answered.length).toBe(2 * WAITING_PER_KEY);
    expect(refused[0]!.headers['retry-after']).toBe('1');
    expect(refused[0]!.json()).toEqual({
      type: 'https://api.example.test/problems/rate-limit-exceeded',
      status: 429,
      request_id: expect.any(String),
      detail: `this API key has 1 searches running and ${WAITING_PER_KEY} waiting on this API node; retry in 1 s`,
    });
  });
});
