import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlertStore, EVENT_RETENTION_MS, type AlertStore } from '../../src/services/alerts/alert-store.ts';
import { matchedEventBody } from '../../src/services/alerts/events.ts';
import { startRedisServer } from '../helpers/redis-server.ts';

// The events' storage on a real Redis: what the pull endpoint reads back is the body the webhook
// sends, each post's summary stored once per pass however many saved searches it matched.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-alert-events-${randomUUID()}`;
let redis: Redis;
let store: AlertStore;

const summary = (id: string) => JSON.stringify({ id, caption: `caption of ${id}`, web_url: `https://x.test/${id}` });

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  store = createAlertStore({ redis, prefix });
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
});

describe('alert events', () => {
  it('reads back each event as the body a webhook sends, the summary stored once for every search', async () => {
    const at = new Date().toISOString();
    const summaries = new Map([
      ['post-a', summary('post-a')],
      ['post-b', summary('post-b')],
    ]);
    await store.storeSummaries(new Map([...summaries].map(([post, summary]) => [post, { at, summary }])));
    await store.appendEvents(
      new Map([
        [
          'ss_one',
          [
            { post: 'post-a', at },
            { post: 'post-b', at },
          ],
        ],
        ['ss_two', [{ post: 'post-a', at }]],
      ]),
    );
    const one = await store.events('ss_one', null, 10);
    expect(one.map((e) => e.body)).toEqual([
      matchedEventBody('ss_one', 'post-a', at, summaries.get('post-a')!),
      matchedEventBody('ss_one', 'post-b', at, summaries.get('post-b')!),
    ]);
    expect(JSON.parse(one[0]!.body)).toMatchObject({
      type: 'post.matched',
      created_at: at,
      data: { saved_search_id: 'ss_one', post: { id: 'post-a' } },
    });
    const two = await store.events('ss_two', null, 10);
    expect(two.map((e) => e.body)).toEqual([matchedEventBody('ss_two', 'post-a', at, summaries.get('post-a')!)]);
    // Three events, two summaries: post-a's is shared by both searches.
    expect(await redis.keys(`${prefix}:alert-store:summary:*`)).toHaveLength(2);

    const after = await store.events('ss_one', one[0]!.position, 10);
    expect(after.map((e) => e.position)).toEqual([one[1]!.position]);

    // A pair is recorded once: a later pass that finds post-a again appends only what is new.
    // Each event carries its own time (a post matched at its write keeps the write's), its body the
    // summary stored at that time.
    const later = new Date(Date.parse(at) + 1000).toISOString();
    await store.storeSummaries(new Map([['post-c', { at: later, summary: summary('post-c') }]]));
    const fresh = await store.appendEvents(
      new Map([
        [
          'ss_one',
          [
            { post: 'post-a', at: later },
            { post: 'post-c', at: later },
          ],
        ],
        // Recorded in the same call: each search's own pairs decide (ss_two has seen post-a).
        ['ss_two', [{ post: 'post-a', at: later }]],
      ]),
    );
    expect(fresh).toEqual(new Map([['ss_one', new Set(['post-c'])]]));
    expect((await store.events('ss_two', null, 10)).map((e) => JSON.parse(e.body).created_at)).toEqual([at]);
    const all = (await store.events('ss_one', null, 10)).map((e) => JSON.parse(e.body));
    expect(all.map((e) => e.data.post.id)).toEqual(['post-a', 'post-b', 'post-c']);
    expect(all.map((e) => e.created_at)).toEqual([at, at, later]);
  });

  it('records events on a Redis that has forgotten its scripts (a restart, SCRIPT FLUSH), once each', async () => {
    // A server of its own: flushing the shared one's scripts would reach other test files.
    const server = await startRedisServer();
    const own = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      const ownStore = createAlertStore({ redis: own, prefix });
      const at = new Date().toISOString();
      const pairs = (posts: string[]) => new Map([['ss_flush', posts.map((post) => ({ post, at }))]]);
      expect(await ownStore.appendEvents(pairs(['post-a']))).toEqual(new Map([['ss_flush', new Set(['post-a'])]]));
      await own.script('FLUSH');
      expect(await ownStore.appendEvents(pairs(['post-a', 'post-b']))).toEqual(
        new Map([['ss_flush', new Set(['post-b'])]]),
      );
      expect(await own.xlen(`${prefix}:alert-store:search:ss_flush:events`)).toBe(2);
    } finally {
      own.disconnect();
      await server.close();
    }
  });

  it('serves no event older than the retention, and entries stored whole as they are', async () => {
    const events = `${prefix}:alert-store:search:ss_old:events`;
    const old = Date.now() - EVENT_RETENTION_MS - 60_000;
    await redis.xadd(events, `${old}-0`, 'body', '{"id":"evt_too_old"}');
    await redis.xadd(events, '*', 'body', '{"id":"evt_whole"}');
    expect((await store.events('ss_old', null, 10)).map((e) => e.body)).toEqual(['{"id":"evt_whole"}']);
    // A cursor from before the retention starts at its edge.
    expect((await store.events('ss_old', `${old - 1}-0`, 10)).map((e) => e.body)).toEqual(['{"id":"evt_whole"}']);
  });
});
