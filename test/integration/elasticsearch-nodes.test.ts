import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * ELASTICSEARCH_URL with several nodes, one of them down (nothing listens on port 1): every request
 * is answered, a request sent to the dead node being retried on the live one.
 */

const live = (process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200').split(',')[0]!;
let stack: Stack;
const attempts = new Map<string, number>();

beforeAll(async () => {
  stack = await startStack('es-nodes', { ELASTICSEARCH_URL: `http://127.0.0.1:1,${live}` });
});

afterAll(async () => stack?.close());

it('answers every request through the live node when another listed node is down', async () => {
  stack.runtime.es.diagnostic.on('request', (_error, event) => {
    const url = event?.meta.connection?.url.origin ?? '?';
    attempts.set(url, (attempts.get(url) ?? 0) + 1);
  });
  const ingest = await stack.ingest([
    accountObs({ platform_id: 'nodes-a', handle: 'nodes.author' }),
    postObs('nodes-a', { platform_id: 'nodes-p' }),
  ]);
  expect(ingest.statusCode, JSON.stringify(ingest.body)).toBe(200);
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    statuses.push((await stack.get('/v1/social/posts/SCnodes-p')).statusCode);
    statuses.push(
      (await stack.post('/v1/social/posts/search', { post: { filters: { views: { gte: 0 } } }, limit: 5 })).statusCode,
    );
    statuses.push((await stack.get('/v1/social/accounts/@nodes.author')).statusCode);
  }
  expect(statuses).toEqual(Array(18).fill(200));
  // The dead node was tried once (when the stack installed its indices), set aside, and not sent
  // requests since; it is pinged again after a minute (the resurrect strategy).
  const pool = stack.runtime.es.connectionPool as unknown as {
    connections: Array<{ id: string; url: URL }>;
    dead: string[];
  };
  expect(pool.connections.map((c) => c.url.origin)).toEqual(['http://127.0.0.1:1', new URL(live).origin]);
  expect(pool.dead).toEqual([pool.connections[0]!.id]);
  expect([...attempts.keys()]).toEqual([new URL(live).origin]);
});
