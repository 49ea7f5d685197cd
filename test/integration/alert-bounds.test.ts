import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Alerts are bounded by design (docs/capacity.md, "Alerts in Redis"): a saved search as broad as
// "every post" driven over thousands of posts, each written twice, holds at most its limit of
// events, and the Redis its alerts take stays within the stated bytes per saved search and per
// event, whatever the number of posts.
const LIMIT = 300;
const POSTS = 3000;
/**
 * docs/capacity.md's bounds ("Alerts in Redis"): a saved search (3.6 KB) with its endpoint (0.8 KB)
 * and the lists they are in; an event's stream entry, pair, outbox entry and summary, none shared.
 */
const BYTES_PER_SEARCH = 8 * 1024;
const BYTES_PER_EVENT = 94 + 142 + 169 + 1900;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('alert-bounds', {
    SAVED_SEARCH_EVENT_LIMIT: String(LIMIT),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Deliveries wait in the outbox: its bound is checked too.
    WEBHOOK_DELIVERIES: 'paused',
  });
});
afterAll(async () => {
  await stack?.close();
});

/** Every alert key of the deployment, with Redis's own count of its bytes. */
async function alertKeys(): Promise<Map<string, number>> {
  const keys = await stack.runtime.redis.keys(`${stack.config.REDIS_PREFIX}:alert-store:*`);
  const pipeline = stack.runtime.redis.pipeline();
  for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0);
  const used = (await pipeline.exec()) ?? [];
  return new Map(
    keys.map((k, i) => [k.slice(`${stack.config.REDIS_PREFIX}:alert-store:`.length), Number(used[i]![1])]),
  );
}

async function ingest(from: number, to: number, views: number): Promise<void> {
  for (let i = from; i < to; i += 500) {
    const batch = Array.from({ length: Math.min(500, to - i) }, (_, k) =>
      postObs('bounds-author', {
        platform_id: `bounds-${i + k}`,
        caption: `Post number ${i + k} of the broad search's day`,
        views,
        observed_at: new Date(Date.UTC(2026, 5, 1, 10, 0, views)).toISOString(),
      }),
    );
    const response = await stack.ingest(batch, { vectors: false });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  }
}

describe('a saved search matching every post', () => {
  it('holds at most its limit of events, and its Redis stays within the stated bound, however many posts come', async () => {
    await stack.ingest([accountObs({ platform_id: 'bounds-author' })], { vectors: false });
    const endpoint = await stack.post('/v1/social/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' });
    const search = await stack.post('/v1/social/saved-searches', {
      name: 'every post',
      post: { filters: { views: { gte: 0 } } },
      webhook_endpoint_id: endpoint.body.id,
    });
    expect(search.statusCode, JSON.stringify(search.body)).toBe(201);

    await ingest(0, POSTS / 2, 10);
    const half = await alertKeys();
    await ingest(POSTS / 2, POSTS, 10);
    // Every post written again (more views): re-observations of posts that matched are not news.
    await ingest(0, POSTS, 20);
    const whole = await alertKeys();

    const read = (await stack.get(`/v1/social/saved-searches/${search.body.id}`)).body;
    expect(read.events_dropped).toBe(POSTS - LIMIT);
    const id = search.body.id as string;
    const { redis } = stack.runtime;
    const prefix = `${stack.config.REDIS_PREFIX}:alert-store`;
    expect(await redis.xlen(`${prefix}:search:${id}:events`)).toBe(LIMIT);
    expect(await redis.zcard(`${prefix}:search:${id}:news`)).toBe(LIMIT);
    expect(await redis.xlen(`${prefix}:endpoint:${endpoint.body.id}:outbox`)).toBe(LIMIT);
    // One summary per event at most, and no structure per post or per pair beyond them.
    const families = new Map<string, number>();
    for (const key of whole.keys()) {
      const family = key.replace(/^summary:.*/, 'summary:*').replace(/(search|endpoint|owner):[^:]+/, '$1:{id}');
      families.set(family, (families.get(family) ?? 0) + 1);
    }
    expect(Object.fromEntries(families)).toEqual({
      'summary:*': LIMIT,
      'endpoint:{id}': 1,
      'endpoint:{id}:outbox': 1,
      'owner:{id}:endpoints': 1,
      'search:{id}': 1,
      'search:{id}:events': 1,
      'search:{id}:news': 1,
      'owner:{id}:searches': 1,
      searches: 1,
      'searches:version': 1,
      'deliveries:due': 1,
    });

    const bytes = (keys: Map<string, number>) => [...keys.values()].reduce((a, b) => a + b, 0);
    expect(bytes(whole)).toBeLessThanOrEqual(BYTES_PER_SEARCH + LIMIT * BYTES_PER_EVENT);
    // Twice the posts and every one written again: not a byte more than at the limit already.
    expect(bytes(whole)).toBeLessThanOrEqual(bytes(half) * 1.05);
    const byFamily: Record<string, number> = {};
    for (const [key, used] of whole) {
      const family = key.replace(/^summary:.*/, 'summary:*').replace(/(search|endpoint|owner):[^:]+/, '$1:{id}');
      byFamily[family] = (byFamily[family] ?? 0) + used;
    }
    process.stdout.write(
      `alert-bounds: ${bytes(whole)} bytes for ${LIMIT} events, ${POSTS} posts: ${JSON.stringify(byFamily)}\n`,
    );
  }, 300_000);
});
