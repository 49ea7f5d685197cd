import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAlertRedis } from '../../src/services/alerts/alert-redis.ts';
import { createDeliveryStore } from '../../src/services/alerts/delivery-store.ts';
import {
  createEventStore,
  NEWS_WINDOW_MS,
  type EventStore,
  type NewsPost,
} from '../../src/services/alerts/event-store.ts';
import { eventIdOf, matchedEventBody } from '../../src/services/alerts/events.ts';
import { createSearchStore, type SavedSearchRecord } from '../../src/services/alerts/search-store.ts';
import { startRedisServer } from '../helpers/redis-server.ts';

// The events' storage on a real Redis: what the pull endpoint reads back is the body the webhook
// sends, each post's summary stored once however many saved searches it is news to, each pair
// recorded once, a search's events bounded by its limit and by the 30-day window.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-alert-events-${randomUUID()}`;
let redis: Redis;
let events: EventStore;
let searches: ReturnType<typeof createSearchStore>;
const LIMIT = 3;

const summary = (id: string) => JSON.stringify({ id, caption: `caption of ${id}`, web_url: `https://x.test/${id}` });
const news = (post: string, at = new Date().toISOString(), firstSeen = Date.now()): NewsPost => ({
  post,
  at,
  firstSeen,
  summary: summary(post),
});

async function saved(id: string, endpoint: string | null = null): Promise<SavedSearchRecord> {
  const record: SavedSearchRecord = {
    id,
    owner: 'holder@example.com',
    name: id,
    post: { query: id },
    vector: null,
    webhook_endpoint_id: endpoint,
    created_at: new Date().toISOString(),
    last_match_at: null,
    events_dropped: 0,
    events: ['posts'],
    volume: null,
  };
  expect(await searches.insert(record, 1000)).toBe(true);
  return record;
}

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const store = openAlertRedis({ redis, prefix });
  searches = createSearchStore(store);
  events = createEventStore(store, { deliveries: createDeliveryStore(store), limit: LIMIT });
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
});

describe('alert events', () => {
  it('reads back each event as the body a webhook sends, the summary stored once for every search', async () => {
    const [one, two] = [await saved('ss_one'), await saved('ss_two')];
    const at = new Date().toISOString();
    const posts = [news('post-a', at), news('post-b', at)];
    const recorded = await events.record(posts, [
      { search: one, posts: ['post-a', 'post-b'] },
      { search: two, posts: ['post-a'] },
    ]);
    expect(recorded).toEqual(
      new Map([
        ['ss_one', { recorded: 2, dropped: 0 }],
        ['ss_two', { recorded: 1, dropped: 0 }],
      ]),
    );
    const page = await events.page('ss_one', null, 10);
    expect(page.events.map((e) => e.body)).toEqual([
      matchedEventBody('ss_one', 'post-a', at, summary('post-a')),
      matchedEventBody('ss_one', 'post-b', at, summary('post-b')),
    ]);
    expect(JSON.parse(page.events[0]!.body)).toMatchObject({
      id: eventIdOf('ss_one', 'post-a'),
      type: 'post.matched',
      created_at: at,
      data: { saved_search_id: 'ss_one', post: { id: 'post-a' } },
    });
    expect((await events.page('ss_two', null, 10)).events.map((e) => e.body)).toEqual([
      matchedEventBody('ss_two', 'post-a', at, summary('post-a')),
    ]);
    // Three events, two summaries: post-a's is shared by both searches.
    expect(await redis.keys(`${prefix}:alert-store:summary:*`)).toHaveLength(2);
    expect((await searches.get('ss_one'))!.last_match_at).toBe(at);

    // A pair is recorded once: news again later (it stopped matching and came back) gives nothing.
    const later = new Date(Date.parse(at) + 1000).toISOString();
    const again = await events.record(
      [news('post-a', later), news('post-c', later)],
      [
        { search: one, posts: ['post-a', 'post-c'] },
        { search: two, posts: ['post-a'] },
      ],
    );
    expect(again.get('ss_one')).toEqual({ recorded: 1, dropped: 0 });
    expect(again.get('ss_two')).toEqual({ recorded: 0, dropped: 0 });
    const all = (await events.page('ss_one', null, 10)).events.map((e) => JSON.parse(e.body));
    expect(all.map((e) => e.data.post.id)).toEqual(['post-a', 'post-b', 'post-c']);
    expect(all.map((e) => e.created_at)).toEqual([at, at, later]);
    // A summary no event refers to is never stored (post-a's of the later write).
    expect(await redis.keys(`${prefix}:alert-store:summary:*`)).toHaveLength(3);

    // Paged from a position, and onward from the last entry read.
    const first = await events.page('ss_one', null, 1);
    expect(first.more).toBe(true);
    const rest = await events.page('ss_one', first.next, 10);
    expect(rest.events.map((e) => JSON.parse(e.body).data.post.id)).toEqual(['post-b', 'post-c']);
    expect(rest.more).toBe(false);
  });

  it('holds at most its limit of events, counting the matches it drops', async () => {
    const broad = await saved('ss_broad');
    const posts = Array.from({ length: 5 }, (_, i) => news(`broad-${i}`));
    const recorded = await events.record(posts, [{ search: broad, posts: posts.map((p) => p.post) }]);
    expect(recorded.get('ss_broad')).toEqual({ recorded: LIMIT, dropped: 2 });
    expect((await events.page('ss_broad', null, 10)).events).toHaveLength(LIMIT);
    expect((await searches.get('ss_broad'))!.events_dropped).toBe(2);
    expect(await redis.zcard(`${prefix}:alert-store:search:ss_broad:news`)).toBe(LIMIT);
    // Summaries of dropped matches are not stored.
    expect(await redis.keys(`${prefix}:alert-store:summary:broad-*`)).toHaveLength(LIMIT);
  });

  it('forgets events and pairs past the 30-day window, and frees room for new ones', async () => {
    const old = await saved('ss_window');
    await events.record([news('w-1'), news('w-2'), news('w-3')], [{ search: old, posts: ['w-1', 'w-2', 'w-3'] }]);
    const month = Date.now() + NEWS_WINDOW_MS + 60_000;
    const later = await events.record(
      [news('w-4', new Date(month).toISOString(), month)],
      [{ search: old, posts: ['w-4'] }],
      month,
    );
    expect(later.get('ss_window')).toEqual({ recorded: 1, dropped: 0 });
    expect(await redis.xlen(`${prefix}:alert-store:search:ss_window:events`)).toBe(1);
    expect(await redis.zrange(`${prefix}:alert-store:search:ss_window:news`, 0, -1)).toEqual(['w-4']);
    // Kept no longer than the window after their last event, however idle the search.
    expect(await redis.pttl(`${prefix}:alert-store:search:ss_window:events`)).toBeGreaterThan(NEWS_WINDOW_MS - 60_000);
  });

  it('skips a saved search deleted meanwhile, bringing none of its keys back', async () => {
    const gone = await saved('ss_gone');
    await searches.delete(gone, events.keysOf('ss_gone'));
    expect((await events.record([news('g-1')], [{ search: gone, posts: ['g-1'] }])).get('ss_gone')).toEqual({
      recorded: 0,
      dropped: 0,
    });
    expect(await redis.keys(`${prefix}:alert-store:search:ss_gone*`)).toEqual([]);
  });

  it('queues each new event to its search’s endpoint, in the same step', async () => {
    const pushing = await saved('ss_push', 'whe_push');
    await events.record([news('p-1'), news('p-2')], [{ search: pushing, posts: ['p-1', 'p-2'] }]);
    await events.record([news('p-1')], [{ search: pushing, posts: ['p-1'] }]);
    const outbox = await redis.xrange(`${prefix}:alert-store:endpoint:whe_push:outbox`, '-', '+');
    expect(outbox.map(([, fields]) => fields[1])).toEqual([eventIdOf('ss_push', 'p-1'), eventIdOf('ss_push', 'p-2')]);
    expect(await redis.zrange(`${prefix}:alert-store:deliveries:due`, 0, -1)).toEqual(['holder@example.com\twhe_push']);
  });

  it('records a job whose news would pass the arguments a call can spread (saved searches by the thousand)', async () => {
    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => saved(`ss_many_${i}`)));
    const posts = Array.from({ length: 400 }, (_, i) => news(`many-${i}`));
    // 80,000 pairs: over 160,000 script arguments.
    const recorded = await events.record(
      posts,
      many.map((search) => ({ search, posts: posts.map((p) => p.post) })),
    );
    expect(recorded.size).toBe(200);
    expect([...recorded.values()].every((r) => r.recorded === LIMIT && r.dropped === 400 - LIMIT)).toBe(true);
  });

  it('records events on a Redis that has forgotten its scripts (a restart, SCRIPT FLUSH), once each', async () => {
    // A server of its own: flushing the shared one's scripts would reach other test files.
    const server = await startRedisServer();
    const own = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      const store = openAlertRedis({ redis: own, prefix });
      const ownSearches = createSearchStore(store);
      const ownEvents = createEventStore(store, { deliveries: createDeliveryStore(store), limit: 10 });
      const record = { ...(await searches.get('ss_one'))!, id: 'ss_flush' };
      await ownSearches.insert(record, 10);
      expect(
        (await ownEvents.record([news('post-a')], [{ search: record, posts: ['post-a'] }])).get('ss_flush'),
      ).toEqual({
        recorded: 1,
        dropped: 0,
      });
      await own.script('FLUSH');
      const after = await ownEvents.record(
        [news('post-a'), news('post-b')],
        [{ search: record, posts: ['post-a', 'post-b'] }],
      );
      expect(after.get('ss_flush')).toEqual({ recorded: 1, dropped: 0 });
      expect(await own.xlen(`${prefix}:alert-store:search:ss_flush:events`)).toBe(2);
    } finally {
      own.disconnect();
      await server.close();
    }
  });

  it('never shows an event older than the window, and moves its cursor past entries whose summary is gone', async () => {
    const stream = `${prefix}:alert-store:search:ss_old:events`;
    const old = Date.now() - NEWS_WINDOW_MS - 60_000;
    await redis.xadd(stream, `${old}-0`, 'post', 'p-old', 'at', new Date(old).toISOString());
    // Two entries whose summaries were evicted, then one that has its summary.
    const at = new Date().toISOString();
    const lost1 = await redis.xadd(stream, '*', 'post', 'p-lost-1', 'at', at);
    await redis.xadd(stream, '*', 'post', 'p-lost-2', 'at', at);
    await redis.set(`${prefix}:alert-store:summary:p-kept:${Date.parse(at)}`, summary('p-kept'));
    const kept = await redis.xadd(stream, '*', 'post', 'p-kept', 'at', at);
    const first = await events.page('ss_old', null, 2);
    expect(first.events).toEqual([]);
    expect(first.more).toBe(true);
    // Past both lost entries, not back at the start: the next page goes on.
    expect(first.next).not.toBe(lost1);
    const second = await events.page('ss_old', first.next, 2);
    expect(second.events.map((e) => e.position)).toEqual([kept]);
    expect(second.more).toBe(false);
  });
});
