import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Metric history, account metrics and caption mentions on the real Elasticsearch, through the API.
// Hand-made series: every expected value is computed in the comments from the observations here.

let stack: Stack;
const T = '2026-06-30T12:00:00.000Z';
const before = (days: number, hours = 0) =>
  new Date(Date.parse(T) - days * 86_400_000 - hours * 3_600_000).toISOString();

// grow: 8000 (T−35d), 9000 (T−30d), 10000 (T−7d−3h), 10400 (T−2d), 10500 (T)
//   growth_7d = (10500 − 10000) / 10000 = 0.05; growth_30d = (10500 − 9000) / 9000 = 1/6
const GROW = [
  [35, 8000],
  [30, 9000],
  [7.125, 10_000],
  [2, 10_400],
  [0, 10_500],
] as const;
// gap: 5000 (T−20d), 5200 (T): no point within ±2 days of T−7d or T−30d → both null
// priv: private, same series as grow → every metric null, its history still served
const grow = (days: number, followers: number) =>
  accountObs({ platform_id: 'mh-grow', handle: 'Grow.Fast', observed_at: before(days), followers_count: followers });
const growObservations = GROW.map(([d, f]) => grow(d, f));
const gap = [
  accountObs({ platform_id: 'mh-gap', handle: 'gap_account', observed_at: before(20), followers_count: 5000 }),
  accountObs({ platform_id: 'mh-gap', handle: 'gap_account', observed_at: T, followers_count: 5200 }),
];
const priv = GROW.map(([d, f]) =>
  accountObs({
    platform_id: 'mh-priv',
    handle: 'hidden',
    is_private: true,
    observed_at: before(d),
    followers_count: f,
  }),
);
// grow's posts: views 100, 300, 200 in the 90 days before T (rates 0.1, 0.1, 0.25) and one older post
//   median_views_90d = 200; engagement_rate_90d = 0.1; posts_per_week_90d = 3 / (90 / 7)
const growPosts = [
  postObs('mh-grow', {
    platform_id: 'mh-p1',
    posted_at: before(1),
    views: 100,
    likes: 10,
    comments: 0,
    observed_at: T,
  }),
  postObs('mh-grow', {
    platform_id: 'mh-p2',
    posted_at: before(10),
    views: 300,
    likes: 15,
    comments: 15,
    observed_at: T,
    caption: 'Shot with @Studio.Lights and @tripod_co #gear',
    caption_mentions: ['@Studio.Lights', '@tripod_co'],
  }),
  postObs('mh-grow', {
    platform_id: 'mh-p3',
    posted_at: before(20),
    views: 200,
    likes: 50,
    comments: 0,
    observed_at: T,
    caption: 'Thanks @studio.lights',
    caption_mentions: ['@studio.lights'],
  }),
  postObs('mh-grow', {
    platform_id: 'mh-p4',
    posted_at: before(100),
    views: 5000,
    likes: 1,
    comments: 0,
    observed_at: T,
  }),
];
// p1 observed again twice: its history has three points
const p1Later = [
  { ...growPosts[0]!, observed_at: before(-1), views: 150, likes: 12 },
  { ...growPosts[0]!, observed_at: before(-1, -6), views: 170, likes: 13 },
];

const GROW_ID = mintId('account', 'mh-grow');

beforeAll(async () => {
  stack = await startStack('history');
  // The latest observation first: the earlier ones arrive late, in separate requests.
  for (const batch of [
    [growObservations[4]!, ...gap, ...priv],
    growPosts,
    [growObservations[0]!, growObservations[2]!],
    [growObservations[1]!, growObservations[3]!],
    p1Later,
  ]) {
    const response = await stack.ingest(batch);
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  }
});

afterAll(async () => {
  await stack?.close();
});

const searchAccounts = (body: unknown) => stack.post('/v1/social/accounts/search', body);
const searchPosts = (body: unknown) => stack.post('/v1/social/posts/search', body);
const ids = (response: { body: { data: Array<{ id: string }> } }) => response.body.data.map((d) => d.id);

describe('account metrics', () => {
  it('derives growth from the history exactly, late observations included, after the spec fields', async () => {
    const response = await stack.get('/v1/social/accounts/@grow.fast');
    expect(response.statusCode).toBe(200);
    const account = response.body;
    expect(account.observed_at).toBe(T);
    expect(account.followers_count).toBe(10_500);
    expect(account.followers_growth_7d).toBeCloseTo(0.05, 12);
    expect(account.followers_growth_30d).toBeCloseTo(1 / 6, 12);
    expect(account.median_views_90d).toBe(200);
    expect(account.engagement_rate_90d).toBeCloseTo(0.1, 12);
    expect(account.posts_per_week_90d).toBeCloseTo(3 / (90 / 7), 12);
    const keys = Object.keys(account);
    expect(keys.slice(keys.indexOf('observed_at'))).toEqual([
      'observed_at',
      'followers_growth_7d',
      'followers_growth_30d',
      'median_views_90d',
      'engagement_rate_90d',
      'posts_per_week_90d',
    ]);
  });

  it('is null without a point near 7 or 30 days before, and entirely null for a private account', async () => {
    const gapAccount = (await stack.get('/v1/social/accounts/@gap_account')).body;
    expect(gapAccount.followers_growth_7d).toBeNull();
    expect(gapAccount.followers_growth_30d).toBeNull();
    expect(gapAccount.median_views_90d).toBeNull(); // no posts
    expect(gapAccount.posts_per_week_90d).toBe(0);
    const hidden = (await stack.get('/v1/social/accounts/@hidden')).body;
    expect(hidden.is_private).toBe(true);
    for (const field of ['followers_growth_7d', 'followers_growth_30d', 'median_views_90d', 'posts_per_week_90d'])
      expect(hidden[field], field).toBeNull();
  });

  it('filters and sorts accounts on every metric, nulls last', async () => {
    const growing = await searchAccounts({ account: { filters: { followers_growth_7d: { gte: 0.04 } } } });
    expect(ids(growing)).toEqual([GROW_ID]);
    const noGrowth = await searchAccounts({ account: { filters: { followers_growth_30d: { exists: false } } } });
    expect(ids(noGrowth)).toEqual([mintId('account', 'mh-gap')]);
    for (const by of ['followers_growth_7d', 'followers_growth_30d', 'median_views_90d', 'engagement_rate_90d']) {
      for (const order of ['desc', 'asc']) {
        const sorted = await searchAccounts({
          account: { filters: { followers_count: { gte: 0 } } },
          sort: { by, order },
        });
        expect(ids(sorted), `${by} ${order}`).toEqual([GROW_ID, mintId('account', 'mh-gap')]);
      }
    }
    const weekly = await searchAccounts({
      account: { filters: { posts_per_week_90d: { gt: 0 } } },
      sort: { by: 'posts_per_week_90d', order: 'asc' },
    });
    expect(ids(weekly)).toEqual([GROW_ID]);
  });

  it("filters posts on their author's metrics", async () => {
    const byMedian = await searchPosts({
      post: { author: { filters: { median_views_90d: { gte: 150 }, followers_growth_7d: { gt: 0 } } } },
      sort: { by: 'views', order: 'asc' },
    });
    expect(ids(byMedian)).toEqual(['mh-p1', 'mh-p3', 'mh-p2', 'mh-p4'].map((p) => mintId('post', p)));
    const none = await searchPosts({ post: { author: { filters: { followers_growth_7d: { lt: 0 } } } } });
    expect(ids(none)).toEqual([]);
  });
});

describe('caption mentions', () => {
  it('filters with contains_any, contains_all and contains_none, @ optional and case-insensitive', async () => {
    const any = await searchPosts({
      post: { filters: { caption_mentions: { contains_any: ['STUDIO.lights'] } } },
      sort: { by: 'views', order: 'asc' },
    });
    expect(ids(any)).toEqual([mintId('post', 'mh-p3'), mintId('post', 'mh-p2')]);
    const all = await searchPosts({
      post: { filters: { caption_mentions: { contains_all: ['@studio.lights', 'Tripod_Co'] } } },
    });
    expect(ids(all)).toEqual([mintId('post', 'mh-p2')]);
    const without = await searchPosts({
      post: { filters: { caption_mentions: { contains_none: ['@tripod_co'] }, views: { gte: 0 } } },
      sort: { by: 'views', order: 'asc' },
    });
    expect(ids(without)).toEqual(['mh-p1', 'mh-p3', 'mh-p4'].map((p) => mintId('post', p)));
  });

  it('is a post facet counting each handle once per post', async () => {
    const response = await stack.post('/v1/social/posts/facets', {
      post: { filters: { views: { gte: 0 } } },
      facets: [{ field: 'caption_mentions' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.body.facets.caption_mentions).toEqual([
      { value: 'studio.lights', count: 2 },
      { value: 'tripod_co', count: 1 },
      { value: null, count: 2 },
    ]);
  });
});

describe('history endpoints', () => {
  const range = `from=${encodeURIComponent(before(40))}&to=${encodeURIComponent(before(-2))}`;

  it('answers every observation in time order for raw, once each, late and repeated ones alike', async () => {
    const response = await stack.get(`/v1/social/accounts/${GROW_ID}/history?interval=raw&${range}`);
    expect(response.statusCode).toBe(200);
    expect(response.body).toEqual({
      id: GROW_ID,
      interval: 'raw',
      points: [...GROW]
        .sort((a, b) => b[0] - a[0])
        .map(([d, f]) => ({ at: before(d), followers_count: f, following_count: 300, posts_count: 420 })),
      from: before(40),
      to: before(-2),
    });
    // The same observations again add nothing.
    expect((await stack.ingest(growObservations)).statusCode).toBe(200);
    const again = await stack.get(`/v1/social/accounts/@Grow.Fast/history?interval=raw&${range}`);
    expect(again.body.points).toHaveLength(GROW.length);
  });

  it("buckets a post's points by day and week, each counter at its last value in the bucket", async () => {
    const day = await stack.get(`/v1/social/posts/SCmh-p1/history?interval=day&${range}`);
    expect(day.statusCode).toBe(200);
    // T (06-30 12:00), T+1d (07-01 12:00) and T+1d+6h (07-01 18:00): two days
    expect(day.body.points).toEqual([
      { at: T, views: 100, likes: 10, comments: 0 },
      { at: before(-1, -6), views: 170, likes: 13, comments: 0 },
    ]);
    // 2026-06-29 is a Monday: all three in one ISO week
    const week = await stack.get(`/v1/social/posts/${mintId('post', 'mh-p1')}/history?interval=week&${range}`);
    expect(week.body.points).toEqual([{ at: before(-1, -6), views: 170, likes: 13, comments: 0 }]);
  });

  it('defaults to the last 90 days by day, narrows to the range asked, and serves private accounts', async () => {
    const defaults = await stack.get(`/v1/social/accounts/${GROW_ID}/history`);
    expect(defaults.statusCode).toBe(200);
    expect(defaults.body.interval).toBe('day');
    expect(Date.parse(defaults.body.to) - Date.parse(defaults.body.from)).toBe(90 * 86_400_000);
    expect(Math.abs(Date.parse(defaults.body.to) - Date.now())).toBeLessThan(60_000);
    const narrow = await stack.get(
      `/v1/social/accounts/${GROW_ID}/history?interval=raw&from=${encodeURIComponent(before(8))}&to=${encodeURIComponent(before(1))}`,
    );
    expect(narrow.body.points.map((p: { at: string }) => p.at)).toEqual([before(7.125), before(2)]);
    const hidden = await stack.get(`/v1/social/accounts/@hidden/history?interval=raw&${range}`);
    expect(hidden.statusCode).toBe(200);
    expect(hidden.body.points).toHaveLength(GROW.length);
  });

  it('answers the problems of the GETs, and 422 for a bad range or interval', async () => {
    expect((await stack.get('/v1/social/accounts/@nobody_here/history')).body.type).toMatch(/not-tracked$/);
    expect((await stack.get('/v1/social/posts/SCnothing/history')).statusCode).toBe(404);
    const cases = [
      ['interval=hour', '/interval'],
      ['from=2026-07-01T00:00:00Z&to=2026-06-01T00:00:00Z', '/from'],
      ['from=yesterday', '/from'],
      ['to=2026-06-01T00:00:00%2B02:00', '/to'],
      ['limit=3', 'unknown'],
    ];
    for (const [query, says] of cases) {
      const response = await stack.get(`/v1/social/accounts/${GROW_ID}/history?${query}`);
      expect(response.statusCode, query).toBe(422);
      expect(response.body.detail, query).toContain(says);
    }
    expect((await stack.get(`/v1/social/accounts/${GROW_ID}/history`, null)).statusCode).toBe(401);
  });

  it('carries an ETag like the GETs: 304 for a copy that is current', async () => {
    const url = `/v1/social/accounts/${GROW_ID}/history?${range}`;
    const first = await stack.get(url);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"/);
    const again = await stack.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${stack.key}`, 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
  });
});

describe('operating the history', () => {
  it('survives an index rebuild, and indices status shows it', async () => {
    await stack.runtime.indexAdmin.rebuild('accounts');
    await stack.runtime.indexAdmin.rebuild('posts');
    const response = await stack.get(
      `/v1/social/accounts/${GROW_ID}/history?interval=raw&from=${encodeURIComponent(before(40))}`,
    );
    expect(response.body.points).toHaveLength(GROW.length);
    const status = await stack.runtime.indexAdmin.historyStatus();
    expect(status.template_installed).toBe(true);
    expect(status.months.map((m) => m.index.slice(-7))).toEqual(['2026.05', '2026.06', '2026.07']);
    // grow 5, gap 2, priv 5, posts 4 + 2 later observations of p1
    expect(status.points).toBe(18);
    expect(status.bytes_per_point).toBeGreaterThan(0);
    expect(status.oldest).toBe(before(35));
  });

  it('drops months past retention and thins months older than 30 days to the last point of each day', async () => {
    const old = (iso: string, followers: number) =>
      accountObs({ platform_id: 'mh-old', handle: 'old_timer', observed_at: iso, followers_count: followers });
    expect(
      (
        await stack.ingest([
          old('2025-03-10T08:00:00Z', 1),
          old('2025-03-10T09:00:00Z', 2),
          old('2026-05-10T08:00:00Z', 3),
          old('2026-05-10T20:00:00Z', 4),
          old('2026-05-11T08:00:00Z', 5),
        ])
      ).statusCode,
    ).toBe(200);
    await stack.runtime.engine.intake.refresh();
    const outcome = await stack.runtime.indexAdmin.pruneHistory(new Date('2026-07-15T00:00:00Z'));
    expect(outcome.dropped.map((m) => m.slice(-7))).toEqual(['2025.03']);
    // May 2026 ended 45 days before: thinned once (grow's and priv's May points are one a day: kept)
    expect(outcome.thinned.map((m) => m.slice(-7))).toEqual(['2026.05']);
    expect(outcome.pointsDeleted).toBe(1);
    const history = await stack.get(`/v1/social/accounts/@old_timer/history?interval=raw&from=2025-01-01T00:00:00Z`);
    expect(history.body.points.map((p: { followers_count: number }) => p.followers_count)).toEqual([4, 5]);
    const again = await stack.runtime.indexAdmin.pruneHistory(new Date('2026-07-15T00:00:00Z'));
    expect(again).toEqual({ dropped: [], thinned: [], pointsDeleted: 0 });
  });
});

// Last: its account's points fall in the current month, which the status test above does not expect.
describe('account metrics without waiting', () => {
  it('follows observations nobody waits on, as they happen and as a late point', async () => {
    const now = Date.now();
    const obs = (daysAgo: number, followers: number) =>
      accountObs({
        platform_id: 'mh-live',
        handle: 'live_one',
        observed_at: new Date(now - daysAgo * 86_400_000).toISOString(),
        followers_count: followers,
      });
    const settled = async (expected: number) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const growth = (await stack.get('/v1/social/accounts/@live_one')).body.followers_growth_7d as number | null;
        if (growth !== null && Math.abs(growth - expected) < 1e-9) return growth;
        if (Date.now() > deadline) throw new Error(`growth stayed ${growth}, expected ${expected}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    // As they happen: the point a week back first, today's observation a moment later.
    expect((await stack.ingest([obs(8, 1000)], { wait: false })).statusCode).toBe(202);
    expect((await stack.ingest([obs(0, 1100)], { wait: false })).statusCode).toBe(202);
    await settled(0.1);
    // A late point closer to a week back replaces the one it compares with.
    expect((await stack.ingest([obs(7, 1050)], { wait: false })).statusCode).toBe(202);
    await settled(50 / 1050);
  });
});

describe('observations spread over decades', () => {
  it('are kept in one request, and their follow-ups still run', async () => {
    // 80 accounts, each observed once in its own month from 1990 on, in one request: the
    // follow-ups ask the history about every one of those months at once.
    const spread = Array.from({ length: 80 }, (_, i) =>
      accountObs({
        platform_id: `mh-decade-${i}`,
        handle: `decade_${i}`,
        observed_at: new Date(Date.UTC(1990 + Math.floor(i / 2), (i % 2) * 6, 15)).toISOString(),
        followers_count: 1000 + i,
      }),
    );
    const response = await stack.ingest(spread);
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    // A second observation of the last one, a week later: its growth needs the history read back.
    const last = spread.at(-1)!;
    const weekLater = new Date(Date.parse(last.observed_at) + 7 * 86_400_000).toISOString();
    const again = await stack.ingest([{ ...last, observed_at: weekLater, followers_count: 1158 }]);
    expect(again.statusCode, JSON.stringify(again.body)).toBe(200);
    const account = await stack.get('/v1/social/accounts/@decade_79');
    expect(account.body.followers_count).toBe(1158);
    expect(account.body.followers_growth_7d).toBeCloseTo((1158 - 1079) / 1079, 9);
    const history = await stack.get(
      `/v1/social/accounts/@decade_0/history?interval=raw&from=1989-01-01T00:00:00Z&to=1991-01-01T00:00:00Z`,
    );
    expect(history.statusCode).toBe(200);
    expect(history.body.points.map((p: { followers_count: number }) => p.followers_count)).toEqual([1000]);
  });
});
