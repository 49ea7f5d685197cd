import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { PROBLEM_CATALOG } from '../../src/internal/problem-catalog.ts';
import { accountObs, at, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/** What an integrator and an operator find besides the four operations (issue "The API as a product"). */

const METRICS_TOKEN = 'scrape-token-0123456789';
let stack: Stack;
let bare: Stack;
beforeAll(async () => {
  [stack, bare] = await Promise.all([
    startStack('api-product', {
      CORS_ORIGINS: 'https://app.example.test',
      TRUSTED_PROXIES: '127.0.0.1/32',
      METRICS_TOKEN: METRICS_TOKEN,
    }),
    startStack('api-product-bare'),
  ]);
  const response = await stack.ingest([
    accountObs({ platform_id: 'ap-a', handle: 'ap.author' }),
    postObs('ap-a', {
      platform_id: 'ap-p',
      shortcode: 'ApPost01',
      caption: 'Morning skincare routine with a discount code',
    }),
  ]);
  expect(response.statusCode).toBe(200);
});
afterAll(async () => Promise.all([stack?.close(), bare?.close()]));

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with the four operations, the histories, the facets, the lookups, typeahead, the dictionaries, the alerts, the intake and delivery, each problem status named', async () => {
    const response = await stack.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: 'https://api.example.test' }]);
    const operations = Object.values(
      doc.paths as Record<
        string,
        Record<string, { operationId: string; responses: Record<string, { description: string }>; security: unknown[] }>
      >,
    ).flatMap((path) => Object.values(path));
    expect(operations.map((o) => o.operationId).sort()).toEqual([
      'accountFacets',
      'countPosts',
      'createSavedSearch',
      'createWebhookEndpoint',
      'deleteSavedSearch',
      'deleteWebhookEndpoint',
      'deliver',
      'enableWebhookEndpoint',
      'getAccount',
      'getAccountHistory',
      'getPost',
      'getPostHistory',
      'getSavedSearch',
      'getTaxonomy',
      'getWebhookEndpoint',
      'ingestObservations',
      'listSavedSearchMatches',
      'listSavedSearches',
      'listWebhookDeliveries',
      'listWebhookEndpoints',
      'lookupAccounts',
      'lookupPosts',
      'postFacets',
      'rotateWebhookSecret',
      'searchAccounts',
      'searchPosts',
      'sendWebhookTest',
      'suggest',
    ]);
    // A lookup names its resources in the body: what it cannot find is listed, never a 404.
    const lookup = doc.paths['/v1/social/accounts/lookup'].post;
    expect(Object.keys(lookup.responses)).not.toContain('404');
    expect(lookup.responses['429'].description).toContain('`rate-limit-exceeded`');
    expect(doc.paths['/v1/social/taxonomies/{name}'].get.parameters[0].schema.enum).toEqual([
      'niches',
      'topics',
      'languages',
      'countries',
      'formats',
      'offer_types',
    ]);
    // Post counts (additive): a read sent as a POST, revalidated like the GETs.
    const counts = doc.paths['/v1/social/posts/counts'].post as unknown as {
      parameters: Array<{ name: string; in: string }>;
      responses: Record<string, unknown>;
    };
    expect(counts.parameters.map((p) => `${p.in}:${p.name}`)).toContain('header:if-none-match');
    expect(Object.keys(counts.responses)).toEqual(expect.arrayContaining(['200', '304', '422', '429']));
    // Alert resources (additive): the saved search's `post` is the post search's own scope.
    expect(doc.paths['/v1/social/saved-searches/{id}'].get.responses['404'].description).toContain(
      '`resource-not-found`',
    );
    expect(doc.paths['/v1/social/saved-searches'].post.responses['409'].description).toContain('`limit-reached`');
    const search = doc.paths['/v1/social/posts/search'].post;
    expect(search.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Each problem status says which problems it carries, in the problem shape.
    expect(search.responses['422'].description).toContain('`validation-failed`');
    expect(search.responses['410'].description).toContain('`expired-cursor`');
    expect(search.responses['429'].content['application/problem+json'].schema).toEqual({
      $ref: '#/components/schemas/Problem',
    });
    expect(doc.paths['/v1/social/posts/{id}'].get.responses['404'].description).toContain('`not-tracked`');
    // The delivery route takes no key.
    expect(doc.paths['/v1/social/delivery/{kind}/{id}'].get.security).toEqual([]);
    // The intake documents both body forms, each line or item one of the four observation kinds.
    const intake = doc.paths['/internal/v1/social/observations'].post.requestBody.content;
    expect(Object.keys(intake).sort()).toEqual(['application/json', 'application/x-ndjson']);
    expect(intake['application/json'].schema.items.oneOf).toHaveLength(4);
    for (const ref of intake['application/json'].schema.items.oneOf) {
      expect(doc.components.schemas[ref.$ref.split('/').at(-1)]).toBeDefined();
    }
    // Examples to start from: search bodies and the forms an ID may take.
    expect(Object.keys(search.requestBody.content['application/json'].examples).length).toBeGreaterThanOrEqual(2);
    const idParam = doc.paths['/v1/social/accounts/{id}'].get.parameters.find((p: { name: string }) => p.name === 'id');
    expect(Object.values(idParam.examples).map((e) => (e as { value: string }).value)).toContain('@glowwithmaya');
    // Every $ref resolves inside the document.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.filter((name) => !doc.components.schemas[name])).toEqual([]);
  });

  it('has a browsable reference at /docs whose assets are served here, not from a CDN', async () => {
    const page = await stack.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    const html = String(page.body);
    expect(html).not.toMatch(/(src|href)="https?:\/\//);
    const script = /src="\.\/([^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await stack.inject({ method: 'GET', url: `/docs/${script}` });
    expect(asset.statusCode).toBe(200);
    expect(String(asset.headers['content-type'])).toContain('javascript');
  });
});

describe('problem pages', () => {
  it('the type URL of a real problem answers a page for people and JSON for programs', async () => {
    const unauthorized = await stack.get('/v1/social/posts/anything', null);
    expect(unauthorized.statusCode).toBe(401);
    const path = new URL(unauthorized.body.type).pathname;
    expect(path).toBe('/problems/authentication-required');

    const html = await stack.inject({ method: 'GET', url: path, headers: { accept: 'text/html,*/*' } });
    expect(html.statusCode).toBe(200);
    expect(String(html.headers['content-type'])).toContain('text/html');
    expect(String(html.body)).toContain('authentication-required');

    const json = await stack.inject({ method: 'GET', url: path, headers: { accept: 'application/json' } });
    expect(json.body).toMatchObject({ name: 'authentication-required', status: 401, retryable: false });

    const unknown = await stack.inject({ method: 'GET', url: '/problems/no-such-problem' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body.type).toMatch(/\/problems\/not-found$/);
  });

  it('every problem of the catalog has its page', async () => {
    for (const entry of PROBLEM_CATALOG) {
      const page = await stack.inject({
        method: 'GET',
        url: `/problems/${entry.name}`,
        headers: { accept: 'application/json' },
      });
      expect(page.body, entry.name).toMatchObject({ name: entry.name, status: entry.status });
    }
  });
});

describe('conditional GETs', () => {
  it('a strong ETag on get post and get account, 304 while it matches, a new one once the record changes', async () => {
    for (const path of [
      `/v1/social/posts/${mintId('post', 'ap-p')}`,
      `/v1/social/accounts/${mintId('account', 'ap-a')}`,
    ]) {
      const first = await stack.get(path);
      expect(first.statusCode).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
      expect(first.headers['cache-control']).toBe('private, no-cache');

      const again = await stack.inject({
        method: 'GET',
        url: path,
        headers: { authorization: `Bearer ${stack.key}`, 'if-none-match': `"other", ${etag}` },
      });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);

      const stale = await stack.inject({
        method: 'GET',
        url: path,
        headers: { authorization: `Bearer ${stack.key}`, 'if-none-match': '"other"' },
      });
      expect(stale.statusCode).toBe(200);
    }
    const path = `/v1/social/posts/${mintId('post', 'ap-p')}`;
    const before = (await stack.get(path)).headers.etag;
    expect(
      (
        await stack.ingest([
          postObs('ap-a', { platform_id: 'ap-p', shortcode: 'ApPost01', observed_at: at(10), views: 123_456 }),
        ])
      ).statusCode,
    ).toBe(200);
    const after = await stack.inject({
      method: 'GET',
      url: path,
      headers: { authorization: `Bearer ${stack.key}`, 'if-none-match': before as string },
    });
    expect(after.statusCode).toBe(200);
    expect(after.body.views).toBe(123_456);
    expect(after.headers.etag).not.toBe(before);
  });

  it('gives a compressed body its own strong ETag, and revalidates either form', async () => {
    const path = `/v1/social/posts/${mintId('post', 'ap-p')}`;
    const get = (headers: Record<string, string>) =>
      stack.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${stack.key}`, ...headers } });
    const identity = await get({});
    const gzip = await get({ 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    const tag = identity.headers.etag as string;
    expect(gzip.headers.etag).toBe(`${tag.slice(0, -1)}-gzip"`);
    expect((await get({ 'accept-encoding': 'br' })).headers.etag).toBe(`${tag.slice(0, -1)}-br"`);

    const revalidated = await get({ 'accept-encoding': 'gzip', 'if-none-match': gzip.headers.etag as string });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.headers.etag).toBe(gzip.headers.etag);
    expect((await get({ 'if-none-match': gzip.headers.etag as string })).statusCode).toBe(304);
    expect(
      (await get({ 'accept-encoding': 'gzip', 'if-none-match': '"otherotherotherotherotherother12-gzip"' })).statusCode,
    ).toBe(200);
  });
});

describe('compression', () => {
  it('compresses a search page when the client accepts it, to the same JSON', async () => {
    const request = (encoding?: string) =>
      stack.app.inject({
        method: 'POST',
        url: '/v1/social/posts/search',
        headers: {
          authorization: `Bearer ${stack.key}`,
          'content-type': 'application/json',
          ...(encoding ? { 'accept-encoding': encoding } : {}),
        },
        payload: JSON.stringify({ post: { query: 'skincare routine' }, limit: 20 }),
      });
    const plain = await request();
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await request('br, gzip');
    expect(br.headers['content-encoding']).toBe('br');
    const gzip = await request('gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    const data = (body: string) => JSON.parse(body).data;
    expect(data(brotliDecompressSync(br.rawPayload).toString())).toEqual(data(plain.body));
    expect(data(gunzipSync(gzip.rawPayload).toString())).toEqual(data(plain.body));
  });
});

describe('compressed request bodies', () => {
  it('takes a gzip body, limits it by what it decompresses to, and refuses an unknown coding with 415', async () => {
    const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
    const post = (encoding: string, payload: Buffer | string) =>
      stack.inject({
        method: 'POST',
        url: '/v1/social/posts/search',
        headers: { ...headers, 'content-encoding': encoding },
        payload,
      });
    expect((await post('gzip', gzipSync(JSON.stringify({ post: { query: 'skincare' }, limit: 3 })))).statusCode).toBe(
      200,
    );
    // A small bomb: under 10 KB on the wire, over the 1 MiB body limit once inflated.
    const bomb = gzipSync(`{"post":{"query":"${'a'.repeat(2 * 1024 * 1024)}"}}`);
    expect(bomb.length).toBeLessThan(10_000);
    const big = await post('gzip', bomb);
    expect(big.statusCode).toBe(413);
    expect(big.body.type).toMatch(/\/problems\/payload-too-large$/);
    const unknown = await post('snappy', 'x');
    expect(unknown.statusCode).toBe(415);
    expect(unknown.body.type).toMatch(/\/problems\/unsupported-media-type$/);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('CORS', () => {
  const preflight = (target: Stack, origin: string) =>
    target.app.inject({
      method: 'OPTIONS',
      url: '/v1/social/posts/search',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });

  it('is off by default: no CORS headers for any origin', async () => {
    const response = await preflight(bare, 'https://app.example.test');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the configured origins only', async () => {
    const allowed = await preflight(stack, 'https://app.example.test');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.test');
    expect(String(allowed.headers['access-control-allow-headers'])).toContain('authorization');
    const other = await preflight(stack, 'https://evil.example.test');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('X-Request-Id', () => {
  const get = (target: Stack, remoteAddress: string, id: string) =>
    target.app.inject({ method: 'GET', url: '/healthz', remoteAddress, headers: { 'x-request-id': id } });

  it('keeps a well-formed id from a trusted proxy, and mints one otherwise', async () => {
    expect((await get(stack, '127.0.0.1', 'lb-7f3a9c2e11')).headers['x-request-id']).toBe('lb-7f3a9c2e11');
    expect((await get(stack, '127.0.0.1', 'bad id\nwith newline')).headers['x-request-id']).toMatch(/^req_/);
    expect((await get(stack, '203.0.113.9', 'lb-7f3a9c2e11')).headers['x-request-id']).toMatch(/^req_/);
    expect((await get(bare, '127.0.0.1', 'lb-7f3a9c2e11')).headers['x-request-id']).toMatch(/^req_/);
  });
});

describe('metrics', () => {
  it('/metrics reports requests by route pattern and status, engine latency, queues and snapshots', async () => {
    const postPath = `/v1/social/posts/${mintId('post', 'ap-p')}`;
    await stack.get(postPath);
    await stack.get('/v1/social/posts/unknown-id');
    await stack.post('/v1/social/posts/search', { post: { filters: { format: { in: ['reel'] } } } });
    const response = await stack.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.statusCode).toBe(200);
    expect(String(response.headers['content-type'])).toContain('text/plain');
    const text = String(response.body);
    // The route pattern, never the raw URL with its ID.
    expect(text).toMatch(
      /http_request_duration_seconds_count\{route="\/v1\/social\/posts\/:id",method="GET",status="200"\} [1-9]/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_count\{route="\/v1\/social\/posts\/:id",method="GET",status="404"\} [1-9]/,
    );
    expect(text).not.toContain(mintId('post', 'ap-p'));
    expect(text).toMatch(/elasticsearch_request_duration_seconds_count\{outcome="200"\} [1-9]/);
    expect(text).toMatch(/queue_jobs\{queue="observations",state="failed"\} 0/);
    expect(text).toMatch(/search_snapshots_opened_total [1-9]/);
    expect(text).toContain('embedding_query_cache_hits_total');
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('needs the metrics token when one is set, and is open when none is', async () => {
    expect((await stack.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect(
      (
        await stack.inject({
          method: 'GET',
          url: '/metrics',
          headers: { authorization: 'Bearer wrong-token-0123456789' },
        })
      ).statusCode,
    ).toBe(401);
    expect((await bare.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  });
});

describe('requests refused before routing', () => {
  it('headers over the limit get a 431 problem object, not a bare error', async () => {
    await stack.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = stack.app.server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/v1/social/posts/x?pad=${'a'.repeat(20_000)}`);
    expect(response.status).toBe(431);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'https://api.example.test/problems/headers-too-large', status: 431 });
    expect(body.request_id).toMatch(/^req_/);
  });
});
