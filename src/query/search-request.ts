import { ValidationFailedError } from '../errors.ts';
import { and, isMatchAll, type FilterNode } from './ast.ts';
import { parseFilters } from './parse-filters.ts';
import { parseSort, type SortSpec } from './parse-sort.ts';

/** The most characters `post.query` / `account.query` may have (spec part 8). */
export const MAX_QUERY_LENGTH = 2000;
/** Default and bounds of `limit` (spec part 8). */
export const LIMITS = { default: 20, min: 1, max: 100 } as const;

/** A validated, normalized initial post search. */
export interface PostSearch {
  query: string | null;
  /** Post and author filters as one tree (both target posts). */
  filter: FilterNode;
  /** Only on filters-only requests; null means the documented default. */
  sort: SortSpec | null;
}

/** Either a first page or a continuation (spec 4.1 rules 1–4). */
export type SearchRequest<S> =
  | { kind: 'initial'; search: S; limit: number }
  | { kind: 'continuation'; cursor: string; limit: number | null };

type Json = Record<string, unknown>;

function fail(pointer: string, reason: string): never {
  throw new ValidationFailedError(`${pointer}: ${reason}`);
}

function object(value: unknown, pointer: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(pointer || '/', 'expected a JSON object');
  return value as Json;
}

function onlyKeys(value: Json, allowed: readonly string[], pointer: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) fail(`${pointer}/${key}`, `unknown field; expected ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
}

function parseLimit(value: unknown): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < LIMITS.min || value > LIMITS.max) {
    fail('/limit', `expected an integer from ${LIMITS.min} to ${LIMITS.max}`);
  }
  return value;
}

/** A query string, or null when absent or blank. */
function parseQuery(value: unknown, pointer: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(pointer, 'expected a string');
  if (value.length > MAX_QUERY_LENGTH) fail(pointer, `expected at most ${MAX_QUERY_LENGTH} characters, got ${value.length}`);
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed : null;
}

/** Splits off a continuation: only `cursor` and optionally `limit` (rule 4). */
function continuation(body: Json): SearchRequest<never> | null {
  if (!('cursor' in body)) return null;
  if (typeof body.cursor !== 'string' || body.cursor.length === 0 || body.cursor.length > 16_384) {
    fail('/cursor', 'expected a cursor string from a previous response');
  }
  for (const key of Object.keys(body)) {
    if (key !== 'cursor' && key !== 'limit') {
      fail(`/${key}`, 'a continuation sends only "cursor" and optionally "limit"; the cursor carries the rest of the request');
    }
  }
  return { kind: 'continuation', cursor: body.cursor, limit: parseLimit(body.limit) };
}

/** Parses a search posts body (spec 4.1). Throws ValidationFailedError (422) with a JSON pointer. */
export function parsePostSearchRequest(input: unknown): SearchRequest<PostSearch> {
  const body = object(input, '');
  const next = continuation(body);
  if (next) return next;
  onlyKeys(body, ['post', 'sort', 'limit', 'cursor'], '');
  if (body.post === undefined) fail('/post', 'required');
  const post = object(body.post, '/post');
  onlyKeys(post, ['query', 'filters', 'author'], '/post');
  const query = parseQuery(post.query, '/post/query');
  const postFilter = post.filters === undefined ? and([]) : parseFilters(post.filters, 'post', '/post/filters');
  let authorFilter: FilterNode = and([]);
  if (post.author !== undefined) {
    const author = object(post.author, '/post/author');
    onlyKeys(author, ['filters'], '/post/author');
    if (author.filters !== undefined) authorFilter = parseFilters(author.filters, 'author', '/post/author/filters');
  }
  if (query === null && isMatchAll(postFilter) && isMatchAll(authorFilter)) {
    fail('/post', 'an initial request needs a non-empty "query" or at least one filter');
  }
  if (body.sort !== undefined && query !== null) {
    fail('/sort', 'sort is allowed only on filters-only requests; with "post.query" results come in relevance order');
  }
  const sort = body.sort === undefined ? null : parseSort(body.sort, 'post', '/sort');
  return {
    kind: 'initial',
    search: { query, filter: and([postFilter, authorFilter].filter((f) => !isMatchAll(f))), sort },
    limit: parseLimit(body.limit) ?? LIMITS.default,
  };
}

/** The publishing scope of an account search (spec 4.2). */
export interface PostsScope {
  /** 1 to 3 distinct posts that must each satisfy the whole `filter`. */
  minimum: number;
  filter: FilterNode;
}

/** A validated, normalized initial account search. */
export interface AccountSearch {
  query: string | null;
  filter: FilterNode;
  posts: PostsScope | null;
  sort: SortSpec | null;
}

/** The provisional maximum of `minimum_matching_posts` (spec 8). */
export const MAX_MINIMUM_MATCHING_POSTS = 3;

/** Parses a search accounts body (spec 4.2). Throws ValidationFailedError (422) with a JSON pointer. */
export function parseAccountSearchRequest(input: unknown): SearchRequest<AccountSearch> {
  const body = object(input, '');
  const next = continuation(body);
  if (next) return next;
  onlyKeys(body, ['account', 'sort', 'limit', 'cursor'], '');
  if (body.account === undefined) fail('/account', 'required');
  const account = object(body.account, '/account');
  onlyKeys(account, ['query', 'filters', 'posts'], '/account');
  const query = parseQuery(account.query, '/account/query');
  const filter = account.filters === undefined ? and([]) : parseFilters(account.filters, 'account', '/account/filters');
  let posts: PostsScope | null = null;
  if (account.posts !== undefined) {
    const scope = object(account.posts, '/account/posts');
    onlyKeys(scope, ['minimum_matching_posts', 'filters'], '/account/posts');
    const minimum = scope.minimum_matching_posts ?? 1;
    if (typeof minimum !== 'number' || !Number.isInteger(minimum) || minimum < 1 || minimum > MAX_MINIMUM_MATCHING_POSTS) {
      fail('/account/posts/minimum_matching_posts', `expected an integer from 1 to ${MAX_MINIMUM_MATCHING_POSTS}`);
    }
    posts = {
      minimum,
      filter: scope.filters === undefined ? and([]) : parseFilters(scope.filters, 'post', '/account/posts/filters'),
    };
  }
  if (query === null && isMatchAll(filter) && posts === null) {
    fail('/account', 'an initial request needs a non-empty "query", "filters" or "posts" scope');
  }
  if (body.sort !== undefined && query !== null) {
    fail('/sort', 'sort is allowed only on filters-only requests; with "account.query" results come in relevance order');
  }
  const sort = body.sort === undefined ? null : parseSort(body.sort, 'account', '/sort');
  return { kind: 'initial', search: { query, filter, posts, sort }, limit: parseLimit(body.limit) ?? LIMITS.default };
}
