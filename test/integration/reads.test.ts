import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSchema, fullPostSchema } from '../../src/contract/api.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('reads');
});
afterAll(async () => stack?.close());

describe('get post', () => {
  it('returns the bare full post, every summary field at its path, media in publication order', async () => {
    const author = accountObs({ platform_id: 'a-full', handle: 'glowwithmaya', is_verified: true });
    const coauthor = accountObs({ platform_id: 'a-co', handle: 'co.author' });
    const post = postObs('a-full', {
      platform_id: 'p-full',
      shortcode: 'CxFull01',
      format: 'carousel',
      views: null,
      coauthor_platform_ids: ['a-co', 'a-never-seen'],
      audio: {
        platform_id: 'aud1',
        type: 'original_sound',
        title: 'Original audio',
        attribution_display_name: 'Maya',
        attribution_account_platform_id: 'a-full',
        duration_seconds: 30,
        web_url: 'https://social.example/audio/aud1',
      },
      media: [
        {
          platform_id: 'm-img',
          type: 'image',
          width: 1080,
          height: 1350,
          source_url: 'https://cdn.social.example/m-img.jpg',
        },
        {
          platform_id: 'm-vid',
          type: 'video',
          width: 1080,
          height: 1920,
          source_url: 'https://cdn.social.example/m-vid.mp4',
          duration_seconds: 12,
          thumbnail_source_url: 'https://cdn.social.example/m-vid.jpg',
        },
      ],
    });
    const enrichment = postEnrichmentObs('p-full', {
      media: [
        { platform_id: 'm-img', visible_text: [{ text: 'SALE' }], visual_description: 'A jar of cream' },
        {
          platform_id: 'm-vid',
          transcript: 'first cleanse',
          visible_text: [{ text: 'step 1', start_seconds: 0, end_seconds: 2 }],
        },
      ],
    });
    const response = await stack.ingest([author, coauthor, post, enrichment]);
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatchObject({ accepted: 4, rejected: [] });

    const got = await stack.get(`/v1/social/posts/${mintId('post', 'p-full')}`);
    expect(got.statusCode).toBe(200);
    expect(got.headers['x-request-id']).toMatch(/^req_/);
    const body = fullPostSchema.parse(got.body); // strict: exactly the spec's fields
    expect(body.id).toBe(mintId('post', 'p-full'));
    expect(body.hashtags).toEqual(['skincare', 'NightRoutine']);
    expect(body.views).toBeNull();
    expect(body.engagement_rate_by_views).toBeNull();
    expect(body.author).toEqual({
      id: mintId('account', 'a-full'),
      handle: 'glowwithmaya',
      display_name: 'Display glowwithmaya',
      web_url: 'https://social.example/glowwithmaya',
      avatar_url: expect.stringMatching(/^https:\/\/api\.example\.test\/v1\/social\/delivery\/avatar\//),
      followers_count: 12000,
      is_verified: true,
    });
    expect(body.coauthors.map((c) => c.handle)).toEqual(['co.author']);
    expect(body.audio).toMatchObject({
      id: mintId('audio', 'aud1'),
      social_id: 'aud1',
      type: 'original_sound',
      attribution: { display_name: 'Maya', account: { handle: 'glowwithmaya' } },
    });
    expect(body.topics).toEqual(['night_skincare_routine']);
    expect(body.media.map((m) => m.id)).toEqual([mintId('media', 'm-img'), mintId('media', 'm-vid')]);
    const [image, video] = body.media as [any, any];
    expect(Object.keys(image).sort()).toEqual([
      'height',
      'id',
      'media_url',
      'type',
      'visible_text',
      'visual_description',
      'width',
    ]);
    expect(image.visible_text).toEqual([{ text: 'SALE' }]);
    expect(video).toMatchObject({
      type: 'video',
      duration_seconds: 12,
      transcript: 'first cleanse',
      visual_description: null,
    });
    expect(video.visible_text).toEqual([{ text: 'step 1', start_seconds: 0, end_seconds: 2 }]);
    expect(video.thumbnail_url).toMatch(/\/delivery\/thumbnail\//);
  });

  it('resolves a shortcode to the same post', async () => {
    const byCode = await stack.get('/v1/social/posts/CxFull01');
    expect(byCode.statusCode).toBe(200);
    expect(byCode.body.id).toBe(mintId('post', 'p-full'));
  });

  it('serves an enrichment-pending post with the spec null fields', async () => {
    await stack.ingest([accountObs({ platform_id: 'a-pend' }), postObs('a-pend', { platform_id: 'p-pend' })]);
    const got = await stack.get(`/v1/social/posts/${mintId('post', 'p-pend')}`);
    expect(got.statusCode).toBe(200);
    for (const field of [
      'primary_language',
      'content_summary',
      'topics',
      'creative_formats',
      'hook',
      'key_messages',
      'proofs',
      'offers',
      'calls_to_action',
      'narrative_structure',
      'has_paid_partnership_label',
      'paid_partners',
      'commercial_contexts',
    ]) {
      expect(got.body[field], field).toBeNull();
    }
    expect(got.body.media[0]).toMatchObject({ transcript: null, visible_text: null, visual_description: null });
    expect(got.body.engagement_rate_by_views).toBeCloseTo(0.1);
  });

  it('answers 404 not-tracked for unknown, malformed and unavailable posts', async () => {
    await stack.ingest([
      accountObs({ platform_id: 'a-gone' }),
      postObs('a-gone', { platform_id: 'p-gone', shortcode: 'GoneCode' }),
      { kind: 'post', platform_id: 'p-gone', status: 'unavailable', observed_at: at(5) },
    ]);
    for (const id of [
      mintId('post', 'never-seen'),
      'social_post_x',
      'NoSuchCode',
      mintId('post', 'p-gone'),
      'GoneCode',
    ]) {
      const got = await stack.get(`/v1/social/posts/${encodeURIComponent(id)}`);
      expect(got.statusCode, id).toBe(404);
      expect(got.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(got.body).toMatchObject({
        type: 'https://api.example.test/problems/not-tracked',
        status: 404,
        request_id: got.headers['x-request-id'],
      });
      expect(got.body.detail).toMatch(/not a claim/);
    }
  });

  it('holds back a post whose author was never observed, and serves it once the account arrives', async () => {
    await stack.ingest([postObs('a-late', { platform_id: 'p-early' })]);
    expect((await stack.get(`/v1/social/posts/${mintId('post', 'p-early')}`)).statusCode).toBe(404);
    await stack.ingest([accountObs({ platform_id: 'a-late', handle: 'late.author' })]);
    const got = await stack.get(`/v1/social/posts/${mintId('post', 'p-early')}`);
    expect(got.statusCode).toBe(200);
    expect(got.body.author.handle).toBe('late.author');
  });
});

describe('get account', () => {
  it('returns the bare account by ID, handle and @handle', async () => {
    await stack.ingest([accountObs({ platform_id: 'a-get', handle: 'Chef.Lucas' }), accountEnrichmentObs('a-get')]);
    for (const ref of [mintId('account', 'a-get'), 'Chef.Lucas', 'chef.lucas', '@chef.lucas']) {
      const got = await stack.get(`/v1/social/accounts/${encodeURIComponent(ref)}`);
      expect(got.statusCode, ref).toBe(200);
      const account = accountSchema.parse(got.body);
      expect(account.id).toBe(mintId('account', 'a-get'));
      expect(account.niches).toEqual(['skincare', 'future_registry_id']); // unknown IDs pass through
      expect(account.observed_at).toBe('2026-06-01T10:00:00.000Z');
    }
  });

  it('after a rename the new handle resolves, the old does not, and a late older observation does not revert it', async () => {
    await stack.ingest([accountObs({ platform_id: 'a-ren', handle: 'old.name', observed_at: at(0) })]);
    await stack.ingest([accountObs({ platform_id: 'a-ren', handle: 'new.name', observed_at: at(60) })]);
    await stack.ingest([accountObs({ platform_id: 'a-ren', handle: 'old.name', observed_at: at(30) })]);
    expect((await stack.get('/v1/social/accounts/new.name')).body.id).toBe(mintId('account', 'a-ren'));
    expect((await stack.get('/v1/social/accounts/old.name')).statusCode).toBe(404);
  });

  it('keeps profile facts of a private account with post-derived fields null', async () => {
    await stack.ingest([
      accountObs({ platform_id: 'a-priv', handle: 'secret.garden', is_private: true }),
      accountEnrichmentObs('a-priv'),
    ]);
    const got = await stack.get('/v1/social/accounts/secret.garden');
    expect(got.statusCode).toBe(200);
    expect(got.body).toMatchObject({
      is_private: true,
      followers_count: 12000,
      publishing_summary: null,
      publishing_languages: null,
      niches: null,
    });
  });

  it('answers 410 account-unavailable for deactivated, deleted and unobservable accounts, 404 for unknown', async () => {
    for (const status of ['deactivated', 'deleted', 'unobservable']) {
      const platformId = `a-${status}`;
      await stack.ingest([
        accountObs({ platform_id: platformId, handle: `h.${status}` }),
        { kind: 'account', platform_id: platformId, status, observed_at: at(10) },
      ]);
      const got = await stack.get(`/v1/social/accounts/${mintId('account', platformId)}`);
      expect(got.statusCode).toBe(410);
      expect(got.body.type).toBe('https://api.example.test/problems/account-unavailable');
      expect(got.body.detail).toContain(status);
    }
    const unknown = await stack.get(`/v1/social/accounts/${mintId('account', 'nobody')}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body.type).toBe('https://api.example.test/problems/not-tracked');
  });
});
