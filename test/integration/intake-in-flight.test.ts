import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request } from 'undici';
import { accountObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
let base: string;
beforeAll(async () => {
  // No worker: what matters is what the API node reads. Room for one body of the largest size.
  stack = await startStack('intake-in-flight', { INTAKE_MAX_IN_FLIGHT_MB: '20' }, { worker: false });
  base = await stack.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => stack?.close());

const lines = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify(accountObs({ platform_id: `inflight-${tag}-${i}` })) + '\n');

/** A request whose body is sent as it is written, without a length (chunked), as a streaming pipeline sends one. */
function streamed(): { request: ClientRequest; answer: Promise<{ status: number; body: any }> } {
  const request = httpRequest(`${base}/internal/v1/social/observations`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${stack.key}` },
  });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response: IncomingMessage) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
  });
  request.flushHeaders();
  return { request, answer };
}

const send = (body: string, key: string | null = stack.key) =>
  request(`${base}/internal/v1/social/observations`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body,
  });

describe('intake bodies one API node reads at once', () => {
  it('answers 503 with Retry-After while its bound is taken, reads nothing of that request, and takes it once room is back', async () => {
    // A pipeline's request streamed without a length: it counts as the largest body (20 MiB).
    const slow = streamed();
    slow.request.write(lines('slow', 3).join(''));

    // Meanwhile another request finds no room (sent until the first one holds its place).
    let refused: { status: number; retryAfter: unknown; body: any } | null = null;
    const deadline = Date.now() + 10_000;
    while (!refused && Date.now() < deadline) {
      const answer = await send(lines('other', 2).join(''));
      const body = await answer.body.json();
      if (answer.statusCode === 503) refused = { status: 503, retryAfter: answer.headers['retry-after'], body };
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(refused).toMatchObject({
      status: 503,
      retryAfter: '1',
      body: { type: 'https://api.example.test/problems/service-unavailable', status: 503 },
    });
    expect(refused!.body.detail).toMatch(/already reading 20\.0 MiB of intake requests/);
    expect(refused!.body.request_id).toEqual(expect.any(String));
    // A request without a key is answered for its key, not for the bound.
    expect((await send(lines('nokey', 1).join(''), null)).statusCode).toBe(401);

    // The first request finishes: every line of it is taken, and the bound is free again.
    slow.request.end(lines('slow-end', 2).join(''));
    expect(await slow.answer).toMatchObject({ status: 202, body: { accepted: 5, rejected: [] } });
    const again = await send(lines('other', 2).join(''));
    expect(again.statusCode).toBe(202);
    expect(await again.body.json()).toMatchObject({ accepted: 2, rejected: [] });
  });
});
