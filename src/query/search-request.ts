import { ValidationFailedError } from '../internal/errors.ts';
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

/**
 * The part both searches share: a continuation, or the body and its required scope object
 * (`post` / `account`) with only the allowed keys.
 */
function initialScope(input: unknown, scope: 'post' | 'account', keys: readonly string[]): SearchRequest<never> | { body: Json; scope: Json } {
  const body = object(input, '');
  const next = continuation(body);
  if (next) return next;
  onlyKeys(body, [scope, 'sort', 'limit', 'cursor'], '');
  if (body[scope] === undefined) fail(`/${scope}`, 'required');
  const scoped = object(body[scope], `/${scope}`);
  onlyKeys(scoped, keys, `/${scope}`);
  return { body, scope: scoped };
}

/** `sort` and `limit` of an initial request: sort only without a query (spec 4.1 rule 3). */
function sortAndLimit(body: Json, query: string | null, scope: 'post' | 'account'): { sort: SortSpec | null; limit: number } {
  if (body.sort !== undefined && query !== null) {
    fail('/sort', `sort is allowed only on filters-only requests; with "${scope}.query" results come in relevance order`);
  }
  return {
    sort: body.sort === undefined ? null : parseSort(body.sort, scope, '/sort'),
    limit: parseLimit(body.limit) ?? LIMITS.default,
  };
}

/** Parses a search posts body (spec 4.1). Throws ValidationFailedError (422) with a JSON pointer. */
export function parsePostSearchRequest(input: unknown): SearchRequest<PostSearch> {
  const parsed = initialScope(input, 'post', ['query', 'filters', 'author']);
  if ('kind' in parsed) return parsed;
  const { body, scope: post } = parsed;
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
  const { sort, limit } = sortAndLimit(body, query, 'post');
  return { kind: 'initial', search: { query, filter: and([postFilter, authorFilter].filter((f) => !isMatchAll(f))), sort }, limit };
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
  const parsed = initialScope(input, 'account', ['query', 'filters', 'posts']);
  if ('kind' in parsed) return parsed;
  const { body, scope: account } = parsed;
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
  const { sort, limit } = sortAndLimit(body, query, 'account');
  return { kind: 'initial', search: { query, filter, posts, sort }, limit };
}
