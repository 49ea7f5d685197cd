import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { freePort } from '../helpers/redis-server.ts';
import { openDrill, summary, type Drill } from '../helpers/drill.ts';
import { timeUntil } from '../helpers/wait.ts';

/**
 * Fair delivery, with a real worker process and receivers on loopback: holder A's endpoint has 200
 * events waiting while its receiver answers only after 9 s (then: while it is down), and holder B's
 * new match must still reach B's receiver within 15 s. One endpoint's turn at a time, a share of
 * the turns per holder (services/alerts/deliveries.ts): A delays only itself.
 */

/**
 * A receiver on loopback: answers after `delayMs`, records event ids and when they arrived. It
 * listens on a port the kernel picks as it binds, so two receivers never race for one port (a port
 * probed free and bound later can be taken in between: the listen then failed with EADDRINUSE, and
 * a promise that waited only for success hung the test).
 */
class Receiver {
  readonly arrivals: Array<{ id: string; at: number }> = [];
  private server: Server | null = null;
  private port = 0;
  constructor(private readonly delayMs: number) {}
  get url() {
    if (!this.port) throw new Error('the receiver is not up');
    return `http://127.0.0.1:${this.port}/hooks`;
  }
  async up(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        this.arrivals.push({ id: (JSON.parse(body) as { id: string }).id, at: performance.now() });
        void sleep(this.delayMs).then(() => {
          if (!res.destroyed) res.writeHead(204).end();
        });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

let drill: Drill | undefined;
beforeAll(async () => {
  drill = await openDrill('webhook-fairness', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  await drill?.close();
});

/** A holder's key, endpoint and saved search for reels naming `word`, pushing to `url`. */
async function holder(d: Drill, name: string, word: string, url: string): Promise<{ key: string; search: string }> {
  const { key } = await d.stack.runtime.api.keys.create({
    owner: `${name}@example.com`,
    name,
    scopes: ['search', 'ingest'],
  });
  const call = async (path: string, body: unknown) => {
    const response = await d.stack.inject({
      method: 'POST',
      url: path,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(201);
    return response.body as { id: string };
  };
  const endpoint = await call('/v1/social/webhook-endpoints', { url });
  await d.stack.ingest([accountObs({ platform_id: `${name}-author`, handle: `${name}.author` })]);
  const search = await call('/v1/social/saved-searches', {
    name,
    post: { query: word, filters: { format: { in: ['reel'] } } },
    webhook_endpoint_id: endpoint.id,
  });
  return { key, search: search.id };
}

/** Ingests `n` posts of `author` naming `word`, in requests of 50, without waiting for the worker. */
async function posts(d: Drill, author: string, word: string, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i += 50) {
    const batch = Array.from({ length: Math.min(50, from + n - i) }, (_, k) =>
      postObs(`${author}-author`, {
        platform_id: `${author}-${i + k}`,
        caption: `${word} number ${i + k}`,
        format: 'reel',
      }),
    );
    expect((await d.stack.ingest(batch, { wait: false })).statusCode).toBe(202);
  }
}

/** How many deliveries wait in the outbox of the endpoint `search` pushes to. */
async function waiting(d: Drill, owner: string): Promise<number> {
  const prefix = `${d.prefix}:alert-store`;
  const ids = await d.stack.runtime.redis.zrange(`${prefix}:owner:${owner}@example.com:endpoints`, 0, -1);
  return d.stack.runtime.redis.xlen(`${prefix}:endpoint:${ids[0]}:outbox`);
}

/** B's new match reaches B's receiver, timed from its intake. */
async function bsMatch(d: Drill, receiver: Receiver, round: string): Promise<number> {
  const before = receiver.arrivals.length;
  const started = performance.now();
  await posts(d, `b${round}`, 'kingfisher', 0, 1);
  await timeUntil("B's event", () => receiver.arrivals.length > before, 60_000);
  return Math.round(receiver.arrivals[before]!.at - started);
}

it("delivers holder B's new match within 15 s while A's receiver answers after 9 s to 200 waiting events", async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const slow = new Receiver(9000);
  const fast = new Receiver(0);
  await Promise.all([slow.up(), fast.up()]);
  const worker = await d.startWorkerProcess();
  try {
    await holder(d, 'aslow', 'albatross', slow.url);
    await holder(d, 'bslow', 'kingfisher', fast.url);
    await posts(d, 'aslow', 'albatross', 0, 200);
    await timeUntil(
      "A's 200 events queued, its first requests in flight",
      async () => slow.arrivals.length >= 4 && (await waiting(d, 'aslow')) >= 190,
      120_000,
    );
    const latency = await bsMatch(d, fast, 'slow');
    expect(latency).toBeLessThan(15_000);
    summary('webhook-fairness-slow', {
      b_latency_ms: latency,
      a_waiting: await waiting(d, 'aslow'),
      a_requests_so_far: slow.arrivals.length,
    });
  } finally {
    await worker.stop();
    await Promise.all([slow.down(), fast.down()]);
  }
}, 300_000);

it("delivers holder B's new match within 15 s while A's receiver is down with 200 events waiting", async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const downPort = await freePort();
  const fast = new Receiver(0);
  await fast.up();
  const worker = await d.startWorkerProcess();
  try {
    await holder(d, 'adown', 'albatross', `http://127.0.0.1:${downPort}/hooks`);
    await holder(d, 'bdown', 'kingfisher', fast.url);
    await posts(d, 'adown', 'albatross', 1000, 200);
    await timeUntil("A's 200 events queued", async () => (await waiting(d, 'adown')) >= 200, 120_000);
    const latency = await bsMatch(d, fast, 'down');
    expect(latency).toBeLessThan(15_000);
    summary('webhook-fairness-down', { b_latency_ms: latency, a_waiting: await waiting(d, 'adown') });
  } finally {
    await worker.stop();
    await fast.down();
  }
}, 300_000);
