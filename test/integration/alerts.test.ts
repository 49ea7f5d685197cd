import { spawn, spawnSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, at, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { until } from '../helpers/wait.ts';

// Saved searches that push newly matching posts to a real receiver on loopback, signed.

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: records every request; `answer` decides each status. */
class Receiver {
  readonly received: Received[] = [];
  answer: (n: number) => { status: number; headers?: Record<string, string> } = () => ({ status: 204 });
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        const { status, headers } = this.answer(this.received.length);
        res.writeHead(status, headers).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  events(type = 'post.matched'): Array<{ id: string; type: string; data: any }> {
    return this.received.map((r) => JSON.parse(r.body)).filter((e) => e.type === type);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: Stack;
let other: string;
const receiver = new Receiver();
const AUTHOR = 'alerts-baker';
const postId = (platformId: string) => mintId('post', platformId);

function bakingPost(platformId: string, caption: string, views: number, minutes = 0) {
  return postObs(AUTHOR, { platform_id: platformId, caption, views, observed_at: at(minutes) });
}

function send(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, key = stack.key) {
  return stack.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

beforeAll(async () => {
  stack = await startStack('alerts', { WEBHOOK_ALLOW_PRIVATE: 'true', SAVED_SEARCHES_PER_HOLDER: '4' });
  other = (await stack.runtime.api.keys.create({ owner: 'other@example.com', name: 'other', scopes: ['search'] })).key;
  await receiver.start();
  const seeded = await stack.ingest([
    accountObs({ platform_id: AUTHOR, handle: 'alerts.baker', followers_count: 20_000 }),
    // Matched before any saved search existed: never an event, even when re-observed.
    bakingPost('old-loaf', 'My sourdough loaf with an open crumb', 9000),
  ]);
  expect(seeded.statusCode, JSON.stringify(seeded.body)).toBe(200);
});

afterAll(async () => {
  await receiver.close();
  await stack?.close();
});

describe('webhook endpoints', () => {
  it('show the signing secret once, and only to their holder', async () => {
    const created = await send('POST', '/v1/social/webhook-endpoints', { url: receiver.url, description: 'tests' });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    expect(Object.keys(created.body)).toEqual([
      'id',
      'url',
      'description',
      'status',
      'secret',
      'created_at',
      'disabled_reason',
    ]);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await send('GET', `/v1/social/webhook-endpoints/${created.body.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect(read.body.status).toBe('enabled');
    const listed = await send('GET', '/v1/social/webhook-endpoints');
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(created.body.id);

    expect((await send('GET', `/v1/social/webhook-endpoints/${created.body.id}`, undefined, other)).statusCode).toBe(
      404,
    );
    expect((await send('GET', '/v1/social/webhook-endpoints', undefined, other)).body.data).toEqual([]);
    expect((await send('DELETE', `/v1/social/webhook-endpoints/${created.body.id}`, undefined, other)).statusCode).toBe(
      404,
    );

    expect((await send('DELETE', `/v1/social/webhook-endpoints/${created.body.id}`)).statusCode).toBe(204);
    const gone = await send('GET', `/v1/social/webhook-endpoints/${created.body.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.body.type).toMatch(/\/problems\/resource-not-found$/);
  });

  it('refuse URLs that are not http(s), carry credentials, or are public plain http', async () => {
    for (const [url, reason] of [
      ['ftp://127.0.0.1/x', 'expected an https URL'],
      ['http://user:pw@127.0.0.1/x', 'may not carry credentials'],
      ['http://93.184.215.14/hooks', 'expected an https URL'],
      ['not a url', 'expected an absolute https URL'],
    ]) {
      const response = await send('POST', '/v1/social/webhook-endpoints', { url });
      expect(response.statusCode, url).toBe(422);
      expect(response.body.detail, url).toContain(`/url: `);
      expect(response.body.detail, url).toContain(reason);
    }
  });
});

describe('saved searches', () => {
  it('validate the post scope exactly as post search does', async () => {
    const scope = { query: 'bread', filters: { views: { gte: 'many' } } };
    const saved = await send('POST', '/v1/social/saved-searches', { name: 'x', post: scope });
    const searched = await stack.post('/v1/social/posts/search', { post: scope });
    expect(saved.statusCode).toBe(422);
    expect(saved.body.detail).toBe(searched.body.detail);

    const similar = await send('POST', '/v1/social/saved-searches', { name: 'x', post: { similar_to: 'abc' } });
    expect(similar.statusCode).toBe(422);
    expect(similar.body.detail).toContain('/post/similar_to');
    const empty = await send('POST', '/v1/social/saved-searches', { name: 'x', post: {} });
    expect(empty.statusCode).toBe(422);
    const unknownEndpoint = await send('POST', '/v1/social/saved-searches', {
      name: 'x',
      post: { query: 'bread' },
      webhook_endpoint_id: 'whe_nope',
    });
    expect(unknownEndpoint.statusCode).toBe(422);
    expect(unknownEndpoint.body.detail).toContain('/webhook_endpoint_id');
  });

  it('are capped per holder (409 limit-reached) and private to it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await send('POST', '/v1/social/saved-searches', { name: `cap ${i}`, post: { query: `cap${i}` } });
      expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
      ids.push(created.body.id);
    }
    const over = await send('POST', '/v1/social/saved-searches', { name: 'one more', post: { query: 'more' } });
    expect(over.statusCode).toBe(409);
    expect(over.body.type).toMatch(/\/problems\/limit-reached$/);
    expect((await send('GET', `/v1/social/saved-searches/${ids[0]}`, undefined, other)).statusCode).toBe(404);
    expect((await send('GET', `/v1/social/saved-searches/${ids[0]}/matches`, undefined, other)).statusCode).toBe(404);
    for (const id of ids) expect((await send('DELETE', `/v1/social/saved-searches/${id}`)).statusCode).toBe(204);
    expect((await send('GET', '/v1/social/saved-searches')).body.data).toEqual([]);
  });
});

describe('matching and delivery', () => {
  let endpoint: { id: string; secret: string };
  let search: { id: string };

  beforeAll(async () => {
    endpoint = (await send('POST', '/v1/social/webhook-endpoints', { url: receiver.url })).body;
    const created = await send('POST', '/v1/social/saved-searches', {
      name: 'big sourdough',
      post: { query: 'sourdough', filters: { views: { gte: 1000 } } },
      webhook_endpoint_id: endpoint.id,
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    expect(created.body.post).toEqual({ query: 'sourdough', filters: { views: { gte: 1000 } } });
    search = created.body;
  });

  it('pushes a new matching post once, signed by Standard Webhooks', async () => {
    const ingested = await stack.ingest([
      bakingPost('new-loaf', 'Sourdough starter to loaf in two days', 5000, 1),
      bakingPost('small-loaf', 'A tiny sourdough test bake', 10, 1),
      bakingPost('pasta', 'Weeknight pasta with garlic', 8000, 1),
      bakingPost('old-loaf', 'My sourdough loaf with an open crumb', 12_000, 1),
    ]);
    expect(ingested.statusCode).toBe(200);
    const [event] = await until(() => (receiver.events().length > 0 ? receiver.events() : null));
    await sleep(2500);
    expect(receiver.events().map((e) => e.data.post.id)).toEqual([postId('new-loaf')]);
    expect(event!.data.saved_search_id).toBe(search.id);

    const delivery = receiver.received.find((r) => JSON.parse(r.body).type === 'post.matched')!;
    expect(delivery.headers['webhook-id']).toBe(event!.id);
    const verified = new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>);
    expect(verified).toEqual(event);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        delivery.body,
        delivery.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('pushes a post when it comes to match (views cross the bound), never a pair twice', async () => {
    await stack.ingest([
      bakingPost('small-loaf', 'A tiny sourdough test bake', 4000, 2),
      bakingPost('new-loaf', 'Sourdough starter to loaf in two days', 7000, 2),
    ]);
    await until(() => receiver.events().length >= 2);
    await sleep(2500);
    expect(receiver.events().map((e) => e.data.post.id)).toEqual([postId('new-loaf'), postId('small-loaf')]);
  });

  it('serves the same events to pull, oldest first, paged by cursor', async () => {
    const first = await send('GET', `/v1/social/saved-searches/${search.id}/matches?limit=1`);
    expect(first.statusCode).toBe(200);
    expect(first.body.data.map((e: any) => e.data.post.id)).toEqual([postId('new-loaf')]);
    expect(first.body.has_more).toBe(true);
    const second = await send(
      'GET',
      `/v1/social/saved-searches/${search.id}/matches?limit=1&cursor=${first.body.next_cursor}`,
    );
    expect(second.body.data.map((e: any) => e.data.post.id)).toEqual([postId('small-loaf')]);
    expect(second.body.has_more).toBe(false);
    const later = await send('GET', `/v1/social/saved-searches/${search.id}/matches?cursor=${second.body.next_cursor}`);
    expect(later.body.data).toEqual([]);
    expect(later.body.next_cursor).toBe(second.body.next_cursor);
    // Pulled exactly as pushed: the same bytes, summary and signed URLs included.
    expect([...first.body.data, ...second.body.data]).toEqual(receiver.events());
    expect((await send('GET', `/v1/social/saved-searches/${search.id}`)).body.last_match_at).not.toBeNull();
  });

  it('retries 503s honouring Retry-After, logs each attempt, and signs with both secrets after a rotation', async () => {
    const rotated = await send('POST', `/v1/social/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const before = receiver.received.length;
    receiver.answer = (n) => (n - before <= 2 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 });
    const test = await send('POST', `/v1/social/webhook-endpoints/${endpoint.id}/test`);
    expect(test.statusCode).toBe(202);
    const delivered = await until(() => receiver.received.length - before >= 3 && receiver.received.at(-1)!, {
      timeoutMs: 30_000,
    });
    expect(JSON.parse(delivered.body).id).toBe(test.body.id);
    for (const secret of [endpoint.secret, rotated.body.secret])
      expect(new Webhook(secret).verify(delivered.body, delivered.headers as Record<string, string>)).toEqual(
        test.body,
      );
    const log = await until(async () => {
      const body = (await send('GET', `/v1/social/webhook-endpoints/${endpoint.id}/deliveries`)).body;
      return body.data.filter((a: any) => a.event_id === test.body.id).length >= 3 ? body : null;
    });
    expect(log.data.filter((a: any) => a.event_id === test.body.id).map((a: any) => a.status)).toEqual([200, 503, 503]);
    receiver.answer = () => ({ status: 204 });
    // Counted for the operator too, by cause.
    const metrics = await stack.inject({ method: 'GET', url: '/metrics' });
    const failures = /webhook_delivery_failures_total\{cause="receiver"\} (\d+)/.exec(String(metrics.body));
    expect(Number(failures?.[1])).toBeGreaterThanOrEqual(2);
    expect(String(metrics.body)).toMatch(/webhook_endpoints_waiting \d+/);
  });

  it('says so when the service cannot deliver: a secret no key opens is in the delivery log, on the endpoint and in /metrics', async () => {
    const broken = (await send('POST', '/v1/social/webhook-endpoints', { url: receiver.url })).body;
    // As after SIGNING_SECRET changed without SIGNING_SECRET_PREVIOUS: sealed under another key.
    await stack.runtime.redis.hset(
      `${stack.config.REDIS_PREFIX}:alert-store:endpoint:${broken.id}`,
      'secret',
      Buffer.alloc(60, 7).toString('base64url'),
    );
    const test = await send('POST', `/v1/social/webhook-endpoints/${broken.id}/test`);
    const logged = await until(async () => {
      const body = (await send('GET', `/v1/social/webhook-endpoints/${broken.id}/deliveries`)).body;
      return body.data.length > 0 ? body.data : null;
    });
    expect(logged[0]).toMatchObject({ event_id: test.body.id, status: null });
    expect(logged[0].error).toContain('service error: the signing secret cannot be opened');
    expect(receiver.received.some((r) => r.body.includes(test.body.id))).toBe(false);
    const metrics = String((await stack.inject({ method: 'GET', url: '/metrics' })).body);
    expect(Number(/webhook_delivery_failures_total\{cause="secret"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(
      1,
    );
    expect((await send('DELETE', `/v1/social/webhook-endpoints/${broken.id}`)).statusCode).toBe(204);
  });

  it('disables an endpoint that answers 410, until its holder enables it again', async () => {
    receiver.answer = () => ({ status: 410 });
    await send('POST', `/v1/social/webhook-endpoints/${endpoint.id}/test`);
    const disabled = await until(async () => {
      const read = await send('GET', `/v1/social/webhook-endpoints/${endpoint.id}`);
      return read.body.status === 'disabled' ? read.body : null;
    });
    expect(disabled.disabled_reason).toContain('410');
    receiver.answer = () => ({ status: 204 });
    const enabled = await send('POST', `/v1/social/webhook-endpoints/${endpoint.id}/enable`);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null });
  });

  // The README's receiver (standard-library Python) verifies what the service signs.
  it.skipIf(spawnSync('python3', ['--version']).status !== 0)(
    "is verified by the README's Python receiver",
    async () => {
      const script = path.resolve(import.meta.dirname, '../../examples/webhook_receiver.py');
      // A random port can be taken by another process on a busy machine: the receiver then exits
      // (it says "listening" only once bound), and the next port is tried.
      const start = async () => {
        const port = 20_000 + Math.floor(Math.random() * 20_000);
        const created = (await send('POST', '/v1/social/webhook-endpoints', { url: `http://127.0.0.1:${port}/hooks` }))
          .body;
        const child = spawn('python3', [script, String(port)], {
          env: { ...process.env, WEBHOOK_SECRET: created.secret },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const run = { created, child, output: '', exited: false };
        child.stdout.on('data', (chunk: Buffer) => (run.output += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (run.output += chunk.toString('utf8')));
        child.on('exit', () => (run.exited = true));
        await until(() => run.output.includes('listening') || run.exited, { what: 'the receiver to listen' });
        return run;
      };
      let run = await start();
      for (let attempt = 1; run.exited && attempt < 5; attempt += 1) run = await start();
      const { created, child } = run;
      try {
        expect(run.exited, run.output).toBe(false);
        const test = (await send('POST', `/v1/social/webhook-endpoints/${created.id}/test`)).body;
        await until(() => run.output.includes(`webhook.test ${test.id}`)).catch((error: Error) => {
          throw new Error(`${error.message}; the receiver printed: ${run.output}`);
        });
        expect(run.output).not.toContain('refused');
      } finally {
        child.kill();
      }
    },
  );
});
