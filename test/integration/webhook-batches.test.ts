import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RetryDeliveryError } from '../../src/queues/registry.ts';
import { createAlertStore, type AlertStore } from '../../src/services/alerts/alert-store.ts';
import { eventIdOf, matchedEventBody } from '../../src/services/alerts/events.ts';
import { createSecretBox, generateWebhookSecret } from '../../src/services/alerts/secret-box.ts';
import {
  createWebhookDelivery,
  type DeliveryJob,
  type WebhookDelivery,
} from '../../src/services/alerts/webhook-delivery.ts';
import { createWebhookSender } from '../../src/services/alerts/webhook-sender.ts';

// A delivery job is a batch of one pass's events for one endpoint: sent in order over one endpoint
// read, on a real Redis and to a real receiver on loopback. An event to retry stops the run and
// is kept with the ones after it for the job's next attempt; nothing before it is sent again.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-webhook-batches-${randomUUID()}`;
const secret = generateWebhookSecret();
const box = createSecretBox('webhook-batches-test-signing-secret');
let redis: Redis;
let store: AlertStore;
let server: Server;
let url: string;
/** Event ids as the receiver verified them, in arrival order. */
let received: string[] = [];
/** What the receiver answers to an event id, once (then 204). */
const answers = new Map<string, number>();
/** How long the receiver takes to answer. */
let delayMs = 0;
const sender = createWebhookSender();
let deliver: WebhookDelivery;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  store = createAlertStore({ redis, prefix });
  deliver = createWebhookDelivery({
    store,
    box,
    allowPrivate: true,
    userAgent: 'webhook-batches-test',
    send: sender.send,
  });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as { id: string };
      received.push(event.id);
      const status = answers.get(event.id) ?? 204;
      answers.delete(event.id);
      setTimeout(() => res.writeHead(status, status === 503 ? { 'retry-after': '7' } : {}).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  await sender.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
});

let endpointId: string;
beforeEach(async () => {
  received = [];
  delayMs = 0;
  endpointId = `whe_${randomUUID().slice(0, 8)}`;
  await store.insertEndpoint({
    id: endpointId,
    owner: 'holder-1',
    url,
    description: null,
    status: 'enabled',
    disabled_reason: null,
    secret: box.seal(secret),
    previous_secret: null,
    previous_secret_until: null,
    created_at: new Date().toISOString(),
    failing_since: null,
  });
});

const batch = (n: number): DeliveryJob => ({
  endpoint_id: endpointId,
  events: Array.from({ length: n }, (_, i) => {
    const id = `evt_${endpointId}_${i}`;
    return {
      event_id: id,
      body: JSON.stringify({ id, type: 'post.matched', created_at: '2026-11-27T00:00:00Z', data: {} }),
    };
  }),
});
const ids = (job: DeliveryJob) => job.events.map((e) => e.event_id);

describe('a delivery job of many events', () => {
  it('sends them in order, and on a 503 keeps that event and the rest for the retry, sending none twice', async () => {
    const job = batch(5);
    const [e0, e1, e2, e3, e4] = ids(job);
    answers.set(e2!, 503);
    let kept: DeliveryJob | null = null;
    const first = deliver(job, { queuedAt: Date.now(), keep: async (rest) => void (kept = rest) });
    const error = await first.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryDeliveryError);
    expect((error as RetryDeliveryError).retryAfterMs).toBe(7000);
    expect((error as RetryDeliveryError).attempts).toBe(1);
    expect(received).toEqual([e0, e1, e2]);
    expect(kept!.endpoint_id).toBe(endpointId);
    expect(kept!.events).toEqual([{ ...job.events[2], attempts: 1 }, job.events[3], job.events[4]]);
    expect((await store.endpoint(endpointId))!.failing_since).not.toBeNull();

    expect(await deliver(kept!, { queuedAt: Date.now(), keep: async () => undefined })).toBe('delivered');
    expect(received).toEqual([e0, e1, e2, e2, e3, e4]);
    expect((await store.endpoint(endpointId))!.failing_since).toBeNull();
    const log = await store.deliveries(endpointId, 10);
    expect(log.map((a) => [a.event_id, a.attempt, a.status])).toEqual([
      [e4, 1, 204],
      [e3, 1, 204],
      [e2, 2, 204],
      [e2, 1, 503],
      [e1, 1, 204],
      [e0, 1, 204],
    ]);
  });

  it('logs a refused event and goes on; a 410 disables the endpoint and sends nothing after it', async () => {
    const job = batch(4);
    const [e0, e1, e2] = ids(job);
    answers.set(e0!, 400);
    answers.set(e2!, 410);
    let kept = false;
    expect(await deliver(job, { queuedAt: Date.now(), keep: async () => void (kept = true) })).toBe(
      'endpoint-disabled',
    );
    expect(received).toEqual([e0, e1, e2]);
    expect(kept).toBe(false);
    const endpoint = (await store.endpoint(endpointId))!;
    expect(endpoint.status).toBe('disabled');
    expect(endpoint.disabled_reason).toContain('410');
    expect((await store.deliveries(endpointId, 10)).map((a) => a.status)).toEqual([410, 204, 400]);
    // A disabled endpoint's jobs send nothing.
    expect(await deliver(batch(2), { queuedAt: Date.now(), keep: async () => undefined })).toBe('endpoint-disabled');
    expect(received).toHaveLength(3);
  });

  it('drops what is left once its events have been retried for 24 hours', async () => {
    const job = batch(3);
    answers.set(ids(job)[1]!, 503);
    const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
    expect(await deliver(job, { queuedAt: dayAgo, keep: async () => undefined })).toBe('expired');
    expect(received).toEqual(ids(job).slice(0, 2));
  });

  it('keeps its progress every second against a slow receiver, so a killed worker sends little again', async () => {
    delayMs = 600;
    const job = batch(5);
    const kept: string[][] = [];
    expect(await deliver(job, { queuedAt: Date.now(), keep: async (rest) => void kept.push(ids(rest)) })).toBe(
      'delivered',
    );
    // 600 ms an event: past a second after the second event, and again after the fourth.
    expect(kept).toEqual([ids(job).slice(2), ids(job).slice(4)]);
    expect((await store.deliveries(endpointId, 10)).map((a) => a.event_id)).toEqual(ids(job).reverse());
  });
});

describe('events queued by reference', () => {
  it('are sent as the pull endpoint shows them, put together from the stored summary; one whose summary is gone is logged and skipped', async () => {
    const at = new Date().toISOString();
    const summary = JSON.stringify({ id: 'post_ref_1', caption: 'a summary stored once' });
    await store.storeSummaries(new Map([['post_ref_1', { at, summary }]]));
    const job: DeliveryJob = {
      endpoint_id: endpointId,
      events: [
        {
          event_id: eventIdOf('ss_ref', 'post_ref_gone'),
          ref: { saved_search_id: 'ss_ref', post: 'post_ref_gone', at },
        },
        { event_id: eventIdOf('ss_ref', 'post_ref_1'), ref: { saved_search_id: 'ss_ref', post: 'post_ref_1', at } },
      ],
    };
    const bodies: string[] = [];
    const recording = createWebhookDelivery({
      store,
      box,
      allowPrivate: true,
      userAgent: 'webhook-batches-test',
      send: (target, message, options) => {
        bodies.push(message.body);
        return sender.send(target, message, options);
      },
    });
    expect(await recording(job, { queuedAt: Date.now(), keep: async () => undefined })).toBe('failed');
    expect(bodies).toEqual([matchedEventBody('ss_ref', 'post_ref_1', at, summary)]);
    expect(received).toEqual([eventIdOf('ss_ref', 'post_ref_1')]);
    const log = await store.deliveries(endpointId, 10);
    expect(log.map((a) => [a.event_id, a.status, a.error])).toEqual([
      [eventIdOf('ss_ref', 'post_ref_1'), 204, null],
      [eventIdOf('ss_ref', 'post_ref_gone'), null, 'event gone'],
    ]);
  });
});
