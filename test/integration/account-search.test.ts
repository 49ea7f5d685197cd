import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSearchResponseSchema } from '../../src/contract/api.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
const search = (body: unknown) => stack.post('/v1/social/accounts/search', body);
const handles = (response: { body: { data: Array<{ handle: string }> } }) =>
  response.body.data.map((a) => a.handle).sort();

// Posts that satisfy the scope predicate below: a reel AND at least 5,000 views.
const hit = (author: string, id: string, extra: Record<string, unknown> = {}) =>
  postObs(author, { platform_id: id, format: 'reel', views: 9000, ...extra });

beforeAll(async () => {
  stack = await startStack('account-search');
  const accounts = [
    accountObs({ platform_id: 'as-one', handle: 'chef.one', display_name: 'Chef One', followers_count: 100 }),
    accountObs({ platform_id: 'as-two', handle: 'chef.two', display_name: 'Chef Two', followers_count: 200 }),
    accountObs({ platform_id: 'as-three', handle: 'chef.three', display_name: 'Chef Three', followers_count: 300 }),
    accountObs({ platform_id: 'as-split', handle: 'chef.split', display_name: 'Chef Split', followers_count: 400 }),
    accountObs({
      platform_id: 'as-private',
      handle: 'chef.private',
      display_name: 'Chef Private',
      followers_count: 500,
      is_private: true,
    }),
    accountObs({ platform_id: 'as-co', handle: 'chef.coauthor', display_name: 'Chef Coauthor', followers_count: 600 }),
    accountObs({
      platform_id: 'as-maya',
      handle: 'maya',
      display_name: 'Not Maya',
      biography: 'maya maya maya',
      followers_count: 10,
    }),
    accountObs({
      platform_id: 'as-maya2',
      handle: 'maya.cooks',
      display_name: 'Maya',
      biography: 'Maya cooks with maya',
      followers_count: 5_000_000,
    }),
  ];
  await stack.ingest([
    ...accounts,
    accountEnrichmentObs('as-three', { niches: ['home_cooking'] }),
    accountEnrichmentObs('as-private', { niches: ['secret_niche'], publishing_languages: ['xx'] }),
    hit('as-one', 'as-one-1'),
    hit('as-two', 'as-two-1'),
    hit('as-two', 'as-two-2'),
    hit('as-three', 'as-three-1'),
    hit('as-three', 'as-three-2'),
    hit('as-three', 'as-three-3'),
    // Two posts, each meeting only half of the predicate: they must not qualify together.
    hit('as-split', 'as-split-1', { format: 'carousel' }),
    hit('as-split', 'as-split-2', { views: 10 }),
    hit('as-private', 'as-private-1'),
    hit('as-private', 'as-private-2'),
    hit('as-private', 'as-private-3'),
    // Coauthored posts (authored by as-one) do not count for the coauthor.
    hit('as-one', 'as-co-1', { coauthor_platform_ids: ['as-co'] }),
    hit('as-one', 'as-co-2', { coauthor_platform_ids: ['as-co'] }),
  ]);
});
afterAll(async () => stack?.close());

const scope = (minimum: number) => ({
  account: { posts: { minimum_matching_posts: minimum, filters: { format: { in: ['reel'] }, views: { gte: 5000 } } } },
  limit: 100,
});

describe('search accounts (spec 4.2)', () => {
  it('counts distinct posts that each satisfy the whole posts predicate, at 1, 2 and 3', async () => {
    expect(handles(await search(scope(1)))).toEqual(['chef.one', 'chef.three', 'chef.two']);
    expect(handles(await search(scope(2)))).toEqual(['chef.one', 'chef.three', 'chef.two']); // chef.one authored 3 (2 coauthored by as-co)
    expect(handles(await search(scope(3)))).toEqual(['chef.one', 'chef.three']);
    const response = await search(scope(1));
    expect(accountSearchResponseSchema.parse(response.body).data.every((a) => !a.is_private)).toBe(true);
  });

  it('combines the posts scope with account filters and sort', async () => {
    const response = await search({
      ...scope(2),
      account: { ...scope(2).account, filters: { followers_count: { gte: 150 } } },
      sort: { by: 'followers_count', order: 'asc' },
    });
    expect(response.body.data.map((a: { handle: string }) => a.handle)).toEqual(['chef.two', 'chef.three']);
  });

  it('ranks an exact handle or @handle first', async () => {
    for (const query of ['maya', '@maya', 'MAYA']) {
      const response = await search({ account: { query } });
      expect(response.statusCode).toBe(200);
      expect(response.body.data[0].id, query).toBe(mintId('account', 'as-maya'));
    }
  });

  it('never returns private accounts, whatever the path', async () => {
    for (const body of [
      { account: { query: 'chef.private' } },
      { account: { filters: { handle: { eq: 'chef.private' } } } },
      scope(3),
    ]) {
      const response = await search(body);
      expect(handles(response)).not.toContain('chef.private');
    }
  });

  it("does not let post search filter on a private author's post-derived facts", async () => {
    const posts = async (filters: unknown) =>
      (await stack.post('/v1/social/posts/search', { post: { author: { filters } }, limit: 100 })).body.data.map(
        (p: { author: { handle: string } }) => p.author.handle,
      );
    expect(await posts({ niches: { contains_any: ['secret_niche'] } })).toEqual([]);
    expect(await posts({ publishing_languages: { contains_any: ['xx'] } })).toEqual([]);
    expect(await posts({ niches: { exists: false } })).toContain('chef.private');
  });

  it('pages with cursors without repeats', async () => {
    const seen: string[] = [];
    let response = await search({ account: { query: 'chef' }, limit: 2 });
    for (;;) {
      seen.push(...response.body.data.map((a: { id: string }) => a.id));
      if (!response.body.has_more) break;
      response = await search({ cursor: response.body.next_cursor, limit: 2 });
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(5); // the five public chefs
  });

  it('aggregates the posts scope once per snapshot: later pages reuse the qualifying set', async () => {
    // Every request the engine sends to the posts index with an aggregation is the scope's.
    let aggregations = 0;
    const count = (
      _error: unknown,
      event: { meta: { request: { params: { path: string; body?: unknown } } } } | null,
    ) => {
      const params = event?.meta.request.params;
      if (params && typeof params.body === 'string' && params.body.includes('"aggs"')) aggregations++;
    };
    stack.runtime.es.diagnostic.on('request', count);
    try {
      // A scope no other test asks for: sets are shared by every search on the same snapshot.
      const posts = (minimum: number) => ({
        minimum_matching_posts: minimum,
        filters: { format: { in: ['reel'] }, views: { gte: 5001 } },
      });
      const body = { account: { posts: posts(1), filters: { followers_count: { gte: 1 } } }, limit: 1 };
      const seen: string[] = [];
      let response = await search(body);
      for (;;) {
        expect(response.statusCode).toBe(200);
        seen.push(...response.body.data.map((a: { handle: string }) => a.handle));
        if (!response.body.has_more) break;
        response = await search({ cursor: response.body.next_cursor });
      }
      expect(seen.sort()).toEqual(['chef.one', 'chef.three', 'chef.two']);
      expect(aggregations).toBe(1);
      // A different scope is a different set.
      expect(handles(await search({ account: { posts: posts(3) }, limit: 100 }))).toEqual(['chef.one', 'chef.three']);
      expect(aggregations).toBe(2);
    } finally {
      stack.runtime.es.diagnostic.off('request', count);
    }
  });

  it('validates the scope with JSON pointers', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ account: {} }, /^\/account: /],
      [{ account: { posts: { minimum_matching_posts: 4 } } }, /^\/account\/posts\/minimum_matching_posts: /],
      [
        { account: { posts: { filters: { followers_count: { gte: 1 } } } } },
        /^\/account\/posts\/filters\/followers_count: /,
      ],
      [{ account: { query: 'x' }, sort: { by: 'followers_count' } }, /^\/sort: /],
      [{ account: { filters: { is_private: { eq: true } } } }, /^\/account\/filters\/is_private: /],
    ];
    for (const [body, detail] of cases) {
      const response = await search(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.body.detail).toMatch(detail);
    }
  });
});
