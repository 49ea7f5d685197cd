import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSearchResponseSchema } from '../../src/contract/api.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
const search = (body: unknown) => stack.post('/v1/social/posts/search', body);

const WALK_POSTS = 230;

beforeAll(async () => {
  stack = await startStack('post-search', { CURSOR_TTL_SECONDS: '3' });
  const big = accountObs({ platform_id: 's-big', handle: 'big.creator', followers_count: 2_000_000 });
  const small = accountObs({ platform_id: 's-small', handle: 'small.creator', followers_count: 900 });
  const posts = Array.from({ length: WALK_POSTS }, (_, i) =>
    postObs(i % 2 ? 's-big' : 's-small', {
      platform_id: `s-walk-${i}`,
      caption: `Budget meal prep idea number ${i} #mealprep`,
      format: i % 3 === 0 ? 'carousel' : 'reel',
      views: i % 10 === 0 ? null : 1000 + (i % 7) * 100, // many ties, some nulls
      posted_at: at(-i * 60, '2026-05-01T00:00:00Z'),
    }),
  );
  const skincare = postObs('s-big', {
    platform_id: 's-skin',
    caption: 'My night-time skincare routine, code GLOW20 for 20% off',
  });
  await stack.ingest([big, small, ...posts, skincare, postEnrichmentObs('s-skin')]);
});
afterAll(async () => stack?.close());

describe('search posts (spec 4.1)', () => {
  it('ranks by relevance with a query and returns complete post summaries in the envelope', async () => {
    const response = await search({ post: { query: 'night time skincare routine discount code' }, limit: 5 });
    expect(response.statusCode).toBe(200);
    const body = postSearchResponseSchema.parse(response.body);
    expect(body.request_id).toBe(response.headers['x-request-id']);
    expect(body.data[0]!.caption).toContain('skincare');
    expect(body.data[0]).not.toHaveProperty('media');
    expect(body.data[0]!.author.handle).toBe('big.creator');
  });

  it('composes post and author filters', async () => {
    const response = await search({
      post: {
        filters: { format: { in: ['carousel'] }, views: { gte: 1300 } },
        author: { filters: { followers_count: { gte: 1_000_000 } } },
      },
      limit: 100,
    });
    expect(response.statusCode).toBe(200);
    expect(response.body.data.length).toBeGreaterThan(0);
    for (const post of response.body.data) {
      expect(post.format).toBe('carousel');
      expect(post.views).toBeGreaterThanOrEqual(1300);
      expect(post.author.handle).toBe('big.creator');
    }
  });

  it('sorts filters-only results with nulls last and a deterministic tie-break', async () => {
    const filters = { hashtags: { contains_any: ['MealPrep'] } };
    const first = await search({ post: { filters }, sort: { by: 'views', order: 'desc' }, limit: 100 });
    const again = await search({ post: { filters }, sort: { by: 'views', order: 'desc' }, limit: 100 });
    const views = first.body.data.map((p: { views: number | null }) => p.views);
    const nonNull = views.filter((v: number | null) => v !== null);
    expect(nonNull).toEqual([...nonNull].sort((a: number, b: number) => b - a));
    expect(views.indexOf(null)).toBe(-1); // the first 100 of 230 by views desc are non-null
    expect(again.body.data.map((p: { id: string }) => p.id)).toEqual(first.body.data.map((p: { id: string }) => p.id));
    const asc = await search({
      post: { filters: { ...filters, views: { exists: false } } },
      sort: { by: 'views', order: 'asc' },
      limit: 100,
    });
    expect(asc.body.data.every((p: { views: null }) => p.views === null)).toBe(true);
  });

  it('walks hundreds of results with cursors while new posts are indexed: no duplicate, no gap, exact has_more', async () => {
    const walks = [
      {
        post: { filters: { hashtags: { contains_any: ['mealprep'] } } },
        sort: { by: 'views', order: 'desc' },
        limit: 37,
      },
      { post: { query: 'budget meal prep idea' }, limit: 41 },
    ];
    for (const [walk, body] of walks.entries()) {
      // Each walk's concurrent intake adds one matching post, seen only by the walks that start later.
      const matchingAtStart = WALK_POSTS + walk;
      const seen: string[] = [];
      let response = await search(body);
      let pages = 0;
      for (;;) {
        expect(response.statusCode).toBe(200);
        seen.push(...response.body.data.map((p: { id: string }) => p.id));
        pages++;
        if (pages === 2) {
          // Concurrent intake: new matching posts and changed views of already-seen ones.
          await stack.ingest([
            postObs('s-big', {
              platform_id: `s-new-${body.limit}`,
              caption: 'Budget meal prep idea fresh #mealprep',
              views: 999_999,
            }),
            postObs('s-big', {
              platform_id: 's-walk-1',
              caption: 'Budget meal prep idea number 1 #mealprep',
              views: 5,
              observed_at: at(5),
            }),
          ]);
        }
        if (!response.body.has_more) {
          expect(response.body.next_cursor).toBeNull();
          break;
        }
        expect(response.body.data).toHaveLength(body.limit);
        response = await search({ cursor: response.body.next_cursor });
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toHaveLength(matchingAtStart); // the first page's snapshot: posts added mid-walk do not appear
    }
  });

  it('enforces continuation rules, rejects tampered cursors and expires them', async () => {
    const first = await search({ post: { filters: { hashtags: { contains_any: ['mealprep'] } } }, limit: 10 });
    const cursor = first.body.next_cursor as string;
    const lower = await search({ cursor, limit: 5 });
    expect(lower.statusCode).toBe(200);
    expect(lower.body.data).toHaveLength(5);
    expect((await search({ cursor, limit: 11 })).body.detail).toMatch(/^\/limit: /);
    expect((await search({ cursor, sort: { by: 'views' } })).body.detail).toMatch(/^\/sort: a continuation sends only/);
    const tampered = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11);
    const bad = await search({ cursor: tampered });
    expect(bad.statusCode).toBe(422);
    expect(bad.body.detail).toMatch(/^\/cursor: /);
    await new Promise((r) => setTimeout(r, 3500));
    const expired = await search({ cursor: lower.body.next_cursor });
    expect(expired.statusCode).toBe(410);
    expect(expired.body.type).toBe('https://api.example.test/problems/expired-cursor');
  });

  it('continues a cursor whose snapshot the engine forgot (a node restarted, a shard moved) at the same position', async () => {
    // Test-only introspection: a cursor is base64url(deflate(JSON)).signature; its state names the point in time.
    const snapshotOf = (cursor: string) =>
      (
        JSON.parse(inflateRawSync(Buffer.from(cursor.split('.')[0]!, 'base64url')).toString()) as {
          state: { snapshot: string };
        }
      ).state.snapshot;
    const walk = async (forget: boolean) => {
      let response = await search({ post: { filters: { hashtags: { contains_any: ['mealprep'] } } }, limit: 40 });
      const ids: string[] = response.body.data.map((p: { id: string }) => p.id);
      for (let page = 1; response.body.has_more; page++) {
        const cursor = response.body.next_cursor as string;
        if (forget && page === 2) await stack.runtime.es.closePointInTime({ id: snapshotOf(cursor) });
        response = await search({ cursor });
        expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
        ids.push(...response.body.data.map((p: { id: string }) => p.id));
      }
      return ids;
    };
    const undisturbed = await walk(false);
    expect(undisturbed.length).toBeGreaterThan(80);
    expect(await walk(true)).toEqual(undisturbed);
  });

  it('matches other inflections of the query words (client-side Porter2 companions)', async () => {
    await stack.ingest([
      postObs('s-big', { platform_id: 's-infl', caption: 'Three easy breakfasts the influencers swear by' }),
    ]);
    for (const query of ['breakfast', 'influencer swearing']) {
      const response = await search({ post: { query } });
      expect(
        response.body.data.map((p: { id: string }) => p.id),
        query,
      ).toContain(mintId('post', 's-infl'));
    }
  });

  it('never returns posts that are unavailable or whose author is unknown', async () => {
    await stack.ingest([
      postObs('s-ghost', { platform_id: 's-orphan', caption: 'zebra orphan post' }),
      postObs('s-big', { platform_id: 's-gone', caption: 'zebra gone post' }),
      { kind: 'post', platform_id: 's-gone', status: 'unavailable', observed_at: at(10) },
    ]);
    const response = await search({ post: { query: 'zebra' } });
    expect(response.statusCode).toBe(200);
    expect(response.body.data).toEqual([]);
    expect(response.body.has_more).toBe(false);
  });
});
