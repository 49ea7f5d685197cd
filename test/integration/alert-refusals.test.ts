import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';
import { until } from '../helpers/wait.ts';

// A request refused changes nothing: over its key's budget (429) on every route that changes
// something, at a cap (409) however many creates race for the last place, past the test events'
// limit. Checked by reading back what the refused request would have changed.

let stack: Stack;
let server: Server;
let url: string;
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
const HOLDER = 'refusals@example.com';
let unlimited: string;

beforeAll(async () => {
  stack = await startStack('alert-refusals', {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    SAVED_SEARCHES_PER_HOLDER: '4',
    WEBHOOK_ENDPOINTS_PER_HOLDER: '3',
  });
  unlimited = (await stack.runtime.api.keys.create({ owner: HOLDER, name: 'unlimited', scopes: ['search'] })).key;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(JSON.parse(body).data?.webhook_endpoint_id === gone ? 410 : 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

let gone = '';
/** Endpoints created by the concurrent creates, with their secrets. */
const created: Array<{ id: string; secret: string }> = [];

function call(key: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
  return stack.inject({
    method,
    url: path,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

/** A key of the holder allowed one read-budget request a minute, that one already spent. */
async function spentKey(): Promise<string> {
  const { key, id } = await stack.runtime.api.keys.create({ owner: HOLDER, name: 'limited', scopes: ['search'] });
  await stack.runtime.api.keys.setLimits(id, { read: 1 });
  expect((await call(key, 'GET', '/v1/social/saved-searches')).statusCode).toBe(200);
  return key;
}

const endpoints = async () =>
  (await call(unlimited, 'GET', '/v1/social/webhook-endpoints')).body.data as Array<{ id: string; status: string }>;
const searches = async () =>
  (await call(unlimited, 'GET', '/v1/social/saved-searches')).body.data as Array<{ id: string }>;

describe('a request over its budget', () => {
  it('creates no endpoint: 201, then 429s, and one endpoint listed', async () => {
    const { key, id } = await stack.runtime.api.keys.create({
      owner: HOLDER,
      name: 'one a minute',
      scopes: ['search'],
    });
    await stack.runtime.api.keys.setLimits(id, { read: 1 });
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push((await call(key, 'POST', '/v1/social/webhook-endpoints', { url: `${url}?n=${i}` })).statusCode);
    expect(answers).toEqual([201, 429, 429]);
    expect((await endpoints()).length).toBe(1);
  });

  it('changes nothing on any other route that changes something', async () => {
    const [endpoint] = await endpoints();
    const search = (await call(unlimited, 'POST', '/v1/social/saved-searches', { name: 's', post: { query: 'x' } }))
      .body as { id: string };

    // rotate-secret: no second secret signs the deliveries.
    expect(
      (await call(await spentKey(), 'POST', `/v1/social/webhook-endpoints/${endpoint!.id}/rotate-secret`)).statusCode,
    ).toBe(429);
    const test = await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint!.id}/test`);
    expect(test.statusCode).toBe(202);
    const delivered = await until(async () => received.find((r) => r.body.includes(test.body.id)) ?? null);
    expect(String(delivered.headers['webhook-signature']).split(' ')).toHaveLength(1);

    // test: nothing is queued.
    const before = received.length;
    expect((await call(await spentKey(), 'POST', `/v1/social/webhook-endpoints/${endpoint!.id}/test`)).statusCode).toBe(
      429,
    );
    // create and delete of saved searches, delete of an endpoint.
    expect(
      (await call(await spentKey(), 'POST', '/v1/social/saved-searches', { name: 'no', post: { query: 'no' } }))
        .statusCode,
    ).toBe(429);
    expect((await call(await spentKey(), 'DELETE', `/v1/social/saved-searches/${search.id}`)).statusCode).toBe(429);
    expect((await call(await spentKey(), 'DELETE', `/v1/social/webhook-endpoints/${endpoint!.id}`)).statusCode).toBe(
      429,
    );
    expect((await searches()).map((s) => s.id)).toEqual([search.id]);
    expect((await endpoints()).map((e) => e.id)).toEqual([endpoint!.id]);

    // enable: a disabled endpoint stays disabled.
    gone = endpoint!.id;
    await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint!.id}/test`);
    await until(async () => ((await endpoints())[0]!.status === 'disabled' ? true : null));
    expect(
      (await call(await spentKey(), 'POST', `/v1/social/webhook-endpoints/${endpoint!.id}/enable`)).statusCode,
    ).toBe(429);
    expect((await endpoints())[0]!.status).toBe('disabled');
    await new Promise((r) => setTimeout(r, 1500));
    expect(received.length).toBe(before + 1);
    gone = '';
    expect((await call(unlimited, 'DELETE', `/v1/social/saved-searches/${search.id}`)).statusCode).toBe(204);
  });
});

describe('the caps', () => {
  it('hold under concurrent creates: exactly the cap is created, the rest refused 409', async () => {
    const before = (await endpoints()).length;
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(unlimited, 'POST', '/v1/social/webhook-endpoints', { url: `${url}?c=${i}` }),
      ),
    );
    created.push(...made.filter((r) => r.statusCode === 201).map((r) => r.body as { id: string; secret: string }));
    expect(created).toHaveLength(3 - before);
    expect(made.filter((r) => r.statusCode === 409)).toHaveLength(12 - (3 - before));
    expect(await endpoints()).toHaveLength(3);

    const saved = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(unlimited, 'POST', '/v1/social/saved-searches', { name: `c${i}`, post: { query: `cap${i}` } }),
      ),
    );
    expect(saved.filter((r) => r.statusCode === 201)).toHaveLength(4);
    expect(saved.filter((r) => r.statusCode === 409).map((r) => r.body.type)).toEqual(
      Array(8).fill(expect.stringMatching(/\/problems\/limit-reached$/)),
    );
    expect(await searches()).toHaveLength(4);
  });

  it('limit test events to five a minute per endpoint', async () => {
    const endpoint = created[1];
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push((await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint!.id}/test`)).statusCode);
    expect(answers).toEqual([202, 202, 202, 202, 202, 429]);
  });

  it('keep every secret of a rotation signing for its 24 h: two rotations, three signatures; a third refused', async () => {
    const endpoint = created[0]!;
    const first = (await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint.id}/rotate-secret`)).body;
    const second = (await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint.id}/rotate-secret`)).body;
    expect(new Set([endpoint.secret, first.secret, second.secret]).size).toBe(3);
    const third = await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(third.statusCode).toBe(409);
    expect(third.body.detail).toContain('3 secrets sign');
    const test = await call(unlimited, 'POST', `/v1/social/webhook-endpoints/${endpoint.id}/test`);
    const delivered = await until(async () => received.find((r) => r.body.includes(test.body.id)) ?? null);
    expect(String(delivered.headers['webhook-signature']).split(' ')).toHaveLength(3);
    // A receiver still on the original secret, or on either new one, verifies it.
    for (const secret of [endpoint.secret, first.secret, second.secret])
      expect(new Webhook(secret).verify(delivered.body, delivered.headers as Record<string, string>)).toEqual(
        test.body,
      );
  });
});
