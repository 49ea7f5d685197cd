import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  // Several jobs at once, so that concurrent merges of the same record really race.
  stack = await startStack('intake-merging', { WORKER_CONCURRENCY: '8' });
});
afterAll(async () => stack?.close());

const getPost = (platformId: string) => stack.get(`/v1/social/posts/${mintId('post', platformId)}`);
const getAccount = (platformId: string) => stack.get(`/v1/social/accounts/${mintId('account', platformId)}`);

async function ingestOk(observations: unknown[]) {
  const response = await stack.ingest(observations);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  expect(response.body.rejected).toEqual([]);
  return response;
}

/** `_version` and `_seq_no` of a stored document: they move on every write. */
async function docVersion(index: 'posts' | 'accounts', id: string) {
  const doc = await stack.runtime.es.get({ index: `${stack.config.INDEX_PREFIX}-${index}`, id });
  return { version: doc._version, seqNo: doc._seq_no };
}

/** Waits until the worker has nothing queued or running, then makes everything searchable. */
async function drain(timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await stack.runtime.jobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed');
    expect(c.failed).toBe(0);
    if ((c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0) break;
    if (Date.now() > deadline) throw new Error(`queue not drained: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // Posts and accounts visible to search (refresh() alone makes posts visible to the intake's lookups).
  await stack.runtime.engine.intake.publish();
}

/** Signed delivery URLs move when the hour bucket turns; compare them without their query. */
const withoutSignatures = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/\?src=[^"]*/g, '?…'));

describe('idempotency', () => {
  it('sending the same batch again (in any order) changes neither the responses nor the stored documents', async () => {
    const batch = [
      accountObs({ platform_id: 'i-acc', handle: 'idem.author' }),
      accountObs({ platform_id: 'i-co', handle: 'idem.coauthor' }),
      accountEnrichmentObs('i-acc'),
      postObs('i-acc', {
        platform_id: 'i-post',
        coauthor_platform_ids: ['i-co'],
        audio: {
          platform_id: 'i-aud',
          type: 'music',
          title: 'Song',
          attribution_display_name: 'Co',
          attribution_account_platform_id: 'i-co',
          duration_seconds: 20,
          web_url: null,
        },
      }),
      postEnrichmentObs('i-post', { media: [{ platform_id: 'i-post-m1', transcript: 'hello' }] }),
    ];
    await ingestOk(batch);
    const docs = [
      ['posts', mintId('post', 'i-post')],
      ['accounts', mintId('account', 'i-acc')],
      ['accounts', mintId('account', 'i-co')],
    ] as const;
    const versionsBefore = await Promise.all(docs.map(([index, id]) => docVersion(index, id)));
    const postBefore = await getPost('i-post');
    const accountBefore = await getAccount('i-acc');
    expect(postBefore.statusCode).toBe(200);
    expect(postBefore.body.media[0].transcript).toBe('hello');

    await ingestOk(batch);
    await ingestOk([...batch].reverse());
    const postAfter = await getPost('i-post');
    const accountAfter = await getAccount('i-acc');
    expect(withoutSignatures(postAfter.body)).toEqual(withoutSignatures(postBefore.body));
    expect(withoutSignatures(accountAfter.body)).toEqual(withoutSignatures(accountBefore.body));
    expect(await Promise.all(docs.map(([index, id]) => docVersion(index, id)))).toEqual(versionsBefore);
  });
});

describe('order independence', () => {
  it('an older account observation arriving after a newer one does not revert it', async () => {
    await ingestOk([
      accountObs({ platform_id: 'o-acc', handle: 'newer.handle', followers_count: 2000, observed_at: at(60) }),
    ]);
    await ingestOk([
      accountObs({
        platform_id: 'o-acc',
        handle: 'older.handle',
        followers_count: 10,
        is_verified: true,
        observed_at: at(30),
      }),
    ]);
    const got = await getAccount('o-acc');
    expect(got.body).toMatchObject({
      handle: 'newer.handle',
      followers_count: 2000,
      is_verified: false,
      observed_at: at(60),
    });
    expect((await stack.get('/v1/social/accounts/older.handle')).statusCode).toBe(404);
  });

  it('an older enrichment arriving later fills only the fields the newer one did not carry', async () => {
    await ingestOk([accountObs({ platform_id: 'o-auth' }), postObs('o-auth', { platform_id: 'o-post' })]);
    await ingestOk([
      { kind: 'post_enrichment', post_platform_id: 'o-post', produced_at: at(60), content_summary: 'newer summary' },
    ]);
    await ingestOk([
      postEnrichmentObs('o-post', { produced_at: at(30), content_summary: 'older summary', topics: ['older_topic'] }),
    ]);
    const got = await getPost('o-post');
    expect(got.body).toMatchObject({
      content_summary: 'newer summary',
      topics: ['older_topic'],
      primary_language: 'en',
    });
  });

  it('raw post and enrichment merge to the same post in either order', async () => {
    const make = (id: string) => ({
      raw: postObs('o-auth', { platform_id: id, shortcode: `SC-${id}`, views: 5000, likes: 400, comments: 100 }),
      enrichment: postEnrichmentObs(id, {
        topics: ['either_order'],
        media: [{ platform_id: `${id}-m1`, transcript: 'words', visual_description: 'a jar' }],
      }),
    });
    const first = make('o-raw-first');
    const second = make('o-enr-first');
    await ingestOk([first.raw]);
    await ingestOk([first.enrichment]);
    await ingestOk([second.enrichment]);
    expect((await getPost('o-enr-first')).statusCode).toBe(404); // enrichment alone is not a post
    await ingestOk([second.raw]);
    const [a, b] = [(await getPost('o-raw-first')).body, (await getPost('o-enr-first')).body];
    for (const body of [a, b]) {
      expect(body).toMatchObject({ topics: ['either_order'], views: 5000, engagement_rate_by_views: 0.1 });
      expect(body.media[0]).toMatchObject({ transcript: 'words', visual_description: 'a jar' });
    }
    const strip = (p: any) =>
      withoutSignatures({
        ...p,
        id: null,
        shortcode: null,
        web_url: null,
        media: p.media.map((m: any) => ({ ...m, id: null, media_url: null, thumbnail_url: null })),
      });
    expect(strip(a)).toEqual(strip(b));
  });

  it("keeps every media item's enrichment, whatever its platform ID (`__proto__`, `constructor`)", async () => {
    const image = (platformId: string) => ({
      platform_id: platformId,
      type: 'image',
      width: 1080,
      height: 1080,
      source_url: `https://cdn.social.example/media/${encodeURIComponent(platformId)}.jpg`,
      duration_seconds: null,
      thumbnail_source_url: null,
    });
    const ids = ['__proto__', 'constructor', 'plain-m1'];
    await ingestOk([postObs('o-auth', { platform_id: 'o-keys', format: 'carousel', media: ids.map(image) })]);
    await ingestOk([
      postEnrichmentObs('o-keys', {
        produced_at: at(10),
        media: ids.map((id) => ({ platform_id: id, visual_description: `first ${id}` })),
      }),
    ]);
    // A later enrichment merges into the stored record as read back from the engine.
    await ingestOk([
      postEnrichmentObs('o-keys', {
        produced_at: at(20),
        media: ids.map((id) => ({ platform_id: id, visible_text: [{ text: `text ${id}` }] })),
      }),
    ]);
    const got = await getPost('o-keys');
    expect(got.body.media.map((m: any) => [m.visual_description, m.visible_text])).toEqual(
      ids.map((id) => [`first ${id}`, [{ text: `text ${id}` }]]),
    );
  });
});

describe('concurrent intake', () => {
  it('loses no field when many requests update the same post and account at once', async () => {
    const media = ['m1', 'm2', 'm3'].map((m) => ({
      platform_id: `c-post-${m}`,
      type: 'video',
      width: 720,
      height: 1280,
      source_url: `https://cdn.social.example/${m}.mp4`,
      duration_seconds: 10,
      thumbnail_source_url: `https://cdn.social.example/${m}.jpg`,
    }));
    await ingestOk([
      accountObs({ platform_id: 'c-acc', handle: 'c.v0', observed_at: at(0) }),
      postObs('c-acc', { platform_id: 'c-post', media }),
    ]);

    const full = postEnrichmentObs('c-post') as Record<string, unknown>;
    const fields = Object.keys(full).filter((k) => !['kind', 'post_platform_id', 'produced_at'].includes(k));
    const observations: Array<Record<string, unknown>> = [];
    // one request per post enrichment field, each with its own produced_at
    fields.forEach((field, i) =>
      observations.push({
        kind: 'post_enrichment',
        post_platform_id: 'c-post',
        produced_at: at(10 + i),
        [field]: full[field],
      }),
    );
    // one field written twice: the newer value must win whichever lands last
    observations.push({
      kind: 'post_enrichment',
      post_platform_id: 'c-post',
      produced_at: at(200),
      content_summary: 'newest summary',
    });
    observations.push({
      kind: 'post_enrichment',
      post_platform_id: 'c-post',
      produced_at: at(150),
      content_summary: 'older summary',
    });
    // one request per media item and media field
    const mediaValues = (m: number) => ({
      transcript: `transcript ${m}`,
      visual_description: `frame ${m}`,
      visible_text: [{ text: `text ${m}`, start_seconds: m, end_seconds: m + 1 }],
    });
    media.forEach((item, m) => {
      for (const [field, value] of Object.entries(mediaValues(m))) {
        observations.push({
          kind: 'post_enrichment',
          post_platform_id: 'c-post',
          produced_at: at(20 + m),
          media: [{ platform_id: item.platform_id, [field]: value }],
        });
      }
    });
    // account: five profile observations (the newest must win) and enrichment fields one by one
    for (const minute of [40, 10, 50, 20, 30]) {
      observations.push(
        accountObs({
          platform_id: 'c-acc',
          handle: `c.v${minute}`,
          followers_count: minute * 100,
          observed_at: at(minute),
        }),
      );
    }
    observations.push({
      kind: 'account_enrichment',
      account_platform_id: 'c-acc',
      produced_at: at(5),
      publishing_summary: 'summary',
    });
    observations.push({
      kind: 'account_enrichment',
      account_platform_id: 'c-acc',
      produced_at: at(6),
      niches: ['niche_a'],
    });
    observations.push({
      kind: 'account_enrichment',
      account_platform_id: 'c-acc',
      produced_at: at(7),
      publishing_languages: ['en', 'es'],
    });
    expect(observations.length).toBeGreaterThanOrEqual(30);

    const responses = await Promise.all(observations.map((o) => stack.ingest([o], { wait: false })));
    for (const r of responses) expect(r.statusCode).toBe(202);
    await drain();

    const post = (await getPost('c-post')).body;
    for (const field of fields.filter((f) => f !== 'content_summary')) expect(post[field], field).toEqual(full[field]);
    expect(post.content_summary).toBe('newest summary');
    post.media.forEach((item: any, m: number) => expect(item).toMatchObject(mediaValues(m)));
    const account = (await getAccount('c-acc')).body;
    expect(account).toMatchObject({
      handle: 'c.v50',
      followers_count: 5000,
      observed_at: at(50),
      publishing_summary: 'summary',
      niches: ['niche_a'],
      publishing_languages: ['en', 'es'],
    });
    expect(post.author).toMatchObject({ id: mintId('account', 'c-acc'), handle: 'c.v50', followers_count: 5000 });
  });
});

describe('record versions', () => {
  it('a version read without the record matches the one read with it, and moves only when the record is rewritten', async () => {
    const accounts = stack.runtime.engine.intake.accounts;
    const id = mintId('account', 'v-acc');
    await ingestOk([accountObs({ platform_id: 'v-acc', handle: 'versions.v1', observed_at: at(0) })]);
    const [first] = [...(await accounts.getVersioned([id, mintId('account', 'v-missing')])).values()];
    expect(first!.record.profile?.v.handle).toBe('versions.v1');
    expect(await accounts.versions([id, mintId('account', 'v-missing')])).toEqual(new Map([[id, first!.version]]));

    // The same observation again writes nothing: the version stays.
    await ingestOk([accountObs({ platform_id: 'v-acc', handle: 'versions.v1', observed_at: at(0) })]);
    expect((await accounts.versions([id])).get(id)).toBe(first!.version);

    await ingestOk([accountObs({ platform_id: 'v-acc', handle: 'versions.v2', observed_at: at(60) })]);
    const moved = (await accounts.versions([id])).get(id);
    expect(moved).not.toBe(first!.version);
    expect((await accounts.getVersioned([id])).get(id)).toEqual({
      record: expect.objectContaining({ id }),
      version: moved,
    });
  });
});

describe('author fan-out', () => {
  const POSTS = 2100; // beyond one 2,000-post page of linked posts
  const ids = Array.from({ length: POSTS }, (_, i) => `f-post-${i}`);

  async function authorsOf(platformIds: string[]) {
    const out: any[] = [];
    for (let i = 0; i < platformIds.length; i += 100) {
      const page = await Promise.all(platformIds.slice(i, i + 100).map(getPost));
      for (const r of page) {
        expect(r.statusCode).toBe(200);
        out.push(r.body);
      }
    }
    return out;
  }

  it('a newer account observation reaches every linked post: author, coauthor and audio attribution', async () => {
    await ingestOk([
      accountObs({ platform_id: 'f-acc', handle: 'prolific.v1', followers_count: 100, observed_at: at(0) }),
      accountObs({ platform_id: 'f-other', handle: 'other.author' }),
    ]);
    const small = (id: string) =>
      postObs('f-acc', {
        platform_id: id,
        views: null,
        caption: '',
        media: [
          {
            platform_id: `${id}-m`,
            type: 'image',
            width: 1,
            height: 1,
            source_url: 'https://cdn.social.example/i.jpg',
          },
        ],
      });
    await ingestOk(ids.map(small));
    await ingestOk([
      postObs('f-other', { platform_id: 'f-coauthored', coauthor_platform_ids: ['f-acc'] }),
      postObs('f-other', {
        platform_id: 'f-audio',
        audio: {
          platform_id: 'f-aud',
          type: 'original_sound',
          title: 'Original',
          attribution_display_name: 'Prolific',
          attribution_account_platform_id: 'f-acc',
          duration_seconds: 9,
          web_url: null,
        },
      }),
    ]);
    expect((await authorsOf(ids.slice(0, 3)))[0].author.handle).toBe('prolific.v1');

    await ingestOk([
      accountObs({
        platform_id: 'f-acc',
        handle: 'prolific.v2',
        followers_count: 999,
        is_verified: true,
        observed_at: at(60),
      }),
    ]);
    const expected = {
      id: mintId('account', 'f-acc'),
      handle: 'prolific.v2',
      followers_count: 999,
      is_verified: true,
      display_name: 'Display prolific.v2',
    };
    const posts = await authorsOf(ids);
    const stale = posts.filter((p) => p.author.handle !== 'prolific.v2' || p.author.followers_count !== 999);
    expect(stale.map((p) => p.id)).toEqual([]);
    expect(posts[POSTS - 1].author).toMatchObject(expected);
    expect((await getPost('f-coauthored')).body.coauthors).toEqual([expect.objectContaining(expected)]);
    expect((await getPost('f-audio')).body.audio.attribution.account).toMatchObject(expected);

    // an older observation arriving later changes no post
    await ingestOk([
      accountObs({ platform_id: 'f-acc', handle: 'prolific.old', followers_count: 1, observed_at: at(30) }),
    ]);
    const again = await authorsOf([...ids.filter((_, i) => i % 50 === 0), 'f-coauthored']);
    expect(
      again.filter(
        (p) => p.author.handle === 'prolific.old' || p.coauthors.some((c: any) => c.handle === 'prolific.old'),
      ),
    ).toEqual([]);
    expect((await getPost('f-audio')).body.audio.attribution.account.handle).toBe('prolific.v2');
  });
});

describe('derived metrics', () => {
  const day = (d: string) => `2026-05-${d}T18:00:00Z`;
  const ratios = async (names: string[]) =>
    Object.fromEntries(
      await Promise.all(names.map(async (n) => [n, (await getPost(n)).body.view_ratio_to_account_baseline])),
    );

  it('computes engagement and the 90-day baseline ratio, and keeps the ratio current', async () => {
    await ingestOk([
      accountObs({ platform_id: 'd-acc' }),
      postObs('d-acc', { platform_id: 'd0', posted_at: '2026-01-01T18:00:00Z', views: 5000 }), // outside every window
      postObs('d-acc', { platform_id: 'd1', posted_at: day('01'), views: 100 }),
      postObs('d-acc', { platform_id: 'd2', posted_at: day('10'), views: 300 }),
      postObs('d-acc', { platform_id: 'd3', posted_at: day('20'), views: 200 }),
      postObs('d-acc', { platform_id: 'd4', posted_at: day('30'), views: 800, likes: 30, comments: 10 }),
      postObs('d-other', { platform_id: 'd-foreign', posted_at: day('29'), views: 1 }), // another author's post
    ]);
    const d4 = (await getPost('d4')).body;
    expect(d4.engagement_rate_by_views).toBe(0.05); // (30 + 10) / 800
    expect(await ratios(['d0', 'd1', 'd2', 'd3', 'd4'])).toEqual({ d0: null, d1: null, d2: null, d3: null, d4: 4 }); // 800 / median(100, 300, 200)

    // a new post inside d4's window: median of 4 values
    await ingestOk([postObs('d-acc', { platform_id: 'd5', posted_at: day('25'), views: 1000 })]);
    expect(await ratios(['d3', 'd4', 'd5'])).toEqual({ d3: null, d4: 3.2, d5: 5 }); // 800 / 250; 1000 / median(100, 300, 200)

    // an older post's views change
    await ingestOk([postObs('d-acc', { platform_id: 'd1', posted_at: day('01'), views: 500, observed_at: at(60) })]);
    const after = await ratios(['d4', 'd5']);
    expect(after.d4).toBe(2); // 800 / median(500, 300, 200, 1000) = 800 / 400
    expect(after.d5).toBeCloseTo(1000 / 300, 12); // 1000 / median(500, 300, 200)

    // a post that becomes unavailable leaves its author's baselines
    await ingestOk([{ kind: 'post', platform_id: 'd5', status: 'unavailable', observed_at: at(90) }]);
    expect((await getPost('d5')).statusCode).toBe(404);
    expect((await ratios(['d4'])).d4).toBeCloseTo(800 / 300, 12); // 800 / median(500, 300, 200)
  });
});
