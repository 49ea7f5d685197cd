import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openAlertRedis } from '../../src/services/alerts/alert-redis.ts';
import type { EndpointRecord } from '../../src/services/alerts/endpoint-store.ts';
import { eventIdOf, matchedEventBody } from '../../src/services/alerts/events.ts';
import { createSecretBox, generateWebhookSecret } from '../../src/services/alerts/secret-box.ts';
import {
  createWebhookDelivery,
  TURN_BUDGET_MS,
  type WebhookDelivery,
} from '../../src/services/alerts/webhook-delivery.ts';
import { createWebhookSender } from '../../src/services/alerts/webhook-sender.ts';
import { openAlertStores, type AlertStores } from '../../src/start/alerts.ts';

// One endpoint's turn at its outbox (webhook-delivery.ts), on a real Redis and a real receiver on
// loopback: deliveries in order, a few at a time; one to retry ends the turn and backs the endpoint
// off; a 410 disables it; 24 h end every delivery whatever failed; the service's own failures are
// logged once, counted and shown; a changed SIGNING_SECRET stops nothing when kept as previous.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-webhook-delivery-${randomUUID()}`;
const OLD_KEY = 'webhook-delivery-test-signing-secret-one';
const NEW_KEY = 'webhook-delivery-test-signing-secret-two';
let secret: string;
let redis: Redis;
let stores: AlertStores;
let server: Server;
let url: string;
/** Event ids as the receiver verified them, in arrival order. */
let received: string[] = [];
/** What the receiver answers to an event id, once (then 204). */
const answers = new Map<string, number>();
/** How long the receiver takes to answer. */
let delayMs = 0;
const sender = createWebhookSender({ allowPrivate: true, userAgent: 'webhook-delivery-test' });
let clock = Date.now();
/** What the delivery logged, as the operator's log would show it. */
let logged: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
const logger = {
  info: (fields: Record<string, unknown>, msg: string) => logged.push({ level: 'info', fields, msg }),
  warn: (fields: Record<string, unknown>, msg: string) => logged.push({ level: 'warn', fields, msg }),
  error: (fields: Record<string, unknown>, msg: string) => logged.push({ level: 'error', fields, msg }),
};

function delivery(keyring: string[]): WebhookDelivery {
  return createWebhookDelivery({
    ...stores,
    box: createSecretBox(keyring),
    send: sender.send,
    logger: logger as never,
    now: () => clock,
    random: () => 1,
  });
}

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  stores = openAlertStores({ REDIS_PREFIX: prefix, SAVED_SEARCH_EVENT_LIMIT: 100 }, openAlertRedis({ redis, prefix }));
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

let endpoint: EndpointRecord;
beforeEach(async () => {
  received = [];
  logged = [];
  delayMs = 0;
  clock = Date.now();
  secret = generateWebhookSecret();
  endpoint = {
    id: `whe_${randomUUID().slice(0, 8)}`,
    owner: 'holder-1',
    url,
    description: null,
    status: 'enabled',
    disabled_reason: null,
    secret: createSecretBox([OLD_KEY]).seal(secret),
    previous_secrets: [],
    created_at: new Date().toISOString(),
    failing_since: null,
    failed_turns: 0,
    last_error: null,
  };
  expect(await stores.endpoints.insert(endpoint, 100)).toBe(true);
});

let queued = 0;
/** Queues `n` test events to the endpoint; returns their ids in order. */
async function queue(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `evt_${endpoint.id}_${queued++}`;
    const body = JSON.stringify({ id, type: 'webhook.test', created_at: '2026-11-27T00:00:00Z', data: {} });
    expect(await stores.deliveries.queueTest(endpoint.owner, endpoint.id, { id, body }, 1000)).toBe(true);
    ids.push(id);
  }
  return ids;
}
const outbox = async () => (await stores.deliveries.read(endpoint.id, 100)).map((d) => d.entry.event);
const log = async () =>
  (await stores.endpoints.deliveries(endpoint.id, 100)).map((a) => [a.event_id, a.attempt, a.status, a.error]);

describe("an endpoint's turn", () => {
  it('sends its deliveries in order; one to retry stays for a later turn, backed off by Retry-After, the rest are not sent twice', async () => {
    const [e0, e1, e2, e3, e4] = await queue(5);
    answers.set(e2!, 503);
    const deliver = delivery([OLD_KEY]);
    const next = await deliver(endpoint.id);
    // Up to four in flight at once: whatever was not sent, and e2, wait in the outbox.
    const waiting = await outbox();
    expect(waiting[0]).toBe(e2);
    expect([...received.filter((id) => id !== e2), ...waiting.slice(1)].sort()).toEqual([e0, e1, e3, e4].sort());
    expect(next - clock).toBe(7000);
    const failing = (await stores.endpoints.get(endpoint.id))!;
    expect(failing).toMatchObject({ failed_turns: 1, last_error: 'HTTP 503' });
    expect(failing.failing_since).not.toBeNull();

    const sentBefore = received.length;
    await deliver(endpoint.id);
    expect(received.slice(sentBefore)).toEqual(waiting);
    expect(await outbox()).toEqual([]);
    // Each sent once, e2 twice.
    expect([...received].sort()).toEqual([e0, e1, e2, e2, e3, e4].sort());
    expect(await stores.endpoints.get(endpoint.id)).toMatchObject({
      failing_since: null,
      failed_turns: 0,
      last_error: null,
    });
    const attempts = await log();
    expect(attempts.filter(([id]) => id === e2)).toEqual([
      [e2, 2, 204, null],
      [e2, 1, 503, 'HTTP 503'],
    ]);
    expect(attempts).toHaveLength(6);
    expect(received.indexOf(e0!)).toBeLessThan(received.indexOf(e4!));
  });

  it('logs a refused delivery and goes on; a 410 disables the endpoint and empties its outbox', async () => {
    const [e0, , e2] = await queue(6);
    answers.set(e0!, 400);
    answers.set(e2!, 410);
    delayMs = 50;
    await delivery([OLD_KEY])(endpoint.id);
    const disabled = (await stores.endpoints.get(endpoint.id))!;
    expect(disabled.status).toBe('disabled');
    expect(disabled.disabled_reason).toContain('410');
    expect(await outbox()).toEqual([]);
    expect((await log()).find(([id]) => id === e0)).toEqual([e0, 1, 400, 'HTTP 400']);
    // A disabled endpoint's turn sends nothing.
    const before = received.length;
    await queue(1);
    await delivery([OLD_KEY])(endpoint.id);
    expect(received).toHaveLength(before);
  });

  it('ends a turn after its budget against a slow receiver, so other endpoints get theirs', async () => {
    delayMs = 1500;
    await queue(40);
    const started = performance.now();
    await delivery([OLD_KEY])(endpoint.id);
    const took = performance.now() - started;
    expect(took).toBeLessThan(TURN_BUDGET_MS + 2 * delayMs + 1000);
    expect(received.length).toBeGreaterThanOrEqual(8);
    expect(received.length).toBeLessThan(40);
    expect(await outbox()).toHaveLength(40 - received.length);
  });

  it('drops deliveries queued 24 h ago, logged expired, whatever else fails, and counts them', async () => {
    const [e0] = await queue(2);
    const before = Number((await stores.deliveries.failureCounts()).expired ?? 0);
    clock = Date.now() + 24 * 60 * 60 * 1000 + 1000;
    // Even with a secret no key opens: the window holds for every cause.
    await delivery([NEW_KEY])(endpoint.id);
    expect(received).toEqual([]);
    expect(await outbox()).toEqual([]);
    expect((await log()).find(([id]) => id === e0)?.[3]).toMatch(/^expired: not delivered within 24 h/);
    expect(Number((await stores.deliveries.failureCounts()).expired)).toBe(before + 2);
  });

  it('sends a matched event as the pull endpoint shows it, put together from the stored summary; one whose summary is gone is logged and dropped', async () => {
    const search = {
      id: `ss_${randomUUID().slice(0, 8)}`,
      owner: endpoint.owner,
      name: 'ref',
      post: { query: 'ref' },
      vector: null,
      webhook_endpoint_id: endpoint.id,
      created_at: new Date().toISOString(),
      last_match_at: null,
      events_dropped: 0,
      events: ['posts' as const],
      volume: null,
    };
    await stores.searches.insert(search, 100);
    const at = new Date().toISOString();
    const summary = JSON.stringify({ id: 'post_ref_1', caption: 'a summary stored once' });
    await stores.events.record(
      [
        { post: 'post_ref_gone', at, firstSeen: Date.now(), summary: '{}' },
        { post: 'post_ref_1', at, firstSeen: Date.now(), summary },
      ],
      [{ search, posts: ['post_ref_gone', 'post_ref_1'] }],
    );
    await redis.del(`${prefix}:alert-store:summary:post_ref_gone:${Date.parse(at)}`);
    const bodies: string[] = [];
    const recording = createWebhookDelivery({
      ...stores,
      box: createSecretBox([OLD_KEY]),
      send: (target, message) => {
        bodies.push(message.body);
        return sender.send(target, message);
      },
    });
    await recording(endpoint.id);
    expect(bodies).toEqual([matchedEventBody(search.id, 'post_ref_1', at, summary)]);
    expect(received).toEqual([eventIdOf(search.id, 'post_ref_1')]);
    expect((await log()).map(([id, , status, error]) => [id, status, error])).toEqual([
      [eventIdOf(search.id, 'post_ref_1'), 204, null],
      [eventIdOf(search.id, 'post_ref_gone'), null, 'event gone'],
    ]);
  });
});

describe('SIGNING_SECRET changed', () => {
  it('opens stored secrets under the previous key too, so nothing stops, and seals them again under the new one', async () => {
    const [e0] = await queue(1);
    // The operator moved to NEW_KEY, keeping OLD_KEY as SIGNING_SECRET_PREVIOUS.
    await delivery([NEW_KEY, OLD_KEY])(endpoint.id);
    expect(received).toEqual([e0]);
    // Sealed under the new key now: the old one can be dropped from the keyring.
    const [e1] = await queue(1);
    await delivery([NEW_KEY])(endpoint.id);
    expect(received).toEqual([e0, e1]);
    expect(logged.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('without the previous key, fails loudly: logged once per endpoint and cause, counted, shown in the delivery log and on the endpoint, and backed off', async () => {
    const [e0] = await queue(3);
    const before = Number((await stores.deliveries.failureCounts()).secret ?? 0);
    const deliver = delivery([NEW_KEY]);
    const next = await deliver(endpoint.id);
    expect(next).toBeGreaterThan(clock);
    await deliver(endpoint.id);
    await deliver(endpoint.id);
    expect(received).toEqual([]);
    expect(await outbox()).toHaveLength(3);
    const errors = logged.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.fields).toMatchObject({ endpoint: endpoint.id, cause: 'secret' });
    expect(Number((await stores.deliveries.failureCounts()).secret)).toBe(before + 3);
    // Each failed turn is an attempt at the delivery it stopped, numbered as a receiver's would be.
    expect((await log()).slice(0, 3)).toEqual(
      [3, 2, 1].map((n) => [e0, n, null, expect.stringContaining('signing secret cannot be opened')]),
    );
    expect((await stores.endpoints.get(endpoint.id))!.last_error).toContain('SIGNING_SECRET');
    // The key given back: it works again, and says so once.
    await delivery([NEW_KEY, OLD_KEY])(endpoint.id);
    expect(received).toHaveLength(3);
    expect((await log()).find(([id, , status]) => id === e0 && status === 204)).toEqual([e0, 4, 204, null]);
  });
});
