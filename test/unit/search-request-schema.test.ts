import { randomInt } from 'node:crypto';
import Fastify from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mintId } from '../../src/contract/ids.ts';
import { formatIssues, toPointer } from '../../src/contract/observations.ts';
import { zodValidatorCompiler } from '../../src/http/validation.ts';
import { ValidationFailedError } from '../../src/internal/errors.ts';
import { postCountsRequestSchema } from '../../src/query/counts-request.ts';
import { createCursorCodec } from '../../src/query/cursor-codec.ts';
import { postFacetsRequestSchema } from '../../src/query/facet-request.ts';
import { FILTER_FIELDS, operatorsOf, sortFields, type FilterScope, type SortScope } from '../../src/query/fields.ts';
import { parseFilters, walkFilters } from '../../src/query/parse-filters.ts';
import { MAX_CURSOR_LENGTH, MAX_SEARCH_JSON_LENGTH, type PostSearch } from '../../src/query/search-codec.ts';
import {
  LIMITS,
  MAX_QUERY_LENGTH,
  accountSearchRequestSchema,
  parseAccountSearchRequest,
  parsePostSearchRequest,
  postSearchRequestSchema,
  type SearchRequest,
} from '../../src/query/search-request.ts';

/** The detail of the ValidationFailedError thrown by `run`. */
function detailOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailedError);
    return (error as ValidationFailedError).detail;
  }
  throw new Error('expected a ValidationFailedError');
}

type Json = { [key: string]: unknown };

const jsonSchemaOf = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;

/** `node`, or the definition its `$ref` points to. */
function resolve(root: Json, node: unknown): Json {
  const json = node as Json;
  const ref = json.$ref;
  if (typeof ref !== 'string') return json;
  const name = ref.replace('#/$defs/', '');
  return (root.$defs as Json)[name] as Json;
}

/** The resolved property `key` of `node`. */
const prop = (root: Json, node: Json, key: string) => resolve(root, (resolve(root, node).properties as Json)[key]);

/** Checks a filters object (and, once, its nested ones) against the registry of `scope`. */
function expectFilters(root: Json, node: Json, scope: FilterScope, nested = true): void {
  const fields = Object.values(FILTER_FIELDS[scope]);
  const filters = resolve(root, node);
  expect(Object.keys(filters.properties as Json)).toEqual([...fields.map((f) => f.name), 'any_of', 'all_of', 'not']);
  expect(filters.additionalProperties).toEqual({ not: {} });
  for (const field of fields) {
    const operators = prop(root, filters, field.name);
    expect(Object.keys(operators.properties as Json), `${scope}.${field.name}`).toEqual(operatorsOf(field));
    expect(operators.additionalProperties).toEqual({ not: {} });
  }
  for (const key of ['any_of', 'all_of']) {
    const branches = prop(root, filters, key);
    expect(branches).toMatchObject({ type: 'array', minItems: 1, maxItems: 20 });
    if (nested) expectFilters(root, branches.items as Json, scope, false);
  }
  if (nested) expectFilters(root, prop(root, filters, 'not'), scope, false);
}

function expectEnvelope(root: Json, scope: SortScope): void {
  // Both take the opt-in `include` (match evidence; on account search, with similar_to).
  expect(Object.keys(root.properties as Json)).toEqual([scope, 'sort', 'limit', 'cursor', 'include']);
  expect(root.additionalProperties).toEqual({ not: {} });
  const sort = prop(root, root, 'sort');
  expect(prop(root, sort, 'by').enum).toEqual(sortFields(scope).map((f) => f.name));
  expect(prop(root, sort, 'order').enum).toEqual(['asc', 'desc']);
  expect(sort.required).toEqual(['by']);
  expect(prop(root, root, 'limit')).toMatchObject({ type: 'integer', minimum: LIMITS.min, maximum: LIMITS.max });
  expect(prop(root, root, 'cursor')).toMatchObject({ type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH });
  const query = prop(root, prop(root, root, scope), 'query');
  expect(query.anyOf).toEqual([{ type: 'string', maxLength: MAX_QUERY_LENGTH }, { type: 'null' }]);
}

describe('the JSON Schema of the request schemas', () => {
  it('is generated without giving up on any part', () => {
    expect(() => z.toJSONSchema(postSearchRequestSchema, { io: 'input' })).not.toThrow();
    expect(() => z.toJSONSchema(accountSearchRequestSchema, { io: 'input' })).not.toThrow();
  });

  it('shows search posts: the envelope, the post and author filters with their operators, the sort enum', () => {
    const root = jsonSchemaOf(postSearchRequestSchema);
    expectEnvelope(root, 'post');
    expect(prop(root, root, 'include')).toMatchObject({ type: 'array', items: { enum: ['matches'] } });
    const post = prop(root, root, 'post');
    expect(Object.keys(post.properties as Json)).toEqual(['query', 'filters', 'author', 'similar_to']);
    expectFilters(root, prop(root, post, 'filters'), 'post');
    expectFilters(root, prop(root, prop(root, post, 'author'), 'filters'), 'author');
  });

  it('shows search accounts: the account filters and the publishing scope', () => {
    const root = jsonSchemaOf(accountSearchRequestSchema);
    expectEnvelope(root, 'account');
    const account = prop(root, root, 'account');
    expect(Object.keys(account.properties as Json)).toEqual(['query', 'filters', 'posts', 'similar_to']);
    expectFilters(root, prop(root, account, 'filters'), 'account');
    const posts = prop(root, account, 'posts');
    expect(prop(root, posts, 'minimum_matching_posts').anyOf).toEqual([
      { type: 'integer', minimum: 1, maximum: 3 },
      { type: 'null' },
    ]);
    expectFilters(root, prop(root, posts, 'filters'), 'post');
  });
});

describe('the output of the request schemas', () => {
  const filters = {
    views: { exists: true, gte: 10, lte: 20 },
    any_of: [{ comments: { gte: 10 }, format: { eq: 'reel' } }, { hashtags: { contains_any: ['#Food'] } }],
    posted_at: { lt: '2026-02-01T12:30:00.0001Z' },
  };

  it('is the walker AST, in the client order, with post and author filters ANDed', () => {
    const request = parsePostSearchRequest({ post: { filters, author: { filters: { handle: { eq: '@Anna' } } } } });
    expect(request).toEqual({
      kind: 'initial',
      limit: LIMITS.default,
      search: {
        query: null,
        sort: null,
        filter: {
          kind: 'and',
          children: [
            parseFilters(filters, 'post', '/post/filters'),
            { kind: 'term', field: 'author.handle', value: 'anna' },
          ],
        },
      },
    });
  });

  it('trims the query, takes a blank one as none, and keeps sort and limit', () => {
    expect(parsePostSearchRequest({ post: { query: '  kite  festival ' }, limit: 5 })).toEqual({
      kind: 'initial',
      limit: 5,
      search: { query: 'kite  festival', filter: { kind: 'and', children: [] }, sort: null },
    });
    const blank = parsePostSearchRequest({
      post: { query: '   ', filters: { likes: { gte: 1 } } },
      sort: { by: 'likes' },
    });
    expect(blank).toMatchObject({ search: { query: null, sort: { field: 'post.likes', order: 'desc' } } });
  });

  it('normalizes account searches and continuations', () => {
    expect(parseAccountSearchRequest({ account: { posts: { minimum_matching_posts: null } } })).toEqual({
      kind: 'initial',
      limit: 20,
      search: {
        query: null,
        filter: { kind: 'and', children: [] },
        posts: { minimum: 1, filter: { kind: 'and', children: [] } },
        sort: null,
      },
    });
    expect(parseAccountSearchRequest({ cursor: 'c' })).toEqual({ kind: 'continuation', cursor: 'c', limit: null });
    expect(parsePostSearchRequest({ cursor: 'c', limit: 7 })).toEqual({ kind: 'continuation', cursor: 'c', limit: 7 });
  });
});

describe('the structure and the walker give the same details', () => {
  const single: unknown[] = [
    { viewz: { gte: 1 } },
    { audio: { eq: 'x' } },
    { or: [] },
    { zzz: { eq: 'x' } },
    { followers_count: { gte: 1 } },
    { author: {} },
    { format: { gte: 'a' } },
    { views: { contains_any: ['1'] } },
    { format: { equals: 'reel' } },
    { views: { gte: '1000' } },
    { views: { gte: 1.5 } },
    { comments_enabled: { eq: 'true' } },
    { format: { in: 'reel' } },
    { topics: { contains_any: ['a', 7] } },
    { media_types: { contains_any: ['gif'] } },
    { format: { in: [] } },
    { format: { eq: 'x'.repeat(201) } },
    { hashtags: { contains_any: ['#'] } },
    { format: { in: ['reel', 'reel'] } },
    { hashtags: { contains_all: ['#Food', 'food'] } },
    { posted_at: { gte: '2026-02-30T00:00:00Z' } },
    { posted_at: { lt: '2026-01-31T12:00:00+02:00' } },
    { views: {} },
    { format: 'reel' },
    { views: [1] },
    { any_of: { views: { gte: 1 } } },
    { all_of: [] },
    { any_of: Array.from({ length: 21 }, () => ({ likes: { gte: 1 } })) },
    { any_of: [{}, 'x'] },
    { not: [{}] },
    { not: {} },
    [],
    null,
    'x',
    { not: { not: { not: { not: { not: { views: { gte: 1 } } } } } } },
  ];
  const locations: Array<[FilterScope, string, (filters: unknown) => unknown]> = [
    ['post', '/post/filters', (filters) => parsePostSearchRequest({ post: { filters } })],
    ['author', '/post/author/filters', (filters) => parsePostSearchRequest({ post: { author: { filters } } })],
    ['account', '/account/filters', (filters) => parseAccountSearchRequest({ account: { filters } })],
    ['post', '/account/posts/filters', (filters) => parseAccountSearchRequest({ account: { posts: { filters } } })],
  ];

  it.each(locations)('in %s filters at %s', (scope, pointer, parse) => {
    const fields = Object.values(FILTER_FIELDS[scope]);
    const operators = fields.flatMap((field) =>
      ['gt', 'eq', 'contains_any', 'exists', 'bogus'].map((op) => ({ [field.name]: { [op]: 1 } })),
    );
    for (const filters of [
      ...single,
      ...operators,
      { is_private: { eq: true } },
      { posts: {} },
      { views: { gte: 1 } },
    ]) {
      let walker: string | undefined;
      try {
        parseFilters(filters, scope, pointer);
      } catch (error) {
        walker = (error as ValidationFailedError).detail;
      }
      if (walker === undefined) expect(() => parse(filters), JSON.stringify(filters)).not.toThrow();
      else
        expect(
          detailOf(() => parse(filters)),
          JSON.stringify(filters),
        ).toBe(walker);
    }
  });

  it('finds the same problems when there are several, listing the structure first', () => {
    const filters = {
      viewz: {},
      views: { gte: 'x', lt: 'y' },
      format: { in: [] },
      likes: {},
      comments: { eq: 1 },
      topics: 1,
      media_count: { gt: 0.5 },
    };
    const result = postSearchRequestSchema.safeParse({ post: { filters } });
    expect(result.success).toBe(false);
    const pairs = (result.error?.issues ?? []).map((issue) => `${toPointer(issue.path)}: ${issue.message}`);
    const walked = walkFilters(filters, 'post', '/post/filters').issues.map(
      (issue) => `/post/filters${toPointer(issue.path)}: ${issue.message}`,
    );
    expect([...pairs].sort()).toEqual([...walked].sort());
    expect(pairs.at(-1)).toBe('/post/filters/viewz: unknown field; did you mean views?');
  });

  it('refuses nesting far beyond the limit without following it down', () => {
    let filters: unknown = { views: { gte: 1 } };
    for (let i = 0; i < 100_000; i++) filters = { not: filters };
    expect(detailOf(() => parsePostSearchRequest({ post: { filters } }))).toBe(
      '/post/filters/not/not/not/not/not: nesting too deep; any_of, all_of and not nest at most 4 levels',
    );
  });
});

describe("through a route (the app's zod validator compiler)", () => {
  const app = Fastify().withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler((error, _request, reply) =>
    reply.code(422).send({ detail: (error as ValidationFailedError).detail }),
  );
  app.post('/posts', { schema: { body: postSearchRequestSchema } }, async (request) => {
    const body:
      | { kind: 'initial'; search: PostSearch; limit: number }
      | { kind: 'continuation'; cursor: string; limit: number | null } = request.body;
    return body;
  });
  const detail = async (payload: unknown) =>
    (await app.inject({ method: 'POST', url: '/posts', payload: payload as object })).json().detail;

  it('answers the same pointer and reason pairs as the parse helper', async () => {
    const bodies = [
      { post: { filters: { viewz: { gte: 1 } } } },
      { post: { filters: { any_of: [{}, 'x'], topics: { contains_any: ['a', 7] } } } },
      { post: { query: 'x' }, sort: { by: 'views' } },
      { post: { filters: { views: { gte: 1 } } }, sort: { by: 'views', direction: 'asc' } },
      { cursor: 'c', post: { query: 'x' } },
      { post: {} },
      { foo: 1 },
      [],
      { post: { filters: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`x${i}`, {}])) } },
      // Keys holding "/" or "~" are escaped in the pointer (RFC 6901).
      { post: { filters: { 'a/b~c': { eq: 1 } } } },
    ];
    for (const body of bodies)
      expect(await detail(body), JSON.stringify(body)).toBe(detailOf(() => parsePostSearchRequest(body)));
  });

  it('hands the handler the normalized request', async () => {
    const response = await app.inject({ method: 'POST', url: '/posts', payload: { post: { query: ' x ' } } });
    expect(response.json()).toEqual({
      kind: 'initial',
      limit: 20,
      search: { query: 'x', filter: { kind: 'and', children: [] }, sort: null },
    });
  });
});

describe('cursor sizes: what a first request produces, its continuation accepts', () => {
  const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const base64url = (length: number) => Array.from({ length }, () => BASE64URL[randomInt(64)]).join('');
  // Random code points of U+0080..U+07FF (two UTF-8 bytes each) make the longest cursors per byte
  // of search: deflate cannot shrink them, and they expand it the most (measured: ×1.26 of the
  // search JSON, against ×1.25 for random printable ASCII and ×1.17 for base64url).
  const incompressible = (length: number) =>
    String.fromCodePoint(...Array.from({ length }, () => 0x80 + randomInt(0x780)));

  function initial<S>(request: SearchRequest<S>): Extract<SearchRequest<S>, { kind: 'initial' }> {
    if (request.kind !== 'initial') throw new Error('expected an initial request');
    return request;
  }

  /** An initial request whose normalized search is exactly `bytes` of JSON: random filter values, tuned by the query. */
  function requestOf(bytes: number) {
    const lists: Record<string, string[]> = { id: [], shortcode: [], audio_id: [], audio_type: [] };
    let estimate = 0;
    for (const values of Object.values(lists)) {
      while (values.length < 500 && estimate < bytes - 1500) {
        values.push(incompressible(200));
        estimate += 403;
      }
    }
    const filters = Object.fromEntries(
      Object.entries(lists)
        .filter(([, v]) => v.length > 0)
        .map(([name, v]) => [name, { in: v }]),
    );
    const measured = Buffer.byteLength(JSON.stringify(initial(parsePostSearchRequest({ post: { filters } })).search));
    // "query": null becomes "query": "…": the query adds its length less 2.
    const length = bytes - measured + 2;
    expect(length).toBeGreaterThan(0);
    expect(length).toBeLessThanOrEqual(MAX_QUERY_LENGTH);
    return { post: { query: base64url(length), filters } };
  }

  /** A realistic engine position: 1,500 characters of JSON, mostly random. */
  function state() {
    const shape = {
      kind: 'fused',
      snapshot: '',
      shared: false,
      mode: 'hybrid',
      vector: base64url(520),
      offset: null,
      after: [0.8125, 'post_x'],
    };
    return { ...shape, snapshot: base64url(1500 - JSON.stringify(shape).length) };
  }

  it('keeps the arithmetic of MAX_SEARCH_JSON_LENGTH', () => {
    const deflated = Math.ceil(((MAX_SEARCH_JSON_LENGTH + 2000) * 260) / 255) + 5;
    expect(Math.ceil((deflated * 4) / 3) + 1 + 43).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    expect(Math.ceil(((MAX_SEARCH_JSON_LENGTH + 2000) * 4) / 3) + 100).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    // A continuation body with the longest cursor fits the routes' 1 MiB body limit (src/http/app.ts).
    expect(Buffer.byteLength(JSON.stringify({ cursor: 'x'.repeat(MAX_CURSOR_LENGTH), limit: 100 }))).toBeLessThan(
      1024 * 1024,
    );
  });

  it('takes a search of MAX_SEARCH_JSON_LENGTH bytes, whose cursor fits, and refuses one byte more', () => {
    const body = requestOf(MAX_SEARCH_JSON_LENGTH);
    const request = initial(parsePostSearchRequest(body));
    expect(Buffer.byteLength(JSON.stringify(request.search))).toBe(MAX_SEARCH_JSON_LENGTH);
    expect(JSON.stringify(state())).toHaveLength(1500);

    const codec = createCursorCodec({ secret: 'unit-test-signing-secret-0123456789abcdef', ttlSeconds: 3600 });
    const cursor = codec.encode({ v: 2, op: 'post', search: request.search, limit: request.limit, state: state() });
    expect(cursor.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    expect(parsePostSearchRequest({ cursor, limit: request.limit })).toEqual({
      kind: 'continuation',
      cursor,
      limit: request.limit,
    });

    const over = { post: { ...body.post, query: `${body.post.query}x` } };
    expect(detailOf(() => parsePostSearchRequest(over))).toBe(
      `/post/filters: the filters are too large: the normalized search takes ${MAX_SEARCH_JSON_LENGTH + 1} bytes of JSON, and at most ${MAX_SEARCH_JSON_LENGTH} fit in a continuation cursor; send fewer or shorter values`,
    );
  });

  it('points at the larger filters object of an account search', () => {
    const values = Array.from({ length: 500 }, () => incompressible(200));
    const posts = { filters: { id: { in: values }, shortcode: { in: values.map((v) => `${v.slice(1)}a`) } } };
    const account = {
      filters: { id: { in: values.slice(0, 400) }, handle: { in: values.slice(0, 400).map((v) => `a${v.slice(1)}`) } },
    };
    expect(detailOf(() => parseAccountSearchRequest({ account: { ...account, posts } }))).toMatch(
      /^\/account\/posts\/filters: the filters are too large/,
    );
  });

  it(`takes continuation cursors of 1 to ${MAX_CURSOR_LENGTH} characters`, () => {
    const longest = 'x'.repeat(MAX_CURSOR_LENGTH);
    expect(postSearchRequestSchema.parse({ cursor: longest })).toEqual({
      kind: 'continuation',
      cursor: longest,
      limit: null,
    });
    expect(accountSearchRequestSchema.parse({ cursor: longest, limit: 3 })).toEqual({
      kind: 'continuation',
      cursor: longest,
      limit: 3,
    });
    for (const cursor of [`${longest}x`, '', 7]) {
      expect(detailOf(() => parsePostSearchRequest({ cursor }))).toBe(
        '/cursor: expected a cursor string from a previous response',
      );
      expect(detailOf(() => parseAccountSearchRequest({ cursor }))).toBe(
        '/cursor: expected a cursor string from a previous response',
      );
    }
  });
});

describe('similar_to, parsed where the request is', () => {
  it('becomes an ID or an alias (a handle without its @), which cursors and references take as they are', () => {
    const id = mintId('post', 'ref-1');
    const posts = parsePostSearchRequest({ post: { similar_to: ` ${id} ` } });
    expect(posts.kind === 'initial' && posts.search.similarTo).toEqual({ kind: 'id', id });
    const byShortcode = parsePostSearchRequest({ post: { similar_to: 'SClk-1' } });
    expect(byShortcode.kind === 'initial' && byShortcode.search.similarTo).toEqual({ kind: 'alias', alias: 'SClk-1' });
    const accounts = parseAccountSearchRequest({ account: { similar_to: '@Glow.Ref' } });
    expect(accounts.kind === 'initial' && accounts.search.similarTo).toEqual({ kind: 'alias', alias: 'Glow.Ref' });
  });

  it('refuses a value that can be neither, as it refuses an unknown one, in searches, facets and counts alike', () => {
    const unknown = '/post/similar_to: no tracked post has this ID or shortcode, or it is currently unavailable';
    expect(detailOf(() => parsePostSearchRequest({ post: { similar_to: 'not a shortcode!' } }))).toBe(unknown);
    const facets = postFacetsRequestSchema.safeParse({
      post: { similar_to: 'not a shortcode!' },
      facets: [{ field: 'format' }],
    });
    expect(facets.error && formatIssues(facets.error.issues)).toBe(unknown);
    const counts = postCountsRequestSchema.safeParse({ post: { similar_to: 'SClk-1', query: 'x' }, interval: 'day' });
    expect(counts.error && formatIssues(counts.error.issues)).toBe(
      '/post/similar_to: "post.similar_to" orders results by similarity to the reference; it cannot be combined with "post.query"',
    );
  });
});
