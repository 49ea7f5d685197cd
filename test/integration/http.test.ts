import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { createMediaUrlSigner } from '../../src/media/url-signer.ts';
import { loggerOptions } from '../../src/internal/logger.ts';
import { parseKey } from '../../src/services/keys/key-format.ts';
import { createApi } from '../../src/start/api.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
const postId = mintId('post', 'http-p1');
const accountId = mintId('account', 'http-a1');

beforeAll(async () => {
  stack = await startStack('http');
  await stack.ingest([
    accountObs({ platform_id: 'http-a1', handle: 'http.author' }),
    postObs('http-a1', { platform_id: 'http-p1' }),
  ]);
});
afterAll(async () => stack?.close());

const problemType = (name: string) => `https://api.example.test/problems/${name}`;

describe('authentication (spec part 5)', () => {
  const routes = () => [`/v1/social/posts/${postId}`, `/v1/social/accounts/${accountId}`];

  it('answers 401 authentication-required with a diagnosis in the spec order', async () => {
    const valid = stack.key;
    const cases: Array<[string | null, RegExp]> = [
      [null, /Authorization: Bearer/],
      [`Token ${valid}`, /Bearer/],
      [valid, /Bearer/],
      [`Bearer "${valid}"`, /quote/i],
      [`Bearer  ${valid}`, /whitespace/i],
      [`Bearer ${valid} `, /whitespace/i],
      ['Bearer not-a-key', /malformed|format/i],
      [`Bearer ${valid.slice(0, -4)}AAAA`, /not active/i],
    ];
    for (const path of routes()) {
      for (const [header, diagnosis] of cases) {
        const response = await stack.get(path, header);
        expect(response.statusCode, `${header}`).toBe(401);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(response.body).toEqual({
          type: problemType('authentication-required'),
          status: 401,
          request_id: response.headers['x-request-id'],
          detail: expect.stringMatching(diagnosis),
        });
        expect(response.body.detail).not.toContain(valid.slice(-20));
      }
    }
  });

  it('stops accepting a revoked key within one second', async () => {
    const created = await stack.runtime.api.keys.create({
      owner: 'rev@example.com',
      name: 'to-revoke',
      scopes: ['search'],
    });
    expect((await stack.get(`/v1/social/posts/${postId}`, `Bearer ${created.key}`)).statusCode).toBe(200);
    await stack.runtime.api.keys.revoke(created.id);
    const started = Date.now();
    const response = await stack.get(`/v1/social/posts/${postId}`, `Bearer ${created.key}`);
    expect(response.statusCode).toBe(401);
    expect(response.body.detail).toMatch(/not active/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('answers 403 insufficient-scope for a key without the search scope', async () => {
    const ingestOnly = await stack.runtime.api.keys.create({
      owner: 'pipe@example.com',
      name: 'pipeline',
      scopes: ['ingest'],
    });
    const response = await stack.get(`/v1/social/accounts/${accountId}`, `Bearer ${ingestOnly.key}`);
    expect(response.statusCode).toBe(403);
    expect(response.body.type).toBe(problemType('insufficient-scope'));
  });
});

describe('problems for malformed requests', () => {
  const emoji = (n: number) => encodeURIComponent('😍'.repeat(n));
  it('renders unknown routes, wrong content types, malformed JSON and oversized bodies as problems', async () => {
    const auth = { authorization: `Bearer ${stack.key}` };
    const cases = [
      { req: { method: 'GET' as const, url: '/v1/social/nothing-here' }, status: 404, name: 'not-found' },
      {
        req: {
          method: 'POST' as const,
          url: '/internal/v1/social/observations',
          headers: { ...auth, 'content-type': 'text/plain' },
          payload: 'hi',
        },
        status: 415,
        name: 'unsupported-media-type',
      },
      {
        req: {
          method: 'POST' as const,
          url: '/internal/v1/social/observations',
          headers: { ...auth, 'content-type': 'application/json' },
          payload: '{"broken":',
        },
        status: 400,
        name: 'malformed-request',
      },
      {
        req: {
          method: 'POST' as const,
          url: '/internal/v1/social/observations',
          headers: { ...auth, 'content-type': 'application/x-ndjson' },
          payload: 'x'.repeat(21 * 1024 * 1024),
        },
        status: 413,
        name: 'payload-too-large',
      },
      {
        req: { method: 'GET' as const, url: `/v1/social/posts/${'x'.repeat(300)}`, headers: auth },
        status: 422,
        name: 'validation-failed',
      },
      // Percent-encoded, 300 emoji are 3,600 characters: past the router's own limit, still a 422.
      {
        req: { method: 'GET' as const, url: `/v1/social/accounts/${emoji(300)}/history`, headers: auth },
        status: 422,
        name: 'validation-failed',
      },
      // 120 emoji are 240 characters (UTF-16), within the schema: a lookup of an unknown account.
      {
        req: { method: 'GET' as const, url: `/v1/social/accounts/${emoji(120)}/history`, headers: auth },
        status: 404,
        name: 'not-tracked',
      },
      {
        req: { method: 'GET' as const, url: '/v1/social/posts/%E0%A4%A', headers: auth },
        status: 422,
        name: 'validation-failed',
      },
    ];
    for (const { req, status, name } of cases) {
      const response = await stack.inject(req);
      expect(response.statusCode, name).toBe(status);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        type: problemType(name),
        status,
        request_id: response.headers['x-request-id'],
      });
      expect(typeof response.body.detail).toBe('string');
      expect(JSON.stringify(response.body)).not.toMatch(/at .*\.ts:\d+/); // no stack traces
    }
  });

  it('answers a known path with the wrong method 405 with Allow, and an unknown one 404', async () => {
    const search = await stack.inject({
      method: 'GET',
      url: '/v1/social/posts/search?x=1',
      headers: { authorization: `Bearer ${stack.key}` },
    });
    // The concrete path wins over /v1/social/posts/{id}, as OpenAPI matches paths: a 405, Allow: POST.
    expect(search.statusCode).toBe(405);
    expect(search.headers.allow).toBe('POST');
    expect(search.body.type).toBe(problemType('method-not-allowed'));
    const options = await stack.inject({ method: 'OPTIONS', url: '/v1/social/accounts/search' });
    expect(options.statusCode).toBe(405);
    expect(options.headers.allow).toBe('POST');
    const wrong = await stack.inject({ method: 'DELETE', url: `/v1/social/posts/${postId}` });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('GET, HEAD');
    expect(wrong.body).toMatchObject({ type: problemType('method-not-allowed'), status: 405 });
    const intake = await stack.inject({ method: 'GET', url: '/internal/v1/social/observations' });
    expect(intake.statusCode).toBe(405);
    expect(intake.headers.allow).toBe('POST');
    expect((await stack.inject({ method: 'DELETE', url: '/v1/social/nothing-here' })).statusCode).toBe(404);
  });

  it('answers every POST-only path asked with GET or HEAD 405 (Allow: POST), not a read of a record of that name', async () => {
    const postOnly = [
      '/v1/social/posts/search',
      '/v1/social/posts/lookup',
      '/v1/social/posts/facets',
      '/v1/social/posts/counts',
      '/v1/social/accounts/search',
      '/v1/social/accounts/lookup',
      '/v1/social/accounts/facets',
    ];
    for (const path of postOnly) {
      for (const method of ['GET', 'HEAD'] as const) {
        // With a key or without: the method is wrong before any key is looked at.
        for (const headers of [{ authorization: `Bearer ${stack.key}` }, {}]) {
          const response = await stack.inject({ method, url: path, headers });
          expect([path, method, response.statusCode, response.headers.allow]).toEqual([path, method, 405, 'POST']);
        }
      }
      const body = (await stack.get(path)).body;
      expect(body).toMatchObject({ type: problemType('method-not-allowed'), status: 405 });
      expect(body.detail).toBe(`${path} answers POST, not GET.`);
    }
    // The router decodes the path: a percent-encoded name is the same path.
    expect((await stack.get('/v1/social/posts/%66acets')).statusCode).toBe(405);
    // Only the path itself: the history of a post called "facets" is a read (nothing tracked: 404).
    expect((await stack.get('/v1/social/posts/facets/history')).statusCode).toBe(404);
    expect((await stack.get(`/v1/social/posts/${postId}`)).statusCode).toBe(200);
  });

  it('puts a request id header on every response, unique per request', async () => {
    const a = await stack.get('/healthz', null);
    const b = await stack.get(`/v1/social/posts/${postId}`);
    expect(a.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
    expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id']);
  });
});

describe('delivery routes (spec 2.6, contract §4)', () => {
  it('redirects a signed media URL to its source with cache headers and no bearer key', async () => {
    const post = (await stack.get(`/v1/social/posts/${postId}`)).body;
    const mediaUrl = new URL(post.media[0].media_url);
    expect(mediaUrl.origin).toBe('https://api.example.test');
    const response = await stack.get(mediaUrl.pathname + mediaUrl.search, null);
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('https://cdn.social.example/media/http-p1-m1.mp4');
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(Number(/max-age=(\d+)/.exec(String(response.headers['cache-control']))![1])).toBeGreaterThan(0);

    const avatar = new URL(post.author.avatar_url);
    const avatarResponse = await stack.get(avatar.pathname + avatar.search, null);
    expect(avatarResponse.statusCode).toBe(302);
    expect(avatarResponse.headers.location).toBe('https://cdn.social.example/avatars/http-a1.jpg');
  });

  it('answers 403 invalid-signature for a tampered URL and 410 expired-url for an expired one', async () => {
    const post = (await stack.get(`/v1/social/posts/${postId}`)).body;
    const url = new URL(post.media[0].media_url);
    const tampered = new URL(url);
    tampered.searchParams.set('src', Buffer.from('https://evil.example/x').toString('base64url'));
    for (const bad of [
      tampered,
      new URL(url.href.replace('/media/', '/thumbnail/')),
      new URL(url.href.replace(/sig=[^&]+/, 'sig=AAAA')),
    ]) {
      const response = await stack.get(bad.pathname + bad.search, null);
      expect(response.statusCode, bad.href).toBe(403);
      expect(response.body.type).toBe(problemType('invalid-signature'));
    }
    const past = createMediaUrlSigner({
      baseUrl: 'https://api.example.test',
      secret: stack.config.SIGNING_SECRET,
      ttlSeconds: 60,
      now: () => Date.now() - 3 * 3600_000,
    });
    const expired = new URL(past.sign('media', 'social_media_x', 'https://cdn.social.example/old.jpg'));
    const response = await stack.get(expired.pathname + expired.search, null);
    expect(response.statusCode).toBe(410);
    expect(response.body.type).toBe(problemType('expired-url'));
  });
});

describe('logs', () => {
  it('carry the request id and never a credential: API key, delivery signature, invitation code', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = pino(loggerOptions({ LOG_LEVEL: 'trace' }), sink);
    const { config, connections, engine, embedder } = stack.runtime;
    const api = createApi(config, connections, { engine, embedder, logger });
    const { app } = api;
    await app.ready();
    const response = await app.inject({
      method: 'GET',
      url: `/v1/social/posts/${postId}`,
      headers: { authorization: `Bearer ${stack.key}` },
    });
    await app.inject({
      method: 'GET',
      url: `/v1/social/posts/${postId}`,
      headers: { authorization: `Bearer "${stack.key}"` },
    });
    const delivered = await app.inject({
      method: 'GET',
      url: '/v1/social/delivery/media/x?src=aHR0cHM6Ly9leGFtcGxlLmNvbS9h&exp=4102444800&sig=SIGNATURE0secret',
      headers: {},
    });
    expect(delivered.statusCode).toBe(403);
    await app.inject({ method: 'GET', url: '/dashboard/sign-up?invitation=inv_CODE0secret' });
    await api.close();
    const all = lines.join('');
    expect(all).toContain(response.headers['x-request-id'] as string);
    expect(all).not.toContain(parseKey(stack.key)!.secret);
    expect(all).toContain('sig=[redacted]');
    expect(all).not.toContain('SIGNATURE0secret');
    expect(all).toContain('invitation=[redacted]');
    expect(all).not.toContain('inv_CODE0secret');
  });
});
