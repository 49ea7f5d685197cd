import type { DiagnosticResult } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountLookupResponseSchema, postLookupResponseSchema } from '../../src/contract/api.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, at, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const problemType = (name: string) => `https://api.example.test/problems/${name}`;
const account = (platformId: string) => mintId('account', platformId);
const post = (platformId: string) => mintId('post', platformId);

let stack: Stack;
beforeAll(async () => {
  // Lookups of a thousand entries spend a thousand reads each.
  stack = await startStack('lookup', { RATE_LIMIT_READ_PER_MINUTE: '100000' });
  const written = await stack.ingest(
    [
      accountObs({ platform_id: 'lk-zoe', handle: 'Zoe_Passport', followers_count: 48_000 }),
      accountObs({ platform_id: 'lk-mei', handle: 'mei.skin' }),
      accountObs({ platform_id: 'lk-priv', handle: 'quiet.garden', is_private: true }),
      accountObs({ platform_id: 'lk-gone', handle: 'gone.away' }),
      { kind: 'account', platform_id: 'lk-gone', status: 'deleted', observed_at: at(5) },
      // A rename, and the old handle taken by another account later: the newest claim holds it.
      accountObs({ platform_id: 'lk-ren', handle: 'old.handle', observed_at: at(0) }),
      accountObs({ platform_id: 'lk-ren', handle: 'new.handle', observed_at: at(60) }),
      postObs('lk-zoe', { platform_id: 'lk-p1', shortcode: 'CxLook01' }),
      postObs('lk-mei', { platform_id: 'lk-p2', shortcode: 'CxLook02' }),
      postObs('lk-zoe', { platform_id: 'lk-p3', shortcode: 'CxLook03' }),
      { kind: 'post', platform_id: 'lk-p3', status: 'unavailable', observed_at: at(10) },
      // Its author never observed: get post answers 404 for it, so the lookup lists it as not found.
      postObs('lk-nobody', { platform_id: 'lk-p4', shortcode: 'CxLook04' }),
    ],
    { vectors: false },
  );
  expect(written.statusCode).toBe(200);
});
afterAll(async () => stack?.close());

describe('POST /v1/social/accounts/lookup', () => {
  it('answers the found accounts in the order asked, handles first, each exactly as get account does', async () => {
    const response = await stack.post('/v1/social/accounts/lookup', {
      handles: ['@ZOE_passport', 'mei.skin', 'nobody.here'],
      ids: [account('lk-priv'), account('lk-mei'), account('never-seen')],
    });
    expect(response.statusCode).toBe(200);
    const body = accountLookupResponseSchema.parse(response.body); // strict: exactly these members
    expect(body.request_id).toBe(response.headers['x-request-id']);
    expect(body.data.map((a) => a.handle)).toEqual(['Zoe_Passport', 'mei.skin', 'quiet.garden']);
    expect(body.not_found).toEqual(['nobody.here', account('never-seen')]);
    for (const [i, ref] of ['@Zoe_Passport', 'mei.skin', account('lk-priv')].entries()) {
      expect(body.data[i]).toEqual((await stack.get(`/v1/social/accounts/${ref}`)).body);
    }
  });

  it('resolves handles as get account does: case, a leading @, renames and the newest claim', async () => {
    await stack.ingest([accountObs({ platform_id: 'lk-claim', handle: 'old.handle', observed_at: at(90) })], {
      vectors: false,
    });
    const response = await stack.post('/v1/social/accounts/lookup', {
      handles: ['NEW.handle', '@@new.handle', 'old.handle', '@gone.away'],
    });
    expect(response.statusCode).toBe(200);
    // The renamed account by its new handle; its old handle now names the account that claimed it.
    expect(response.body.data.map((a: { id: string }) => a.id)).toEqual([account('lk-ren'), account('lk-claim')]);
    expect((await stack.get('/v1/social/accounts/@old.handle')).body.id).toBe(account('lk-claim'));
    // `@@new.handle` is no handle get account reads; a deleted account is not served.
    expect(response.body.not_found).toEqual(['@@new.handle', '@gone.away']);
    expect((await stack.get('/v1/social/accounts/@gone.away')).statusCode).toBe(410);
  });

  it('lists an account asked twice once, at its first place, and a repeated missing entry once', async () => {
    const response = await stack.post('/v1/social/accounts/lookup', {
      handles: ['mei.skin', 'MEI.SKIN', 'ghost', 'ghost'],
      ids: [account('lk-zoe'), account('lk-mei'), 'not-an-id', 'mei.skin'],
    });
    expect(response.statusCode).toBe(200);
    expect(response.body.data.map((a: { id: string }) => a.id)).toEqual([account('lk-mei'), account('lk-zoe')]);
    // An ID entry is an ID: a handle in `ids` names nothing.
    expect(response.body.not_found).toEqual(['ghost', 'not-an-id', 'mei.skin']);
  });

  it('sends the engine one request for the whole list', async () => {
    const requests: string[] = [];
    const count = (_error: unknown, result: DiagnosticResult | null) => {
      if (result?.meta.request.params.path) requests.push(result.meta.request.params.path);
    };
    stack.runtime.es.diagnostic.on('response', count);
    try {
      const handles = Array.from({ length: 300 }, (_, i) => `someone.${i}`);
      const ids = Array.from({ length: 300 }, (_, i) => account(`someone-${i}`));
      const response = await stack.post('/v1/social/accounts/lookup', { handles: ['mei.skin', ...handles], ids });
      expect(response.statusCode).toBe(200);
      expect(response.body.data).toHaveLength(1);
      expect(response.body.not_found).toHaveLength(600);
    } finally {
      stack.runtime.es.diagnostic.off('response', count);
    }
    // Reads only (the idle worker may refresh or poll meanwhile).
    expect(requests.filter((path) => /_search|_msearch|_mget|_doc/.test(path))).toEqual(['/_msearch']);
  });
});

describe('POST /v1/social/posts/lookup', () => {
  it('answers the found posts in the order asked, shortcodes first, each exactly as get post does', async () => {
    const response = await stack.post('/v1/social/posts/lookup', {
      shortcodes: ['CxLook02', 'cxlook01', 'CxLook03', 'CxLook04', 'CxLook02'],
      ids: [post('lk-p1'), post('lk-p2'), post('lk-none')],
    });
    expect(response.statusCode).toBe(200);
    const body = postLookupResponseSchema.parse(response.body);
    expect(body.data.map((p) => p.shortcode)).toEqual(['CxLook02', 'CxLook01']);
    // Shortcodes are case-sensitive; an unavailable post and one whose author is unknown are not served.
    expect(body.not_found).toEqual(['cxlook01', 'CxLook03', 'CxLook04', post('lk-none')]);
    expect(body.data[0]).toEqual((await stack.get('/v1/social/posts/CxLook02')).body);
    expect(body.data[1]).toEqual((await stack.get(`/v1/social/posts/${post('lk-p1')}`)).body);
    expect((await stack.get('/v1/social/posts/CxLook03')).statusCode).toBe(404);
    expect((await stack.get('/v1/social/posts/CxLook04')).statusCode).toBe(404);
  });

  it('is a concrete path: GET /v1/social/posts/lookup is 405 with Allow: POST', async () => {
    const response = await stack.get('/v1/social/posts/lookup');
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect((await stack.get('/v1/social/accounts/lookup')).statusCode).toBe(405);
  });
});

describe('lookup validation', () => {
  const refused = async (path: string, body: unknown) => {
    const response = await stack.post(path, body);
    expect(response.statusCode).toBe(422);
    expect(response.body.type).toBe(problemType('validation-failed'));
    return response.body.detail as string;
  };
  const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('refuses more than 1,000 entries in all, naming the member that passes the bound', async () => {
    expect(await refused('/v1/social/accounts/lookup', { handles: many(1001, 'h') })).toMatch(
      /^\/handles: expected at most 1000 entries in all \(handles and ids\), got 1001/,
    );
    expect(await refused('/v1/social/accounts/lookup', { handles: many(600, 'h'), ids: many(401, 'i') })).toMatch(
      /^\/ids: expected at most 1000 entries/,
    );
    expect(await refused('/v1/social/posts/lookup', { shortcodes: many(1000, 's'), ids: ['x'] })).toMatch(
      /^\/ids: expected at most 1000 entries in all \(shortcodes and ids\), got 1001/,
    );
    // Exactly 1,000 is allowed.
    const full = await stack.post('/v1/social/posts/lookup', { shortcodes: many(999, 's'), ids: ['x'] });
    expect(full.statusCode).toBe(200);
    expect(full.body.not_found).toHaveLength(1000);
  });

  it('refuses an empty lookup, an empty entry and unknown members', async () => {
    expect(await refused('/v1/social/accounts/lookup', {})).toMatch(
      /^\/: expected at least one entry in handles or ids/,
    );
    expect(await refused('/v1/social/accounts/lookup', { handles: [], ids: [] })).toMatch(/at least one entry/);
    expect(await refused('/v1/social/accounts/lookup', { handles: ['ok', ''] })).toMatch(/^\/handles\/1: /);
    expect(await refused('/v1/social/posts/lookup', { handles: ['x'] })).toMatch(/handles/);
    expect(await refused('/v1/social/posts/lookup', { ids: 'social_post_x' })).toMatch(/^\/ids: /);
  });
});

describe('lookup rate limit', () => {
  let limited: Stack;
  beforeAll(async () => {
    limited = await startStack('lookuprate', { RATE_LIMIT_READ_PER_MINUTE: '10' }, { worker: false });
  });
  afterAll(async () => limited?.close());

  it('spends one read of the key budget per entry, shared with the gets', async () => {
    const first = await limited.post('/v1/social/accounts/lookup', { handles: ['a', 'b', 'c'], ids: ['x', 'y', 'z'] });
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"read";q=10;w=60');
    expect(first.headers['ratelimit-remaining']).toBe('4');
    expect((await limited.get('/v1/social/posts/CxNone')).headers['ratelimit-remaining']).toBe('3');
    // Four entries would fit, five do not: the whole lookup is refused.
    const over = await limited.post('/v1/social/posts/lookup', { shortcodes: ['a', 'b', 'c', 'd', 'e'] });
    expect(over.statusCode).toBe(429);
    expect(over.body.type).toBe(problemType('rate-limit-exceeded'));
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await limited.get('/v1/social/accounts/a')).statusCode).toBe(429);
  });
});
