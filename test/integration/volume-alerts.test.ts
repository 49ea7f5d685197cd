import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and } from '../../src/query/ast.ts';
import { createVolumeWatch, volumeWindowOf } from '../../src/services/alerts/volume.ts';
import { EXACT_POSTS } from '../../src/services/alerts/volume-store.ts';
import { openAlertRedis } from '../../src/services/alerts/alert-redis.ts';
import { openAlertStores, type AlertStores } from '../../src/start/alerts.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { until } from '../helpers/wait.ts';

// Volume rules on saved searches against the real services: the intake writes posts, the worker
// counts them into windows at the write, events go to a receiver on loopback and to the pull list.

/** A receiver on loopback: every request, answered 204. */
class Receiver {
  readonly received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  private server!: Server;
  url = '';
  async start() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }
  events(search: string) {
    return this.received
      .map((r) => JSON.parse(r.body) as { id: string; type: string; data: any })
      .filter((e) => e.data.saved_search_id === search);
  }
  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: Stack;
let stores: AlertStores;
const receiver = new Receiver();
let endpoint: { id: string; secret: string };
const AUTHOR = 'volume-author';
const DAY = 86_400_000;

/**
 * A time zone whose day is at its middle now (an `Etc/GMT±N` zone): posts written during the
 * test all fall in one day, whenever the test runs.
 */
function middayZone(): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date().getUTCHours()));
  // Etc/GMT signs are inverted (Etc/GMT-3 is UTC+3).
  return offset === 0 ? 'UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

function post(platformId: string, caption: string, postedAt: number, views = 1000) {
  const now = new Date().toISOString();
  return postObs(AUTHOR, {
    platform_id: platformId,
    caption,
    views,
    posted_at: new Date(postedAt).toISOString(),
    observed_at: now,
  });
}

const create = (body: Record<string, unknown>) => stack.post('/v1/social/saved-searches', body);

async function matches(search: string) {
  const response = await stack.get(`/v1/social/saved-searches/${search}/matches?limit=100`);
  expect(response.statusCode).toBe(200);
  return response.body.data as Array<{ id: string; type: string; data: any }>;
}

beforeAll(async () => {
  stack = await startStack('volume-alerts', { WEBHOOK_ALLOW_PRIVATE: 'true' });
  stores = openAlertStores(
    stack.config,
    openAlertRedis({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX }),
  );
  await receiver.start();
  const ingested = await stack.ingest([accountObs({ platform_id: AUTHOR, handle: 'volume.author' })]);
  expect(ingested.statusCode).toBe(200);
  endpoint = (await stack.post('/v1/social/webhook-endpoints', { url: receiver.url })).body;
});

afterAll(async () => {
  await receiver.close();
  await stack?.close();
});

/** The start of this hour, one day ahead (UTC): windows keyed from it expire after the test, whenever it runs. */
function nextDayHour(): number {
  return Math.floor(Date.now() / 3_600_000) * 3_600_000 + 86_400_000;
}

describe('a volume rule', () => {
  it('is validated with problem objects naming the member, and shown as stored', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ volume: { interval: 'week', above: 3 } }, '/volume/interval: expected "hour" or "day"'],
      [{ volume: { interval: 'day' } }, '/volume: expected "above", "spike" or both'],
      [{ volume: { interval: 'day', above: 0 } }, '/volume/above: expected an integer from 1 to 1000000'],
      [
        { volume: { interval: 'day', spike: { factor: 1.2, baseline_intervals: 7, min_count: 5 } } },
        '/volume/spike/factor: expected a number from 1.5 to 100',
      ],
      [
        { volume: { interval: 'day', spike: { factor: 2, baseline_intervals: 30, min_count: 5 } } },
        '/volume/spike/baseline_intervals: expected an integer from 7 to 28',
      ],
      [{ volume: { interval: 'day', spike: { factor: 2, baseline_intervals: 7 } } }, '/volume/spike/min_count'],
      [{ volume: { interval: 'day', above: 3, time_zone: 'Mars/Olympus' } }, '/volume/time_zone: expected an IANA'],
      [{ volume: { interval: 'day', above: 3, every: 'hour' } }, '/volume/every: unknown field'],
      [{ events: ['volume'] }, '/events: "volume" needs a volume rule'],
      [{ events: [] }, '/events: expected a non-empty list'],
      [{ events: ['likes'] }, '/events/0: expected a non-empty list of "posts", "volume"'],
      [{ volume: { interval: 'day', above: 3 }, events: ['posts'] }, '/events: a volume rule gives events only'],
    ];
    for (const [extra, detail] of cases) {
      const response = await create({ name: 'bad', post: { query: 'volume' }, ...extra });
      expect(response.statusCode, JSON.stringify(extra)).toBe(422);
      expect(response.body.type).toMatch(/\/problems\/validation-failed$/);
      expect(response.body.detail, JSON.stringify(extra)).toContain(detail);
    }
    expect((await stack.get('/v1/social/saved-searches')).body.data).toEqual([]);

    const plain = await create({ name: 'plain', post: { query: 'volume' } });
    expect(plain.statusCode).toBe(201);
    expect(plain.body.events).toEqual(['posts']);
    expect(plain.body.volume).toBeNull();
    const ruled = await create({
      name: 'ruled',
      post: { query: 'volume' },
      volume: { interval: 'hour', above: 10, time_zone: 'europe/paris' },
    });
    expect(ruled.statusCode, JSON.stringify(ruled.body)).toBe(201);
    expect(ruled.body.events).toEqual(['posts', 'volume']);
    expect(ruled.body.volume).toEqual({ interval: 'hour', time_zone: 'Europe/Paris', above: 10 });
    expect(Object.keys(ruled.body).slice(-2)).toEqual(['events', 'volume']);
    expect((await stack.get(`/v1/social/saved-searches/${ruled.body.id}`)).body).toEqual(ruled.body);
    for (const id of [plain.body.id, ruled.body.id])
      expect(
        (
          await stack.inject({
            method: 'DELETE',
            url: `/v1/social/saved-searches/${id}`,
            headers: { authorization: `Bearer ${stack.key}` },
          })
        ).statusCode,
      ).toBe(204);
  });

  it('gives one volume.exceeded per window, signed and pulled like post.matched, however often posts are seen again and by concurrent jobs', async () => {
    const zone = middayZone();
    const created = await create({
      name: 'croissant volume',
      post: { query: 'croissant' },
      webhook_endpoint_id: endpoint.id,
      volume: { interval: 'day', above: 2, time_zone: zone },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    const search = created.body.id as string;
    const now = Date.now();
    await stack.ingest([
      post('cr-1', 'Butter croissant at dawn', now - 60_000),
      post('cr-2', 'Croissant lamination', now - 60_000),
    ]);
    // Seen again, changed and unchanged, twice: still two posts in the window.
    await stack.ingest([
      post('cr-1', 'Butter croissant at dawn', now - 60_000, 2000),
      post('cr-2', 'Croissant lamination', now - 60_000),
    ]);
    await stack.ingest([post('cr-1', 'Butter croissant at dawn', now - 60_000, 3000)]);
    await until(async () => (await matches(search)).filter((e) => e.type === 'post.matched').length >= 2);
    await sleep(1000);
    expect((await matches(search)).filter((e) => e.type === 'volume.exceeded')).toEqual([]);

    // Concurrent jobs, each crossing the bound alone.
    await Promise.all(
      ['cr-3', 'cr-4', 'cr-5', 'cr-6'].map((id) => stack.ingest([post(id, `Croissant ${id}`, now - 30_000)])),
    );
    const exceeded = await until(async () => {
      const found = (await matches(search)).filter((e) => e.type === 'volume.exceeded');
      return found.length > 0 ? found : null;
    });
    await sleep(2500);
    const all = await matches(search);
    expect(all.filter((e) => e.type === 'volume.exceeded')).toEqual(exceeded);
    expect(exceeded).toHaveLength(1);
    const window = volumeWindowOf(now, { interval: 'day', time_zone: zone });
    const event = exceeded[0]!;
    expect(event.data).toEqual({
      saved_search_id: search,
      window: { start: expect.any(String), end: expect.any(String) },
      count: expect.any(Number),
      above: 2,
    });
    expect(Object.keys(event.data)).toEqual(['saved_search_id', 'window', 'count', 'above']);
    expect(Date.parse(event.data.window.start)).toBe(window.start);
    expect(Date.parse(event.data.window.end)).toBe(window.end);
    expect(event.data.count).toBeGreaterThanOrEqual(3);
    expect(event.data.count).toBeLessThanOrEqual(6);
    expect(all.filter((e) => e.type === 'post.matched')).toHaveLength(6);

    // Delivered signed, byte for byte the event pulled.
    const delivered = await until(() => receiver.received.find((r) => JSON.parse(r.body).id === event.id));
    expect(delivered.headers['webhook-id']).toBe(event.id);
    expect(new Webhook(endpoint.secret).verify(delivered.body, delivered.headers as Record<string, string>)).toEqual(
      event,
    );
    expect(receiver.events(search).filter((e) => e.type === 'volume.exceeded')).toHaveLength(1);
  });

  it('with events ["volume"] alone gives volume events and no post.matched', async () => {
    const created = await create({
      name: 'brioche watch',
      post: { query: 'brioche' },
      webhook_endpoint_id: endpoint.id,
      events: ['volume'],
      volume: { interval: 'day', above: 1, time_zone: middayZone() },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    expect(created.body.events).toEqual(['volume']);
    const search = created.body.id as string;
    await stack.ingest([post('br-1', 'Brioche buns', Date.now()), post('br-2', 'Brioche loaf', Date.now())]);
    await until(() => receiver.events(search).length > 0);
    await sleep(2000);
    expect(receiver.events(search).map((e) => e.type)).toEqual(['volume.exceeded']);
    expect((await matches(search)).map((e) => e.type)).toEqual(['volume.exceeded']);
    expect((await stack.get(`/v1/social/saved-searches/${search}`)).body.last_match_at).not.toBeNull();
  });

  it('spikes against the median of earlier windows counted from older posts of the corpus', async () => {
    const zone = middayZone();
    const today = volumeWindowOf(Date.now(), { interval: 'day', time_zone: zone }).start;
    // One baguette a day for the 7 days before today, written before the search exists: history, not news.
    await stack.ingest(
      Array.from({ length: 7 }, (_, i) => post(`bg-old-${i}`, 'Baguette tradition', today - (i + 1) * DAY + 3_600_000)),
    );
    const created = await create({
      name: 'baguette spike',
      post: { query: 'baguette' },
      webhook_endpoint_id: endpoint.id,
      events: ['volume'],
      volume: { interval: 'day', time_zone: zone, spike: { factor: 2, baseline_intervals: 7, min_count: 3 } },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    const search = created.body.id as string;
    // Median 1, factor 2: a spike is more than 2 posts (and at least min_count 3).
    await stack.ingest([post('bg-1', 'Baguette one', Date.now()), post('bg-2', 'Baguette two', Date.now())]);
    await sleep(2500);
    expect(await matches(search)).toEqual([]);
    await stack.ingest([post('bg-3', 'Baguette three', Date.now())]);
    const [spiked] = await until(async () => {
      const found = await matches(search);
      return found.length > 0 ? found : null;
    });
    expect(spiked!.type).toBe('volume.spiked');
    expect(spiked!.data).toEqual({
      saved_search_id: search,
      window: expect.any(Object),
      count: 3,
      factor: 2,
      baseline: { intervals: 7, median: 1, counts: [1, 1, 1, 1, 1, 1, 1] },
    });
    await stack.ingest([post('bg-4', 'Baguette four', Date.now())]);
    await sleep(2000);
    expect((await matches(search)).map((e) => e.type)).toEqual(['volume.spiked']);
    const delivered = await until(() => receiver.received.find((r) => JSON.parse(r.body).id === spiked!.id));
    expect(new Webhook(endpoint.secret).verify(delivered.body, delivered.headers as Record<string, string>)).toEqual(
      spiked,
    );
  });

  it('deletes its windows with the saved search', async () => {
    const created = await create({
      name: 'muffin',
      post: { query: 'muffin' },
      events: ['volume'],
      volume: { interval: 'hour', above: 50 },
    });
    const search = created.body.id as string;
    await stack.ingest([post('mf-1', 'Muffin', Date.now())]);
    const pattern = `${stack.config.REDIS_PREFIX}:alert-store:search:${search}:*`;
    await until(async () => (await stack.runtime.redis.keys(pattern)).length > 0);
    await stack.inject({
      method: 'DELETE',
      url: `/v1/social/saved-searches/${search}`,
      headers: { authorization: `Bearer ${stack.key}` },
    });
    expect(await stack.runtime.redis.keys(pattern)).toEqual([]);
  });
});

describe('the volume store', () => {
  /** A saved search record stored for the store's scripts (they skip a search that does not exist). */
  async function saved(id: string, volume: { interval: 'hour' | 'day'; time_zone: string; above?: number }) {
    await stores.searches.insert(
      {
        id,
        owner: 'tests@example.com',
        name: id,
        post: { query: id },
        vector: null,
        webhook_endpoint_id: null,
        created_at: new Date().toISOString(),
        last_match_at: null,
        events_dropped: 0,
        events: ['volume'],
        volume,
      },
      1000,
    );
    return { id, owner: 'tests@example.com', webhook_endpoint_id: null, volume };
  }
  const noBaseline = async () => {
    throw new Error('no spike rule here');
  };

  it('counts each post once per window under concurrent calls and re-counts, one event, and none in a closed window', async () => {
    const search = await saved('ss_vol_store', { interval: 'hour', time_zone: 'UTC', above: 5 });
    const watch = createVolumeWatch({ store: stores.volume, countBuckets: noBaseline });
    // Half past an hour of tomorrow: the windows' keys expire at absolute times, which must lie ahead of the clock.
    const hour = nextDayHour();
    const now = hour + 30 * 60_000;
    const query = { query: 'x', filter: and([]), sort: null };
    const posts = (ids: number[], at: number) => ids.map((i) => ({ id: `p${i}`, postedAt: at }));
    // 20 concurrent jobs, overlapping: posts p0..p9 of this hour, each seen by several.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        watch([{ search, query, posts: posts([j % 10, (j + 3) % 10], now - 60_000) }], now),
      ),
    );
    expect(results.reduce((n, r) => n + r.events, 0)).toBe(1);
    const hash = `${stack.config.REDIS_PREFIX}:alert-store:search:${search.id}:volume:${hour}`;
    expect(await stack.runtime.redis.hget(hash, 'count')).toBe('10');
    // A recovery pass's re-match of the same posts adds nothing.
    await watch([{ search, query, posts: posts([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], now - 60_000) }], now);
    expect(await stack.runtime.redis.hget(hash, 'count')).toBe('10');

    // Late posts of the hour before: counted there, never an event (that window is closed).
    const late = await watch([{ search, query, posts: posts([20, 21, 22, 23, 24, 25, 26], now - 3_600_000) }], now);
    expect(late.events).toBe(0);
    const previous = hash.replace(/\d+$/, String(hour - 3_600_000));
    expect(await stack.runtime.redis.hget(previous, 'count')).toBe('7');
    // Older still: not counted at all.
    await watch([{ search, query, posts: posts([30], now - 3 * 3_600_000) }], now);
    expect(await stack.runtime.redis.keys(hash.replace(/\d+$/, String(hour - 3 * 3_600_000)) + '*')).toEqual([]);
    const events = await stores.events.page(search.id, null, 100);
    expect(events.events.map((e) => JSON.parse(e.body).type)).toEqual(['volume.exceeded']);
    // Every key of a window expires one interval after it ends.
    const ttl = await stack.runtime.redis.pexpiretime(hash);
    expect(ttl).toBe(hour + 2 * 3_600_000);
  });

  it('holds a broad window in bounded memory: exact up to EXACT_POSTS, within 2% beyond, re-counts adding nothing', async () => {
    const search = await saved('ss_vol_broad', { interval: 'day', time_zone: 'UTC', above: 1_000_000 });
    const watch = createVolumeWatch({ store: stores.volume, countBuckets: noBaseline });
    const day = nextDayHour() - (nextDayHour() % 86_400_000);
    const now = day + 10.5 * 3_600_000;
    const query = { query: 'x', filter: and([]), sort: null };
    const hash = `${stack.config.REDIS_PREFIX}:alert-store:search:${search.id}:volume:${day}`;
    const ids = Array.from({ length: 20_000 }, (_, i) => ({ id: `post_${i.toString(36)}`, postedAt: now - 1000 }));
    await watch([{ search, query, posts: ids.slice(0, EXACT_POSTS) }], now);
    expect(await stack.runtime.redis.hget(hash, 'count')).toBe(String(EXACT_POSTS));
    for (let i = 0; i < ids.length; i += 2000) await watch([{ search, query, posts: ids.slice(i, i + 2000) }], now);
    const count = Number(await stack.runtime.redis.hget(hash, 'count'));
    expect(Math.abs(count - ids.length) / ids.length).toBeLessThan(0.02);
    await watch([{ search, query, posts: ids.slice(0, 5000) }], now);
    expect(Number(await stack.runtime.redis.hget(hash, 'count'))).toBe(count);
    expect(await stack.runtime.redis.exists(`${hash}:posts`)).toBe(0);
    const bytes = Number(await stack.runtime.redis.call('memory', 'usage', `${hash}:hll`));
    expect(bytes).toBeLessThan(16_000);
  });
});
