import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookSender } from '../../src/services/alerts/webhook-sender.ts';

const SECRET = 'whsec_' + Buffer.from('webhook-connections-test-secret!').toString('base64');
const OPTIONS = { allowPrivate: true, userAgent: 'webhook-connections-test' };

/** A receiver on loopback that verifies each delivery and counts the TCP connections it took. */
let server: Server;
let url: URL;
let connections = 0;
const verified: string[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const event = new Webhook(SECRET).verify(body, req.headers as Record<string, string>) as { id: string };
      verified.push(event.id);
      res.writeHead(204).end();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const message = (id: string) => ({
  id,
  body: JSON.stringify({ id, type: 'post.matched', created_at: new Date().toISOString(), data: {} }),
  secrets: [SECRET],
});

describe('webhook connections', () => {
  it('delivers one after another over kept connections, and opens a new one once closed', async () => {
    const sender = createWebhookSender(OPTIONS);
    connections = 0;
    verified.length = 0;
    for (let i = 0; i < 10; i++) {
      const outcome = await sender.send(url, message(`evt_kept${i}`));
      expect(outcome).toMatchObject({ result: 'delivered', status: 204, error: null });
    }
    expect(verified).toEqual(Array.from({ length: 10 }, (_, i) => `evt_kept${i}`));
    // One, or two when the next request leaves before the first connection is back in the pool.
    expect(connections).toBeLessThanOrEqual(2);
    const kept = connections;

    await sender.close();
    const next = createWebhookSender(OPTIONS);
    expect((await next.send(url, message('evt_after'))).result).toBe('delivered');
    expect(connections).toBe(kept + 1);
    await next.close();
  });

  it('closes connections idle for longer than their keep-alive', async () => {
    const sender = createWebhookSender({ ...OPTIONS, keepAliveMs: 200 });
    connections = 0;
    expect((await sender.send(url, message('evt_idle1'))).result).toBe('delivered');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await sender.send(url, message('evt_idle2'))).result).toBe('delivered');
    expect(connections).toBe(2);
    await sender.close();
  });

  it('connects only to an address it checked: a name resolving to a private address is refused without WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = createWebhookSender({ allowPrivate: false, userAgent: 'webhook-connections-test' });
    connections = 0;
    const port = url.port;
    for (const target of [`http://localhost:${port}/hooks`, `http://127.0.0.1:${port}/hooks`]) {
      const outcome = await strict.send(new URL(target), message('evt_refused'));
      expect(outcome, target).toMatchObject({ result: 'retry', status: null });
      expect(outcome.error, target).toMatch(/private or loopback address/);
    }
    expect(connections).toBe(0);
    await strict.close();
  });
});
