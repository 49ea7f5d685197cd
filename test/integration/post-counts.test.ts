import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countsResponseSchema, type CountsResponse } from '../../src/contract/search-extras.ts';
import { accountEnrichmentObs, accountObs, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { allPosts } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Counts must count exactly what paging through the matching search returns: these tests page
// through the search and bucket the rendered posts themselves (with Luxon, in the same zone).

let stack: Stack;
type Post = Record<string, any>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

/** Posts around Paris's DST changes of 2026 (29 March, 25 October) and a Sunday/Monday pair. */
const TIMES: Record<string, string> = {
  // 29 March in Paris: 23:30+02:00, its last half hour (UTC: the same day as the next one).
  'p-mar29-late': '2026-03-29T21:30:00Z',
  // 30 March 00:30+02:00, still 29 March in UTC.
  'p-mar30-early': '2026-03-29T22:30:00Z',
  'p-mar28': '2026-03-28T12:00:00Z',
  // 25 October in Paris runs 25 hours: 00:30+02:00 and 23:30+01:00 are both of it.
  'p-oct25-first': '2026-10-24T22:30:00Z',
  'p-oct25-last': '2026-10-25T22:30:00Z',
  // Sunday 1 March and Monday 2 March: two weeks, since weeks start on Monday.
  'p-sun': '2026-03-01T12:00:00Z',
  'p-mon': '2026-03-02T12:00:00Z',
};

async function counts(body: Record<string, unknown>): Promise<CountsResponse> {
  const response = await stack.post('/v1/social/posts/counts', body);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return countsResponseSchema.parse(response.body);
}

/** The bucket start of each post, as the service writes it. */
function bucketOf(postedAt: string, interval: 'hour' | 'day' | 'week' | 'month', zone: string): string {
  return DateTime.fromISO(postedAt, { zone }).startOf(interval).toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
}

/** Counts of the posts per bucket. */
function tally(posts: Post[], interval: 'hour' | 'day' | 'week' | 'month', zone: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of posts) {
    const key = bucketOf(p.posted_at, interval, zone);
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/** The posts of TIMES. */
const DIARY = { hashtags: { contains_any: ['calendar'] } };

const nonEmpty = (answer: CountsResponse) =>
  new Map(answer.buckets.filter((b) => b.count > 0).map((b) => [b.start, b.count]));
const sum = (answer: CountsResponse) => answer.buckets.reduce((a, b) => a + b.count, 0);

beforeAll(async () => {
  stack = await startStack('counts');
  const observations: unknown[] = [
    accountObs({ platform_id: 'ct-a', handle: 'ct.alpha', followers_count: 12_000 }),
    accountEnrichmentObs('ct-a', { niches: ['skincare'] }),
    accountObs({
      platform_id: 'ct-b',
      handle: 'ct.beta',
      followers_count: 600_000,
      declared_locations: [{ country_code: 'FR', region_code: 'FR-75', locality: 'Paris' }],
    }),
    accountEnrichmentObs('ct-b', { niches: ['fitness'] }),
    accountObs({ platform_id: 'ct-priv', handle: 'ct.private', is_private: true }),
  ];
  for (const [id, postedAt] of Object.entries(TIMES)) {
    observations.push(
      postObs('ct-a', { platform_id: id, posted_at: postedAt, caption: `Routine diary ${id} #calendar` }),
    );
  }
  // A spread over October 2026 with languages, hashtags and formats to break down by.
  const languages = ['en', 'fr', 'de', 'en', 'en', 'fr'];
  for (let i = 0; i < 40; i++) {
    const id = `ct-oct-${i}`;
    const author = i % 3 === 0 ? 'ct-b' : 'ct-a';
    const postedAt = iso(Date.parse('2026-10-01T06:00:00Z') + i * 17 * HOUR);
    const tags = ['#serum', i % 2 ? '#retinol' : '#spf', i % 5 === 0 ? '#night' : '#day'];
    observations.push(
      postObs(author, {
        platform_id: id,
        posted_at: postedAt,
        format: i % 4 === 0 ? 'carousel' : 'reel',
        caption: `${i % 2 ? 'Serum routine' : 'Sunscreen tips'} ${tags.join(' ')}`,
        views: 1000 * i,
      }),
    );
    // Every seventh post waits for its enrichment: no language, no offers.
    if (i % 7 !== 3)
      observations.push(postEnrichmentObs(id, { primary_language: languages[i % languages.length], topics: ['t1'] }));
  }
  // A private author's post (never returned) and posts of the last weeks for the default window.
  observations.push(postObs('ct-priv', { platform_id: 'ct-hidden', posted_at: '2026-10-10T10:00:00Z' }));
  for (const days of [1, 2, 2, 9, 29, 45]) {
    observations.push(
      postObs('ct-a', {
        platform_id: `ct-recent-${days}-${observations.length}`,
        posted_at: iso(now - days * DAY),
        caption: 'Recent routine #recent',
      }),
    );
  }
  const response = await stack.ingest(observations);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
}, 240_000);
afterAll(async () => stack?.close());

describe('post counts', () => {
  it('count exactly what paging through the search returns: a query, post filters and author filters', async () => {
    const october = { gte: '2026-10-01T00:00:00Z', lt: '2026-11-01T00:00:00Z' };
    const scopes = [
      { filters: { posted_at: october } },
      { query: 'serum routine', filters: { posted_at: october } },
      {
        query: 'routine',
        filters: { posted_at: october, format: { in: ['reel'] } },
        author: { filters: { followers_count: { gte: 10_000, lt: 100_000 } } },
      },
      { filters: { posted_at: october }, author: { filters: { niches: { contains_any: ['fitness'] } } } },
    ];
    for (const scope of scopes) {
      const posts = await allPosts(stack, { post: scope });
      expect(posts.length, JSON.stringify(scope)).toBeGreaterThan(0);
      for (const [interval, zone] of [
        ['day', 'UTC'],
        ['week', 'Europe/Paris'],
        ['hour', 'America/New_York'],
      ] as const) {
        const answer = await counts({ post: scope, interval, time_zone: zone });
        expect(answer.total, JSON.stringify(scope)).toBe(posts.length);
        expect(sum(answer)).toBe(answer.total);
        expect(nonEmpty(answer), `${interval} ${zone}`).toEqual(tally(posts, interval, zone));
      }
    }
  });

  it('cut calendar days of the time zone: 23 and 25 hours across DST, weeks from Monday, empty buckets present', async () => {
    const march = await counts({
      post: { filters: { posted_at: { gte: '2026-03-27T23:00:00Z', lt: '2026-03-31T22:00:00Z' } } },
      interval: 'day',
      time_zone: 'Europe/Paris',
    });
    expect(march.time_zone).toBe('Europe/Paris');
    expect(march.buckets).toEqual([
      { start: '2026-03-28T00:00:00+01:00', count: 1 },
      { start: '2026-03-29T00:00:00+01:00', count: 1 },
      { start: '2026-03-30T00:00:00+02:00', count: 1 },
      { start: '2026-03-31T00:00:00+02:00', count: 0 },
    ]);
    const lengths = march.buckets
      .slice(1)
      .map((b, i) => (Date.parse(b.start) - Date.parse(march.buckets[i]!.start)) / HOUR);
    expect(lengths).toEqual([24, 23, 24]);
    // The same posts by UTC days: both late posts of 29 March fall on that day.
    const utc = await counts({
      post: { filters: { posted_at: { gte: '2026-03-28T00:00:00Z', lt: '2026-03-31T00:00:00Z' } } },
      interval: 'day',
    });
    expect(utc.time_zone).toBe('UTC');
    expect(utc.buckets.map((b) => [b.start, b.count])).toEqual([
      ['2026-03-28T00:00:00+00:00', 1],
      ['2026-03-29T00:00:00+00:00', 2],
      ['2026-03-30T00:00:00+00:00', 0],
    ]);

    const october = await counts({
      post: { filters: { ...DIARY, posted_at: { gte: '2026-10-24T22:00:00Z', lt: '2026-10-26T23:00:00Z' } } },
      interval: 'day',
      time_zone: 'europe/paris',
    });
    expect(october.time_zone).toBe('Europe/Paris');
    expect(october.buckets).toEqual([
      { start: '2026-10-25T00:00:00+02:00', count: 2 },
      { start: '2026-10-26T00:00:00+01:00', count: 0 },
    ]);
    expect((Date.parse(october.buckets[1]!.start) - Date.parse(october.buckets[0]!.start)) / HOUR).toBe(25);

    const weeks = await counts({
      post: { filters: { ...DIARY, posted_at: { gte: '2026-02-20T00:00:00Z', lt: '2026-03-10T00:00:00Z' } } },
      interval: 'week',
    });
    expect(weeks.buckets).toEqual([
      { start: '2026-02-16T00:00:00+00:00', count: 0 },
      { start: '2026-02-23T00:00:00+00:00', count: 1 },
      { start: '2026-03-02T00:00:00+00:00', count: 1 },
      { start: '2026-03-09T00:00:00+00:00', count: 0 },
    ]);
    const months = await counts({
      post: { filters: { ...DIARY, posted_at: { gte: '2026-02-01T00:00:00Z', lt: '2026-11-01T00:00:00Z' } } },
      interval: 'month',
      time_zone: 'Asia/Kolkata',
    });
    expect(months.buckets).toHaveLength(10);
    expect(months.buckets[0]!.start).toMatch(/^2026-02-01T00:00:00\+05:30$/);
    expect(months.total).toBe(Object.keys(TIMES).length);
  });

  it('count the last 30 days when the filters bound no posted_at', async () => {
    const recent = { filters: { hashtags: { contains_any: ['recent'] } } };
    const answer = await counts({ post: recent, interval: 'day' });
    const posts = (await allPosts(stack, { post: recent })).filter(
      (p) => Date.parse(p.posted_at) >= Date.parse(answer.buckets[0]!.start),
    );
    // 1, 2, 2, 9 and 29 days ago; 45 days ago is outside the window.
    expect(answer.total).toBe(5);
    expect(posts).toHaveLength(5);
    expect(answer.buckets).toHaveLength(31);
    expect(answer.buckets.at(-1)!.start).toBe(`${new Date(now).toISOString().slice(0, 10)}T00:00:00+00:00`);
    expect(nonEmpty(answer)).toEqual(tally(posts, 'day', 'UTC'));
  });

  it('break each bucket down by the window’s top values: their counts plus other are the bucket', async () => {
    const scope = { filters: { posted_at: { gte: '2026-10-01T00:00:00Z', lt: '2026-11-01T00:00:00Z' } } };
    const posts = await allPosts(stack, { post: scope });
    const language = await counts({ post: scope, interval: 'week', breakdown: { by: 'language', size: 2 } });
    // en on half the enriched posts, fr on a third, de on a sixth; pending ones have none.
    expect(language.buckets[0]!.breakdown!.map((b) => b.value)).toEqual(['en', 'fr']);
    for (const bucket of language.buckets) {
      const inBucket = posts.filter((p) => bucketOf(p.posted_at, 'week', 'UTC') === bucket.start);
      const by = (value: string) => inBucket.filter((p) => p.primary_language === value).length;
      expect(bucket.breakdown).toEqual([
        { value: 'en', count: by('en') },
        { value: 'fr', count: by('fr') },
      ]);
      expect(bucket.other).toBe(inBucket.length - by('en') - by('fr'));
      expect(bucket.breakdown!.reduce((a, b) => a + b.count, 0) + bucket.other!).toBe(bucket.count);
    }
    expect(language.buckets.reduce((a, b) => a + b.other!, 0)).toBeGreaterThan(6);

    // A multi-valued field: a post counts under each of its values; `other` has none of them.
    const tags = await counts({ post: scope, interval: 'week', breakdown: { by: 'hashtags', size: 3 } });
    expect(tags.buckets[0]!.breakdown!.map((b) => b.value)).toEqual(['serum', 'day', 'retinol']);
    for (const bucket of tags.buckets) {
      const inBucket = posts.filter((p) => bucketOf(p.posted_at, 'week', 'UTC') === bucket.start);
      const has = (p: Post, tag: string) => p.hashtags.some((h: string) => h.toLowerCase().replace(/^#/, '') === tag);
      expect(bucket.breakdown).toEqual(
        ['serum', 'day', 'retinol'].map((value) => ({ value, count: inBucket.filter((p) => has(p, value)).length })),
      );
      expect(bucket.other).toBe(inBucket.filter((p) => !['serum', 'day', 'retinol'].some((t) => has(p, t))).length);
    }

    // An author field: each value's count is the search filtered by it.
    const niches = await counts({ post: scope, interval: 'month', breakdown: { by: 'niches' } });
    expect(niches.buckets).toHaveLength(1);
    for (const { value, count } of niches.buckets[0]!.breakdown!) {
      const filtered = await allPosts(stack, {
        post: { ...scope, author: { filters: { niches: { contains_any: [value] } } } },
      });
      expect(filtered.length, value).toBe(count);
    }
    const country = await counts({ post: scope, interval: 'month', breakdown: { by: 'country' } });
    expect(country.buckets[0]!.breakdown!.map((b) => b.value).sort()).toEqual(['FR', 'US']);
    expect(country.buckets[0]!.other).toBe(0);
  });

  it('validate like the search and refuse more than 1,000 buckets, naming the member', async () => {
    const cases: Array<[unknown, string]> = [
      [{ post: {}, interval: 'year' }, '/interval'],
      [{ post: {} }, '/interval'],
      [{ post: {}, interval: 'day', time_zone: 'Mars/Olympus' }, '/time_zone'],
      [{ post: {}, interval: 'day', time_zone: '+02:00' }, '/time_zone'],
      [{ post: {}, interval: 'day', breakdown: { by: 'caption' } }, '/breakdown/by'],
      [{ post: {}, interval: 'day', breakdown: { by: 'language', size: 21 } }, '/breakdown/size'],
      [{ post: { filters: { views: { gte: 'many' } } }, interval: 'day' }, '/post/filters/views/gte'],
      [{ post: { author: { filters: { followers: { gte: 1 } } } }, interval: 'day' }, '/post/author/filters/followers'],
      [{ post: { query: 'x', similar_to: 'abc' }, interval: 'day' }, '/post/similar_to'],
      [{ post: {}, interval: 'day', limit: 5 }, '/limit'],
      [
        {
          post: { filters: { posted_at: { gte: '2026-01-01T00:00:00Z', lt: '2026-03-01T00:00:00Z' } } },
          interval: 'hour',
        },
        '/interval',
      ],
    ];
    for (const [body, pointer] of cases) {
      const response = await stack.post('/v1/social/posts/counts', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.body.detail, JSON.stringify(body)).toContain(`${pointer}:`);
    }
    const over = await stack.post('/v1/social/posts/counts', {
      post: { filters: { posted_at: { gte: '2026-01-01T00:00:00Z', lt: '2026-03-01T00:00:00Z' } } },
      interval: 'hour',
    });
    expect(over.body.detail).toContain('more than 1000 hour buckets');
    // 1,000 buckets exactly are answered.
    const most = await counts({
      post: {
        filters: {
          posted_at: { gte: '2026-01-01T00:00:00Z', lt: iso(Date.parse('2026-01-01T00:00:00Z') + 1000 * HOUR) },
        },
      },
      interval: 'hour',
    });
    expect(most.buckets).toHaveLength(1000);
  });

  it('revalidate with an ETag: 304 while the counts are the same, a new tag once they change', async () => {
    const body = {
      post: { filters: { posted_at: { gte: '2026-09-01T00:00:00Z', lt: '2026-09-08T00:00:00Z' } } },
      interval: 'day',
    };
    const first = await stack.post('/v1/social/posts/counts', body);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const again = await stack.post('/v1/social/posts/counts', body);
    expect(again.headers.etag).toBe(etag);
    expect(again.body.request_id).not.toBe(first.body.request_id);
    const conditional = await stack.inject({
      method: 'POST',
      url: '/v1/social/posts/counts',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json', 'if-none-match': etag },
      payload: JSON.stringify(body),
    });
    expect(conditional.statusCode).toBe(304);
    expect(conditional.body).toBe('');
    const ingested = await stack.ingest([
      postObs('ct-a', { platform_id: 'ct-sep', posted_at: '2026-09-03T08:00:00Z' }),
    ]);
    expect(ingested.statusCode).toBe(200);
    const changed = await stack.inject({
      method: 'POST',
      url: '/v1/social/posts/counts',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json', 'if-none-match': etag },
      payload: JSON.stringify(body),
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.body.total).toBe(first.body.total + 1);
  });
});

describe('the search rate limit', () => {
  let limited: Stack;
  beforeAll(async () => {
    limited = await startStack('counts-limit', { RATE_LIMIT_SEARCH_PER_MINUTE: '2' });
  });
  afterAll(async () => limited?.close());

  it('counts post counts and searches against one budget per key', async () => {
    const body = { post: {}, interval: 'day' };
    const ok = await limited.post('/v1/social/posts/counts', body);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['ratelimit-policy']).toBe('"search";q=2;w=60');
    expect((await limited.post('/v1/social/posts/search', { post: { query: 'anything' } })).statusCode).toBe(200);
    const over = await limited.post('/v1/social/posts/counts', body);
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
  });
});

// Hybrid ranking returns the lexical matches and the semantic window above the relevance floor:
// counts count both, as the search pages through them.
describe('post counts with hybrid ranking', () => {
  const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
  let hybrid: Stack;
  beforeAll(async () => {
    hybrid = await startStack('counts-hybrid', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
    await hybrid.runtime.embedder.ready();
    const captions = [
      'Evening skin care regimen before sleep',
      'Bedtime face care steps: cleanser, serum, moisturiser',
      'How to change a flat tyre on the motorway',
      'Night-time skincare routine in five minutes',
      'Sourdough starter feeding schedule',
    ];
    const response = await hybrid.ingest([
      accountObs({ platform_id: 'ch-a', handle: 'ch.author' }),
      ...captions.map((caption, i) =>
        postObs('ch-a', {
          platform_id: `ch-${i}`,
          caption,
          posted_at: iso(Date.parse('2026-10-05T10:00:00Z') + i * DAY),
        }),
      ),
    ]);
    expect(response.statusCode).toBe(200);
  }, 240_000);
  afterAll(async () => hybrid?.close());

  it('count the semantic window too', async () => {
    const scope = {
      query: 'night-time skincare routine',
      filters: { posted_at: { gte: '2026-10-01T00:00:00Z', lt: '2026-10-15T00:00:00Z' } },
    };
    const posts = await allPosts(hybrid, { post: scope });
    // Only one caption shares the query's words; the others come from the semantic side.
    expect(posts.length).toBeGreaterThan(1);
    const response = await hybrid.post('/v1/social/posts/counts', { post: scope, interval: 'day' });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const answer = countsResponseSchema.parse(response.body);
    expect(answer.total).toBe(posts.length);
    expect(nonEmpty(answer)).toEqual(tally(posts, 'day', 'UTC'));
  });
});
