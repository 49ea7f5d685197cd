import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facetsResponseSchema } from '../../src/contract/search-extras.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { accountEnrichmentObs, accountObs, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { bucketsOf, pageAll, tally, type Counts, type Post } from '../helpers/facet-counts.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Facets must count exactly what paging through the matching search returns: these tests page
// through the search and count the rendered results themselves.

let stack: Stack;

/**
 * The buckets are the `size` most frequent values with their exact counts (ties by value), and
 * the null bucket counts results without a value.
 */
function expectTopBuckets(
  buckets: Array<{ value: unknown; count: number }>,
  expected: Counts,
  size: number,
  label: string,
): void {
  const { null: missing, ...rest } = Object.fromEntries(expected);
  const ranked = Object.entries(rest).sort(([a, x], [b, y]) => y - x || (JSON.parse(a) < JSON.parse(b) ? -1 : 1));
  const top = new Map(ranked.slice(0, size));
  if (missing !== undefined) top.set('null', missing);
  expect(bucketsOf(buckets), label).toEqual(top);
  expect(
    buckets.map((b) => JSON.stringify(b.value)),
    label,
  ).toEqual([...top.keys()]);
}

const orNull = (v: unknown) => (v === null || v === undefined ? [] : [v]);
const list = (v: string[] | null | undefined) => v ?? [];
const inRange = (v: number | null, r: { from?: number; to?: number }) =>
  v !== null && (r.from === undefined || v >= r.from) && (r.to === undefined || v < r.to);

const VIEW_RANGES = [{ to: 1000 }, { from: 1000, to: 20_000 }, { from: 20_000 }, { from: 0 }];
const FOLLOWER_RANGES = [{ to: 10_000 }, { from: 10_000, to: 1_000_000 }, { from: 1_000_000 }];

/** Value extractors of the rendered post summary, per facet field. */
const POST_FIELDS: Record<string, (p: Post) => unknown[]> = {
  format: (p) => [p.format],
  primary_language: (p) => orNull(p.primary_language),
  topics: (p) => list(p.topics),
  creative_formats: (p) => list(p.creative_formats),
  commercial_contexts: (p) => list(p.commercial_contexts),
  hashtags: (p) => p.hashtags.map((h: string) => h.toLowerCase().replace(/^#/, '')),
  offer_types: (p) => (p.offers ?? []).flatMap((o: Post) => o.types),
  cta_actions: (p) => (p.calls_to_action ?? []).flatMap((c: Post) => c.actions),
  audio_type: (p) => orNull(p.audio?.type),
  'author.is_verified': (p) => [p.author.is_verified],
};

async function expectPostFacetsMatch(scope: Record<string, unknown>): Promise<void> {
  const posts = await pageAll(stack, 'posts', { post: scope });
  const facets = [
    ...Object.keys(POST_FIELDS).map((field) => ({ field, size: 100 })),
    { field: 'views', ranges: VIEW_RANGES },
  ];
  const response = await stack.post('/v1/social/posts/facets', { post: scope, facets });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  const body = facetsResponseSchema.parse(response.body);
  expect(body.total).toBe(posts.length);
  for (const [field, values] of Object.entries(POST_FIELDS))
    expectTopBuckets(body.facets[field]!, tally(posts, values), 100, field);
  const views = body.facets.views!;
  for (const [i, range] of VIEW_RANGES.entries()) {
    expect(views[i]!.count, JSON.stringify(range)).toBe(posts.filter((p) => inRange(p.views, range)).length);
  }
  expect(views.find((b) => b.value === null)?.count ?? 0).toBe(posts.filter((p) => p.views === null).length);
}

beforeAll(async () => {
  stack = await startStack('facets');
  const demo = [...generateObservations({ posts: 400, accounts: 40, seed: 13 })];
  const edge = [
    accountObs({
      platform_id: 'fx-pub',
      handle: 'fx.public',
      is_verified: true,
      followers_count: 2_500_000,
      account_type: 'business',
    }),
    accountEnrichmentObs('fx-pub', { niches: ['fx_niche_a', 'fx_niche_b'], publishing_languages: ['de'] }),
    // Enrichment pending: niches and languages are null.
    accountObs({ platform_id: 'fx-new', handle: 'fx.new', followers_count: 5_000 }),
    accountObs({ platform_id: 'fx-priv', handle: 'fx.private', is_private: true, followers_count: 77_000_000 }),
    accountEnrichmentObs('fx-priv', { niches: ['fx_private_niche'] }),
    // Enriched, with nulls and empty lists.
    postObs('fx-pub', { platform_id: 'fx-1', caption: 'Zebra fixture post #FxTag', views: null, format: 'carousel' }),
    postEnrichmentObs('fx-1', { topics: ['fx_topic'], primary_language: null, offers: [], calls_to_action: [] }),
    postObs('fx-pub', { platform_id: 'fx-2', caption: 'Zebra fixture post two #fxtag #Other', views: 500 }),
    postEnrichmentObs('fx-2', { topics: ['fx_topic', 'fx_topic_2'] }),
    // Pending enrichment.
    postObs('fx-new', { platform_id: 'fx-3', caption: 'Zebra fixture pending', views: 25_000 }),
    // A private author's post.
    postObs('fx-priv', { platform_id: 'fx-4', caption: 'Zebra fixture private author', views: 1_000 }),
    postEnrichmentObs('fx-4', { topics: ['fx_topic'] }),
  ];
  for (let i = 0; i < demo.length; i += 500) {
    const response = await stack.ingest(demo.slice(i, i + 500));
    expect(response.statusCode).toBe(200);
  }
  expect((await stack.ingest(edge)).statusCode).toBe(200);
}, 240_000);
afterAll(async () => stack?.close());

describe('post facets', () => {
  it('count exactly what paging through the matching search returns, on demo data', async () => {
    await expectPostFacetsMatch({ filters: { posted_at: { gte: '2000-01-01T00:00:00Z' } } });
    await expectPostFacetsMatch({ query: 'routine tips', author: { filters: { followers_count: { gte: 1000 } } } });
  });

  it('count nulls, private authors and pending enrichment like the search does', async () => {
    await expectPostFacetsMatch({ query: 'zebra fixture' });
    const response = await stack.post('/v1/social/posts/facets', {
      post: { query: 'zebra fixture' },
      facets: [{ field: 'topics' }, { field: 'author.niches' }, { field: 'primary_language' }],
    });
    const { facets, total } = facetsResponseSchema.parse(response.body);
    expect(total).toBe(4);
    expect(facets.topics).toEqual([
      { value: 'fx_topic', count: 3 },
      { value: 'fx_topic_2', count: 1 },
      { value: null, count: 1 },
    ]);
    // The private author's niches are null on its post (spec 2.2), never counted as a value.
    expect(facets['author.niches']).toEqual([
      { value: 'fx_niche_a', count: 2 },
      { value: 'fx_niche_b', count: 2 },
      { value: null, count: 2 },
    ]);
    // A null language and a pending post are both "no value".
    expect(facets.primary_language).toEqual([
      { value: 'en', count: 2 },
      { value: null, count: 2 },
    ]);
  });

  it('agree with the search filtered by each bucket, for author fields the summary does not show', async () => {
    const scope = { filters: { format: { in: ['reel'] } } };
    const response = await stack.post('/v1/social/posts/facets', {
      post: scope,
      facets: [{ field: 'author.niches', size: 5 }],
    });
    const buckets = facetsResponseSchema.parse(response.body).facets['author.niches']!;
    expect(buckets.length).toBeGreaterThan(1);
    for (const { value, count } of buckets) {
      const niches = value === null ? { exists: false } : { contains_any: [value] };
      const posts = await pageAll(stack, 'posts', { post: { ...scope, author: { filters: { niches } } } });
      expect(posts.length, JSON.stringify(value)).toBe(count);
    }
    const counts = buckets.filter((b) => b.value !== null).map((b) => b.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('validate like the search: 422 with JSON pointers', async () => {
    const cases: Array<[unknown, string]> = [
      [{ post: {}, facets: [{ field: 'caption' }] }, '/facets/0/field'],
      [{ post: {}, facets: [{ field: 'views' }] }, '/facets/0/ranges'],
      [{ post: {}, facets: [{ field: 'format', ranges: [{ to: 1 }] }] }, '/facets/0/ranges'],
      [{ post: {}, facets: [{ field: 'format' }, { field: 'format' }] }, '/facets/1/field'],
      [{ post: {}, facets: [{ field: 'views', ranges: [{ from: 5, to: 1 }] }] }, '/facets/0/ranges/0'],
      [{ post: {}, facets: [{ field: 'format', size: 0 }] }, '/facets/0/size'],
      [{ post: { filters: { views: { gte: 'many' } } }, facets: [{ field: 'format' }] }, '/post/filters/views/gte'],
      [{ post: {}, facets: [] }, '/facets'],
      [{ facets: [{ field: 'format' }] }, '/post'],
    ];
    for (const [body, pointer] of cases) {
      const response = await stack.post('/v1/social/posts/facets', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.body.detail, JSON.stringify(body)).toContain(`${pointer}:`);
    }
  });

  it('answer a bare field name with the shapes a facet takes', async () => {
    const response = await stack.post('/v1/social/posts/facets', { post: {}, facets: ['format', 'views'] });
    expect(response.statusCode).toBe(422);
    expect(response.body.detail).toMatch(/^\/facets\/0, \/facets\/1: expected an object \{"field": <field>/);
    expect(response.body.detail).toContain('"ranges"');
  });
});

describe('the facets in the OpenAPI document', () => {
  type Branch = { title: string; properties: { field: { enum: string[] } }; required?: string[] };
  /** The facet item schema of an operation's body, as a generated client reads it. */
  async function facetItem(path: string): Promise<{ oneOf: Branch[]; properties: { field: { enum: string[] } } }> {
    const doc = (await stack.get('/openapi.json')).body;
    return doc.paths[path].post.requestBody.content['application/json'].schema.properties.facets.items;
  }

  it('names every facetable field, tells value facets from range facets, and the API takes what it describes', async () => {
    for (const [path, scope] of [
      ['/v1/social/posts/facets', 'post'],
      ['/v1/social/accounts/facets', 'account'],
    ] as const) {
      const item = await facetItem(path);
      const [byValue, byRanges] = item.oneOf;
      expect(byValue!.title, path).toBe('value facet');
      expect(byRanges!.required, path).toEqual(['ranges']);
      const values = byValue!.properties.field.enum;
      const counters = byRanges!.properties.field.enum;
      expect([...values, ...counters].sort(), path).toEqual([...item.properties.field.enum].sort());
      expect(counters.length, path).toBeGreaterThan(0);
      // Every field the document admits is counted, each as its branch says.
      const asDescribed = [
        ...values.map((field) => ({ field, size: 2 })),
        ...counters.map((field) => ({ field, ranges: [{ to: 1000 }, { from: 1000 }] })),
      ];
      for (let i = 0; i < asDescribed.length; i += 20) {
        const response = await stack.post(path, { [scope]: {}, facets: asDescribed.slice(i, i + 20) });
        expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
      }
      // What the document refuses, the API refuses too.
      const crossed = await stack.post(path, { [scope]: {}, facets: [{ field: values[0], ranges: [{ to: 1 }] }] });
      expect(crossed.statusCode).toBe(422);
      const unknown = await stack.post(path, { [scope]: {}, facets: [{ field: 'no_such_field' }] });
      expect(unknown.body.detail).toMatch(/^\/facets\/0\/field: not a facetable field; expected one of "/);
    }
  });
});

describe('account facets', () => {
  const ACCOUNT_FIELDS: Record<string, (a: Post) => unknown[]> = {
    niches: (a) => list(a.niches),
    publishing_languages: (a) => list(a.publishing_languages),
    account_type: (a) => [a.account_type],
    is_verified: (a) => [a.is_verified],
  };

  async function expectAccountFacetsMatch(scope: Record<string, unknown>): Promise<number> {
    const accounts = await pageAll(stack, 'accounts', { account: scope });
    const facets = [
      ...Object.keys(ACCOUNT_FIELDS).map((field) => ({ field, size: 100 })),
      { field: 'followers_count', ranges: FOLLOWER_RANGES },
    ];
    const response = await stack.post('/v1/social/accounts/facets', { account: scope, facets });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const body = facetsResponseSchema.parse(response.body);
    expect(body.total).toBe(accounts.length);
    for (const [field, values] of Object.entries(ACCOUNT_FIELDS))
      expectTopBuckets(body.facets[field]!, tally(accounts, values), 100, field);
    for (const [i, range] of FOLLOWER_RANGES.entries()) {
      expect(body.facets.followers_count![i]!.count).toBe(
        accounts.filter((a) => inRange(a.followers_count, range)).length,
      );
    }
    return accounts.length;
  }

  it('count exactly what the account search returns, honouring the posts scope, never private accounts', async () => {
    expect(await expectAccountFacetsMatch({ filters: { followers_count: { gte: 0 } } })).toBeGreaterThan(30);
    expect(
      await expectAccountFacetsMatch({ posts: { minimum_matching_posts: 2, filters: { format: { in: ['reel'] } } } }),
    ).toBeGreaterThan(0);
    await expectAccountFacetsMatch({ query: 'fx', posts: { filters: { topics: { contains_any: ['fx_topic'] } } } });
    const response = await stack.post('/v1/social/accounts/facets', {
      account: { posts: { filters: { topics: { contains_any: ['fx_topic'] } } } },
      facets: [{ field: 'niches' }, { field: 'followers_count', ranges: [{ from: 50_000_000 }] }],
    });
    const { facets, total } = facetsResponseSchema.parse(response.body);
    // fx-pub qualifies; fx-priv authored a matching post too but is private.
    expect(total).toBe(1);
    expect(facets.niches).toEqual([
      { value: 'fx_niche_a', count: 1 },
      { value: 'fx_niche_b', count: 1 },
    ]);
    expect(facets.followers_count).toEqual([{ value: { from: 50_000_000, to: null }, count: 0 }]);
  });

  it('share the search rate limit and its validation', async () => {
    const response = await stack.post('/v1/social/accounts/facets', { account: {}, facets: [{ field: 'topics' }] });
    expect(response.statusCode).toBe(422);
    expect(response.body.detail).toContain('/facets/0/field:');
    const ok = await stack.post('/v1/social/accounts/facets', { account: {}, facets: [{ field: 'niches' }] });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['ratelimit-limit']).toBe('100000');
  });
});

describe('the search rate limit', () => {
  let limited: Stack;
  beforeAll(async () => {
    limited = await startStack('facets-limit', { RATE_LIMIT_SEARCH_PER_MINUTE: '3' });
  });
  afterAll(async () => limited?.close());

  it('counts facets and searches against one budget per key', async () => {
    const facets = { post: {}, facets: [{ field: 'format' }] };
    expect((await limited.post('/v1/social/posts/facets', facets)).statusCode).toBe(200);
    expect((await limited.post('/v1/social/posts/search', { post: { query: 'anything' } })).statusCode).toBe(200);
    expect(
      (await limited.post('/v1/social/accounts/facets', { account: {}, facets: [{ field: 'niches' }] })).statusCode,
    ).toBe(200);
    const over = await limited.post('/v1/social/posts/facets', facets);
    expect(over.statusCode).toBe(429);
    expect((await limited.post('/v1/social/posts/search', { post: { query: 'anything' } })).statusCode).toBe(429);
  });
});
