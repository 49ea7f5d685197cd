import { z } from 'zod';
import { accountRef, postRef, type ResourceRef } from '../contract/ids.ts';
import { formatIssues } from '../contract/observations.ts';
import { ValidationFailedError } from '../internal/errors.ts';
import { and, isMatchAll, type FilterNode } from './ast.ts';
import { closedObject } from './filter-schema.ts';
import { filtersSchema } from './parse-filters.ts';
import { SORT_SCHEMAS, type SortSpec } from './parse-sort.ts';
import {
  MAX_CURSOR_LENGTH,
  MAX_SEARCH_JSON_LENGTH,
  POST_INCLUDES,
  type AccountSearch,
  type PostInclude,
  type PostSearch,
  type PostsScope,
  type SearchReference,
} from './search-codec.ts';

/** The most characters `post.query` / `account.query` may have (spec part 8). */
export const MAX_QUERY_LENGTH = 2000;
/** Default and bounds of `limit` (spec part 8). */
export const LIMITS = { default: 20, min: 1, max: 100 } as const;
/** The provisional maximum of `minimum_matching_posts` (spec 8). */
export const MAX_MINIMUM_MATCHING_POSTS = 3;

/** Either a first page or a continuation (spec 4.1 rules 1–4). */
export type SearchRequest<S> =
  { kind: 'initial'; search: S; limit: number } | { kind: 'continuation'; cursor: string; limit: number | null };

/** The reason for a non-object where an object belongs. */
export const OBJECT_EXPECTED = 'expected a JSON object';
const LIMIT_EXPECTED = `expected an integer from ${LIMITS.min} to ${LIMITS.max}`;
const CURSOR_EXPECTED = 'expected a cursor string from a previous response';
const MINIMUM_EXPECTED = `expected an integer from 1 to ${MAX_MINIMUM_MATCHING_POSTS}`;
const CONTINUATION_ONLY =
  'a continuation sends only "cursor" and optionally "limit"; the cursor carries the rest of the request';

/** The reason for any key outside `allowed`. */
export const expectedKeys = (allowed: readonly string[]) => () =>
  `unknown field; expected ${allowed.map((a) => `"${a}"`).join(', ')}`;

const limitSchema = z
  .int({ error: LIMIT_EXPECTED })
  .min(LIMITS.min, { error: LIMIT_EXPECTED })
  .max(LIMITS.max, { error: LIMIT_EXPECTED })
  .meta({ description: `Results per page, default ${LIMITS.default}. On a continuation: at most the original limit.` });

const cursorSchema = z
  .string({ error: CURSOR_EXPECTED })
  .min(1, { error: CURSOR_EXPECTED })
  .max(MAX_CURSOR_LENGTH, { error: CURSOR_EXPECTED })
  .meta({ description: 'The next_cursor of a previous page. A continuation sends only cursor and optionally limit.' });

/** The most characters a `similar_to` reference may have (IDs, handles and shortcodes are far shorter). */
const MAX_REFERENCE_LENGTH = 256;
const REFERENCE_EXPECTED = `expected a non-empty string of at most ${MAX_REFERENCE_LENGTH} characters`;

/** The reason a `similar_to` names no record a search can start from (references.ts says it too). */
export const UNKNOWN_REFERENCE = {
  post: 'no tracked post has this ID or shortcode, or it is currently unavailable',
  account: 'no tracked, available account has this ID or handle',
} as const;

/**
 * `similar_to`, parsed here once into an ID or an alias: a value that can be neither names no
 * record, like an unknown one.
 */
function referenceSchema(scope: 'post' | 'account', description: string) {
  const parse: (value: string) => ResourceRef = scope === 'post' ? postRef : accountRef;
  return z
    .string({ error: REFERENCE_EXPECTED })
    .trim()
    .min(1, { error: REFERENCE_EXPECTED })
    .max(MAX_REFERENCE_LENGTH, { error: REFERENCE_EXPECTED })
    .transform((value, ctx): SearchReference => {
      const reference = parse(value);
      if (reference) return reference;
      ctx.addIssue({ code: 'custom', message: UNKNOWN_REFERENCE[scope] });
      return z.NEVER;
    })
    .optional()
    .meta({ description });
}

/** The reason `similar_to` refuses a query or a sort beside it (`what`: `"post.query"`, `"sort"`). */
const similarConflict = (scope: 'post' | 'account', what: string) =>
  `"${scope}.similar_to" orders results by similarity to the reference; it cannot be combined with ${what}`;

function querySchema(description: string) {
  return z
    .string({ error: 'expected a string' })
    .max(MAX_QUERY_LENGTH, {
      error: (issue) =>
        `expected at most ${MAX_QUERY_LENGTH} characters, got ${typeof issue.input === 'string' ? issue.input.length : '?'}`,
    })
    .nullable()
    .optional()
    .meta({ description: `${description}; blank means none.` });
}

/** A query string, or null when absent or blank. */
export function normalizeQuery(query: string | null | undefined): string | null {
  const trimmed = query?.trim() ?? '';
  return trimmed.length > 0 ? trimmed : null;
}

type Ctx = z.core.$RefinementCtx;

function issue(ctx: Ctx, path: PropertyKey[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

/** The shared top level of both bodies. */
interface Envelope {
  sort?: SortSpec | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * A continuation: only `cursor` and optionally `limit` (rule 4). `undefined` for an initial
 * request, `null` when the continuation is invalid (its issues are added).
 */
function continuationOf(body: Envelope & Record<string, unknown>, ctx: Ctx): SearchRequest<never> | null | undefined {
  if (body.cursor === undefined) return undefined;
  const extra = Object.keys(body).filter((key) => key !== 'cursor' && key !== 'limit' && body[key] !== undefined);
  for (const key of extra) issue(ctx, [key], CONTINUATION_ONLY);
  return extra.length > 0 ? null : { kind: 'continuation', cursor: body.cursor, limit: body.limit ?? null };
}

/**
 * False (and an issue) when `similar_to` comes with a query of its scope or a sort (`sorted`):
 * each of them would order the results another way. Every request with a scope (searches, facets,
 * counts) checks it here.
 */
export function similarAllowed(
  scope: 'post' | 'account',
  similarTo: SearchReference | undefined,
  query: string | null,
  sorted: boolean,
  ctx: Ctx,
): boolean {
  if (similarTo === undefined) return true;
  if (query !== null) issue(ctx, [scope, 'similar_to'], similarConflict(scope, `"${scope}.query"`));
  if (sorted) issue(ctx, ['sort'], similarConflict(scope, '"sort"'));
  return query === null && !sorted;
}

/** False (and an issue) when `sort` comes with a query (spec 4.1 rule 3). */
function sortAllowed(body: Envelope, query: string | null, scope: 'post' | 'account', ctx: Ctx): boolean {
  if (body.sort === undefined || query === null) return true;
  issue(
    ctx,
    ['sort'],
    `sort is allowed only on filters-only requests; with "${scope}.query" results come in relevance order`,
  );
  return false;
}

/**
 * False (and an issue at the largest filters object) when the normalized search is too large for
 * its continuation cursors (see MAX_SEARCH_JSON_LENGTH).
 */
function fitsCursor(search: object, filters: Array<[PropertyKey[], FilterNode]>, ctx: Ctx): boolean {
  const size = Buffer.byteLength(JSON.stringify(search));
  if (size <= MAX_SEARCH_JSON_LENGTH) return true;
  const bytes = (node: FilterNode) => Buffer.byteLength(JSON.stringify(node));
  const [path] = filters.reduce((largest, next) => (bytes(next[1]) > bytes(largest[1]) ? next : largest));
  issue(
    ctx,
    path,
    `the filters are too large: the normalized search takes ${size} bytes of JSON, and at most ${MAX_SEARCH_JSON_LENGTH} fit in a continuation cursor; send fewer or shorter values`,
  );
  return false;
}

const authorScope = closedObject(
  { filters: filtersSchema('author', '/post/author/filters').optional() },
  OBJECT_EXPECTED,
  expectedKeys(['filters']),
).meta({ description: 'The account that published the post.' });

/** The `post` scope of a post search (also of post facets). */
export const postScope = closedObject(
  {
    query: querySchema(
      `Natural-language content intent, at most ${MAX_QUERY_LENGTH} characters; supplies relevance order`,
    ),
    filters: filtersSchema('post', '/post/filters').optional(),
    author: authorScope.optional(),
    similar_to: referenceSchema(
      'post',
      'A post ID or shortcode: posts like that one, most alike first (not with "query" or "sort"; the reference itself is left out).',
    ),
  },
  OBJECT_EXPECTED,
  expectedKeys(['query', 'filters', 'author', 'similar_to']),
).meta({ description: 'The post scope: required on an initial request.' });

type PostBody = Envelope &
  Record<string, unknown> & { post?: z.output<typeof postScope> | undefined; include?: PostInclude[] | undefined };

const includeSchema = z
  .array(z.enum(POST_INCLUDES, { error: `expected one of ${POST_INCLUDES.map((i) => `"${i}"`).join(', ')}` }), {
    error: 'expected an array',
  })
  .max(POST_INCLUDES.length * 2, { error: 'expected each addition at most once' })
  .meta({ description: 'Opt-in additions to the response: "matches" adds why each post matched. Kept by the cursor.' });

/** An initial post search (or continuation) from a structurally valid body; issues on `ctx` otherwise. */
export function toPostRequest(body: PostBody, ctx: Ctx): SearchRequest<PostSearch> {
  const next = continuationOf(body, ctx);
  if (next !== undefined) return next ?? z.NEVER;
  if (body.post === undefined) {
    issue(ctx, ['post'], 'required');
    return z.NEVER;
  }
  const query = normalizeQuery(body.post.query);
  const postFilter = body.post.filters ?? and([]);
  const authorFilter = body.post.author?.filters ?? and([]);
  const similarTo = body.post.similar_to;
  if (query === null && similarTo === undefined && isMatchAll(postFilter) && isMatchAll(authorFilter)) {
    issue(ctx, ['post'], 'an initial request needs a non-empty "query", "similar_to" or at least one filter');
    return z.NEVER;
  }
  if (!similarAllowed('post', similarTo, query, body.sort !== undefined, ctx)) return z.NEVER;
  if (!sortAllowed(body, query, 'post', ctx)) return z.NEVER;
  const search: PostSearch = {
    query,
    filter: and([postFilter, authorFilter].filter((f) => !isMatchAll(f))),
    sort: body.sort ?? null,
    ...(body.include && body.include.length > 0 && { include: [...new Set(body.include)] }),
    ...(similarTo !== undefined && { similarTo }),
  };
  const filters: Array<[PropertyKey[], FilterNode]> = [
    [['post', 'filters'], postFilter],
    [['post', 'author', 'filters'], authorFilter],
  ];
  if (!fitsCursor(search, filters, ctx)) return z.NEVER;
  return { kind: 'initial', search, limit: body.limit ?? LIMITS.default };
}

/**
 * The body of search posts (spec 4.1): an initial request (`post`, and `sort` and `limit`) or a
 * continuation (`cursor`, and `limit`). Its input side is the request contract, filter grammar
 * included (docs/filters.md); its output the normalized request. Rules across members (a
 * continuation sends nothing else; sort only without a query; a query or a filter; the cursor size)
 * are checked after the structure, so a body breaking both gets the structural issues.
 */
export const postSearchRequestSchema = closedObject(
  {
    post: postScope.optional(),
    sort: SORT_SCHEMAS.post.optional(),
    limit: limitSchema.optional(),
    cursor: cursorSchema.optional(),
    include: includeSchema.optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['post', 'sort', 'limit', 'cursor', 'include']),
)
  .meta({
    description:
      'Search posts: an initial request sends post (with sort and limit); a continuation sends only cursor and optionally limit.',
  })
  .transform(toPostRequest);

const postsScope = closedObject(
  {
    minimum_matching_posts: z
      .int({ error: MINIMUM_EXPECTED })
      .min(1, { error: MINIMUM_EXPECTED })
      .max(MAX_MINIMUM_MATCHING_POSTS, { error: MINIMUM_EXPECTED })
      .nullable()
      .optional()
      .meta({ description: 'Distinct posts that must each match the whole filters; default 1.' }),
    filters: filtersSchema('post', '/account/posts/filters').optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['minimum_matching_posts', 'filters']),
).meta({ description: 'The publishing scope: the account must have posts matching these filters.' });

/** The `account` scope of an account search (also of account facets). */
export const accountScope = closedObject(
  {
    query: querySchema(`Identity intent, at most ${MAX_QUERY_LENGTH} characters`),
    filters: filtersSchema('account', '/account/filters').optional(),
    posts: postsScope.optional(),
    similar_to: referenceSchema(
      'account',
      'An account ID, handle or @handle: accounts like that one, most alike first (not with "query" or "sort"; the reference itself is left out).',
    ),
  },
  OBJECT_EXPECTED,
  expectedKeys(['query', 'filters', 'posts', 'similar_to']),
).meta({ description: 'The account scope: required on an initial request.' });

type AccountBody = Envelope &
  Record<string, unknown> & {
    account?: z.output<typeof accountScope> | undefined;
    include?: PostInclude[] | undefined;
  };

function toAccountRequest(body: AccountBody, ctx: Ctx): SearchRequest<AccountSearch> {
  const next = continuationOf(body, ctx);
  if (next !== undefined) return next ?? z.NEVER;
  if (body.account === undefined) {
    issue(ctx, ['account'], 'required');
    return z.NEVER;
  }
  const query = normalizeQuery(body.account.query);
  const filter = body.account.filters ?? and([]);
  const scope = body.account.posts;
  const posts: PostsScope | null = scope
    ? { minimum: scope.minimum_matching_posts ?? 1, filter: scope.filters ?? and([]) }
    : null;
  const similarTo = body.account.similar_to;
  if (query === null && similarTo === undefined && isMatchAll(filter) && posts === null) {
    issue(ctx, ['account'], 'an initial request needs a non-empty "query", "similar_to", "filters" or "posts" scope');
    return z.NEVER;
  }
  if (!similarAllowed('account', similarTo, query, body.sort !== undefined, ctx)) return z.NEVER;
  if (!sortAllowed(body, query, 'account', ctx)) return z.NEVER;
  if (body.include && body.include.length > 0 && similarTo === undefined) {
    issue(ctx, ['include'], 'account search explains its matches only with "account.similar_to"');
    return z.NEVER;
  }
  const search: AccountSearch = {
    query,
    filter,
    posts,
    sort: body.sort ?? null,
    ...(similarTo !== undefined && { similarTo }),
    ...(body.include && body.include.length > 0 && { include: [...new Set(body.include)] }),
  };
  const filters: Array<[PropertyKey[], FilterNode]> = [
    [['account', 'filters'], filter],
    [['account', 'posts', 'filters'], posts?.filter ?? and([])],
  ];
  if (!fitsCursor(search, filters, ctx)) return z.NEVER;
  return { kind: 'initial', search, limit: body.limit ?? LIMITS.default };
}

/**
 * The body of search accounts (spec 4.2): an initial request (`account`, and `sort` and `limit`)
 * or a continuation (`cursor`, and `limit`); see {@link postSearchRequestSchema}.
 */
export const accountSearchRequestSchema = closedObject(
  {
    account: accountScope.optional(),
    sort: SORT_SCHEMAS.account.optional(),
    limit: limitSchema.optional(),
    cursor: cursorSchema.optional(),
    include: includeSchema.optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['account', 'sort', 'limit', 'cursor', 'include']),
)
  .meta({
    description:
      'Search accounts: an initial request sends account (with sort and limit); a continuation sends only cursor and optionally limit.',
  })
  .transform(toAccountRequest);

function parseWith<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationFailedError(formatIssues(result.error.issues, '', input));
}

/** Parses a search posts body (spec 4.1). Throws ValidationFailedError (422) with JSON pointers. */
export function parsePostSearchRequest(input: unknown): SearchRequest<PostSearch> {
  return parseWith(postSearchRequestSchema, input);
}

/** Parses a search accounts body (spec 4.2). Throws ValidationFailedError (422) with JSON pointers. */
export function parseAccountSearchRequest(input: unknown): SearchRequest<AccountSearch> {
  return parseWith(accountSearchRequestSchema, input);
}
