import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * Sorting of filters-only searches (docs/filters.md "Sorting"): the field in the requested
 * direction, documents without a value last in both directions, ties on the resource ID
 * ascending, so that pages walked with cursors equal one big page.
 */

let stack: Stack;
const call = (url: string) => async (body: unknown) => stack.post(url, body);
const searchPosts = call('/v1/social/posts/search');
const searchAccounts = call('/v1/social/accounts/search');

interface Row {
  by: 'one' | 'two' | 'three';
  posted: string;
  views: number | null;
  likes: number;
  comments: number;
  /** (likes + comments) / views, null when views is null or 0. */
  rate: number | null;
  /** views / median views of the author's earlier posts (at least 3 with views, 90 days); else null. */
  ratio: number | null;
}
// Ties on purpose: posted_at (p03 = p08, p06 = p07), views (1000 ×3, 2000 ×2, 3000 ×2), likes, comments,
// rate (0.1 ×4), ratio (3 ×2); nulls: views (p03, p10), rate (also p08 with 0 views), ratio (all but 3).
const POSTS: Record<string, Row> = {
  p01: { by: 'one', posted: '2026-05-01T00:00:00Z', views: 1000, likes: 100, comments: 0, rate: 0.1, ratio: null },
  p02: { by: 'one', posted: '2026-05-02T00:00:00Z', views: 1000, likes: 50, comments: 50, rate: 0.1, ratio: null },
  p03: { by: 'one', posted: '2026-05-03T00:00:00Z', views: null, likes: 300, comments: 10, rate: null, ratio: null },
  p04: { by: 'one', posted: '2026-05-04T00:00:00Z', views: 2000, likes: 100, comments: 100, rate: 0.1, ratio: null },
  p05: { by: 'one', posted: '2026-05-05T00:00:00Z', views: 3000, likes: 300, comments: 0, rate: 0.1, ratio: 3 }, // 3000 / median(1000, 1000, 2000)
  p06: { by: 'one', posted: '2026-05-06T00:00:00Z', views: 3000, likes: 150, comments: 0, rate: 0.05, ratio: 2 }, // 3000 / median(1000, 1000, 2000, 3000)
  p07: { by: 'one', posted: '2026-05-06T00:00:00Z', views: 4500, likes: 0, comments: 0, rate: 0, ratio: 3 }, // 4500 / 1500
  p08: { by: 'two', posted: '2026-05-03T00:00:00Z', views: 0, likes: 10, comments: 10, rate: null, ratio: null },
  p09: { by: 'two', posted: '2026-05-07T00:00:00Z', views: 500, likes: 300, comments: 0, rate: 0.6, ratio: null },
  p10: { by: 'two', posted: '2026-05-08T00:00:00Z', views: null, likes: 300, comments: 10, rate: null, ratio: null },
  p11: {
    by: 'three',
    posted: '2026-05-09T00:00:00Z',
    views: 2000,
    likes: 1000,
    comments: 100,
    rate: 0.55,
    ratio: null,
  },
  p12: { by: 'three', posted: '2026-05-10T00:00:00Z', views: 1000, likes: 100, comments: 5, rate: 0.105, ratio: null },
};
const postId = (name: string) => mintId('post', `ss-${name}`);
const NAME_OF_POST = new Map(Object.keys(POSTS).map((n) => [postId(n), n]));

const ACCOUNTS = {
  one: { followers_count: 1000, following_count: 300, posts_count: 10 },
  two: { followers_count: 1000, following_count: 50, posts_count: 500 },
  three: { followers_count: 50_000, following_count: 300, posts_count: 10 },
  four: { followers_count: 200, following_count: 7000, posts_count: 0 },
  five: { followers_count: 50_000, following_count: 1, posts_count: 42 },
};
const accountId = (name: string) => mintId('account', `ss-${name}`);
const NAME_OF_ACCOUNT = new Map(Object.keys(ACCOUNTS).map((n) => [accountId(n), n]));

/** The documented order: the value in `order` direction, nulls last either way, then ID ascending. */
function expectedOrder<T>(
  rows: Record<string, T>,
  value: (row: T) => number | null,
  order: 'asc' | 'desc',
  id: (name: string) => string,
): string[] {
  return Object.keys(rows).sort((a, b) => {
    const va = value(rows[a]!);
    const vb = value(rows[b]!);
    if (va !== vb) {
      if (va === null) return 1;
      if (vb === null) return -1;
      return order === 'asc' ? va - vb : vb - va;
    }
    return id(a) < id(b) ? -1 : 1;
  });
}

const POST_SORTS: Array<[string, (r: Row) => number | null]> = [
  ['posted_at', (r) => Date.parse(r.posted)],
  ['views', (r) => r.views],
  ['likes', (r) => r.likes],
  ['comments', (r) => r.comments],
  ['engagement_rate_by_views', (r) => r.rate],
  ['view_ratio_to_account_baseline', (r) => r.ratio],
];

beforeAll(async () => {
  stack = await startStack('search-sorting');
  const accounts = Object.entries(ACCOUNTS).map(([name, counts]) =>
    accountObs({ platform_id: `ss-${name}`, handle: `sort.${name}`, ...counts }),
  );
  const hidden = accountObs({
    platform_id: 'ss-private',
    handle: 'sort.private',
    followers_count: 999_999,
    is_private: true,
  });
  const posts = Object.entries(POSTS).map(([name, r]) =>
    postObs(`ss-${r.by}`, {
      platform_id: `ss-${name}`,
      caption: `Sorted post ${name} #SortSet`,
      format: r.views === null ? 'carousel' : 'reel',
      posted_at: r.posted,
      views: r.views,
      likes: r.likes,
      comments: r.comments,
    }),
  );
  const response = await stack.ingest([...accounts, hidden, ...posts]);
  expect(response.statusCode).toBe(200);
  expect(response.body.rejected).toEqual([]);
});
afterAll(async () => stack?.close());

type Search = (body: unknown) => ReturnType<Stack['inject']>;

/** Every result of `body`, following cursors; each page's size is checked against `limit`. */
async function walk(search: Search, body: Record<string, unknown>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let response = await search({ ...body, limit });
  for (let pages = 1; ; pages++) {
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    ids.push(...response.body.data.map((r: { id: string }) => r.id));
    if (!response.body.has_more) {
      expect(response.body.next_cursor).toBeNull();
      return ids;
    }
    expect(response.body.data).toHaveLength(limit);
    expect(pages).toBeLessThan(50);
    response = await search({ cursor: response.body.next_cursor });
  }
}

async function onePage(search: Search, body: Record<string, unknown>): Promise<string[]> {
  const response = await search({ ...body, limit: 100 });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  expect(response.body.has_more).toBe(false);
  return response.body.data.map((r: { id: string }) => r.id);
}

const postFilters = { post: { filters: { hashtags: { contains_any: ['sortset'] } } } };
const postNames = (ids: string[]) => ids.map((id) => NAME_OF_POST.get(id) ?? id);

describe('sorting posts', () => {
  const cases = POST_SORTS.flatMap(([by, value]) =>
    (['asc', 'desc'] as const).map((order) => [by, order, value] as const),
  );

  it.each(cases)(
    'by %s %s: values in order, nulls last, ties by ID, pages equal one page',
    async (by, order, value) => {
      const body = { ...postFilters, sort: { by, order } };
      const expected = expectedOrder(POSTS, value, order, postId);
      const page = await onePage(searchPosts, body);
      expect(postNames(page)).toEqual(expected);
      expect(postNames(await onePage(searchPosts, body))).toEqual(expected);
      expect(postNames(await walk(searchPosts, body, 2))).toEqual(expected);
      expect(postNames(await walk(searchPosts, body, 1))).toEqual(expected);
    },
  );

  it('returns the sort field values in the documented order (views desc, nulls last)', async () => {
    const response = await searchPosts({ ...postFilters, sort: { by: 'views', order: 'desc' }, limit: 100 });
    expect(response.body.data.map((p: { views: number | null }) => p.views)).toEqual([
      4500,
      3000,
      3000,
      2000,
      2000,
      1000,
      1000,
      1000,
      500,
      0,
      null,
      null,
    ]);
    const ratios = await searchPosts({
      ...postFilters,
      sort: { by: 'view_ratio_to_account_baseline', order: 'asc' },
      limit: 3,
    });
    expect(
      ratios.body.data.map((p: { view_ratio_to_account_baseline: number | null }) => p.view_ratio_to_account_baseline),
    ).toEqual([2, 3, 3]);
    const rates = await searchPosts({
      ...postFilters,
      sort: { by: 'engagement_rate_by_views', order: 'desc' },
      limit: 3,
    });
    expect(postNames(rates.body.data.map((p: { id: string }) => p.id))).toEqual(['p09', 'p11', 'p12']);
  });

  it('sorts newest first without a sort, and by descending order when only "by" is given', async () => {
    const newestFirst = expectedOrder(POSTS, (r) => Date.parse(r.posted), 'desc', postId);
    expect(postNames(await onePage(searchPosts, postFilters))).toEqual(newestFirst);
    expect(postNames(await walk(searchPosts, postFilters, 3))).toEqual(newestFirst);
    expect(newestFirst.slice(0, 2)).toEqual(['p12', 'p11']);
    const likesDesc = expectedOrder(POSTS, (r) => r.likes, 'desc', postId);
    expect(postNames(await onePage(searchPosts, { ...postFilters, sort: { by: 'likes' } }))).toEqual(likesDesc);
  });

  it('keeps the sort under narrowing filters and across a continuation with a lower limit', async () => {
    const body = {
      post: { filters: { views: { exists: true }, hashtags: { contains_any: ['#SORTSET'] } } },
      sort: { by: 'views', order: 'asc' },
    };
    const withViews = Object.fromEntries(Object.entries(POSTS).filter(([, r]) => r.views !== null));
    const expected = expectedOrder(withViews, (r) => r.views, 'asc', postId);
    const first = await searchPosts({ ...body, limit: 4 });
    const second = await searchPosts({ cursor: first.body.next_cursor, limit: 3 });
    const third = await searchPosts({ cursor: second.body.next_cursor });
    const ids = [first, second, third].flatMap((r) => r.body.data.map((p: { id: string }) => p.id));
    expect(second.body.data).toHaveLength(3);
    expect(third.body.has_more).toBe(false);
    expect(postNames(ids)).toEqual(expected);
  });
});

describe('sorting accounts', () => {
  const accountFilters = { account: { filters: { followers_count: { gte: 0 } } } };
  const accountNames = (ids: string[]) => ids.map((id) => NAME_OF_ACCOUNT.get(id) ?? id);
  const fields = ['followers_count', 'following_count', 'posts_count'] as const;
  const cases = fields.flatMap((by) => (['asc', 'desc'] as const).map((order) => [by, order] as const));

  it.each(cases)('by %s %s: ties by ID, pages equal one page, private accounts never listed', async (by, order) => {
    const body = { ...accountFilters, sort: { by, order } };
    const expected = expectedOrder(ACCOUNTS, (a) => a[by], order, accountId);
    expect(accountNames(await onePage(searchAccounts, body))).toEqual(expected);
    expect(accountNames(await onePage(searchAccounts, body))).toEqual(expected);
    expect(accountNames(await walk(searchAccounts, body, 2))).toEqual(expected);
  });

  it('sorts the most followed first without a sort', async () => {
    const expected = expectedOrder(ACCOUNTS, (a) => a.followers_count, 'desc', accountId);
    expect(expected.slice(-1)).toEqual(['four']);
    expect(accountNames(await onePage(searchAccounts, accountFilters))).toEqual(expected);
    expect(accountNames(await walk(searchAccounts, accountFilters, 1))).toEqual(expected);
  });

  it('sorts and pages accounts qualified by a posts scope', async () => {
    const body = {
      account: { posts: { minimum_matching_posts: 1, filters: { posted_at: { gte: '2026-05-03T00:00:00Z' } } } },
      sort: { by: 'followers_count', order: 'asc' },
    };
    // one (p03…p07), two (p08…p10) and three (p11, p12) have such posts; four and five have none.
    const authors = { one: ACCOUNTS.one, two: ACCOUNTS.two, three: ACCOUNTS.three };
    const expected = expectedOrder(authors, (a) => a.followers_count, 'asc', accountId);
    expect(accountNames(await onePage(searchAccounts, body))).toEqual(expected);
    expect(accountNames(await walk(searchAccounts, body, 1))).toEqual(expected);
  });
});
