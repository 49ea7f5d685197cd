import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { freePort } from '../helpers/redis-server.ts';
import { openDrill, summary, type Drill } from '../helpers/drill.ts';
import { timeUntil } from '../helpers/wait.ts';

/**
 * Drills of webhook delivery with a real worker process and a real receiver on loopback:
 * 1. the receiver is down for two minutes while new posts keep matching, then comes back: every
 *    event arrives (the endpoint's turns retried on its back-off), none is lost, no pair gets a
 *    second id;
 * 2. the worker is SIGKILLed while deliveries are in flight (the receiver answers slowly): the
 *    new worker takes the endpoint once the dead one's lease ends, and every event arrives (at
 *    least once: a cut attempt may repeat).
 */

/** A receiver on a fixed port that can go down and come back: records event ids as they arrive. */
class Receiver {
  readonly ids: string[] = [];
  delayMs = 0;
  private server: Server | null = null;
  constructor(readonly port: number) {}
  get url() {
    return `http://127.0.0.1:${this.port}/hooks`;
  }
  async up(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        void sleep(this.delayMs).then(() => {
          this.ids.push((JSON.parse(body) as { id: string }).id);
          res.writeHead(204).end();
        });
      });
    });
    // A port taken meanwhile fails the drill at once rather than hanging it until its timeout.
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.port, '127.0.0.1', resolve);
    });
  }
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  distinct(): Set<string> {
    return new Set(this.ids);
  }
}

let drill: Drill | undefined;
let receiver: Receiver;

beforeAll(async () => {
  drill = await openDrill('webhooks', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = new Receiver(await freePort());
  await receiver.up();
});
afterAll(async () => {
  await receiver?.down();
  await drill?.close();
});

/** Creates an endpoint and a saved search matching every reel whose caption names `word`. */
async function savedSearchFor(d: Drill, author: string, word: string): Promise<string> {
  const endpoint = await d.stack.post('/v1/social/webhook-endpoints', { url: receiver.url });
  expect(endpoint.statusCode, JSON.stringify(endpoint.body)).toBe(201);
  await d.stack.ingest([accountObs({ platform_id: author, handle: author, followers_count: 5000 })]);
  const search = await d.stack.post('/v1/social/saved-searches', {
    name: author,
    post: { query: word, filters: { format: { in: ['reel'] } } },
    webhook_endpoint_id: endpoint.body.id,
  });
  expect(search.statusCode, JSON.stringify(search.body)).toBe(201);
  return search.body.id as string;
}

/** Ingests `n` new matching posts of `author` (captions naming `word`), numbered from `from`, in requests of 10. */
async function newPosts(d: Drill, author: string, word: string, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i += 10) {
    const batch = Array.from({ length: Math.min(10, from + n - i) }, (_, k) =>
      postObs(author, {
        platform_id: `${author}-${i + k}`,
        caption: `${word} sighting number ${i + k}`,
        format: 'reel',
      }),
    );
    const response = await d.stack.ingest(batch, { wait: false });
    expect(response.statusCode).toBe(202);
  }
}

it('delivers every event after the receiver was down for two minutes', async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const worker = await d.startWorkerProcess();
  await savedSearchFor(d, 'outage-author', 'zebrafinch');
  await newPosts(d, 'outage-author', 'zebrafinch', 0, 50);
  await timeUntil('the first 50 events', () => receiver.distinct().size >= 50, 60_000, 250);

  await receiver.down();
  const downAt = performance.now();
  await newPosts(d, 'outage-author', 'zebrafinch', 50, 50);
  await sleep(Math.max(0, 120_000 - (performance.now() - downAt)));
  await receiver.up();
  const recovery = await timeUntil('every event after the outage', () => receiver.distinct().size >= 100, 300_000, 250);
  await sleep(3000);
  await worker.stop();

  expect(receiver.distinct().size).toBe(100);
  summary('webhook-receiver-down', {
    events: receiver.distinct().size,
    deliveries: receiver.ids.length,
    repeated: receiver.ids.length - receiver.distinct().size,
    recovery_ms_after_back: recovery,
  });
}, 480_000);

it('delivers every event after the worker is SIGKILLed mid-delivery', async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const before = receiver.distinct().size;
  receiver.delayMs = 1500;
  const first = await d.startWorkerProcess();
  await savedSearchFor(d, 'kill-author', 'kingfisher');
  await newPosts(d, 'kill-author', 'kingfisher', 0, 40);
  await timeUntil('deliveries under way', () => receiver.distinct().size >= before + 5, 60_000, 250);
  first.kill('SIGKILL');
  await first.exited;
  const second = await d.startWorkerProcess();
  const recovery = await timeUntil(
    'every event after the kill',
    () => receiver.distinct().size >= before + 40,
    180_000,
    250,
  );
  await sleep(3000);
  await second.stop();
  expect(receiver.distinct().size).toBe(before + 40);
  summary('webhook-worker-sigkill', {
    events: receiver.distinct().size - before,
    recovery_ms: recovery,
    repeated_overall: receiver.ids.length - receiver.distinct().size,
  });
}, 300_000);
