import { z } from 'zod';
import { filterNodeSchema } from './ast.ts';
import type { FieldKey } from './fields.ts';

/**
 * The version of the normalized search and of what a cursor carries beside it (the engine's state,
 * src/engine/search.ts). Bump it whenever either changes shape: a cursor of another version is
 * answered 410 (start again), never misread.
 */
export const SEARCH_VERSION = 4;

/**
 * The longest cursor a continuation accepts. Its body, `{"cursor": "…", "limit": 100}`, then stays
 * under the 1 MiB (1,048,576 bytes) body limit of the routes (`bodyLimit` in src/http/app.ts).
 */
export const MAX_CURSOR_LENGTH = 1_000_000;

/**
 * The largest normalized search an initial request may have, in UTF-8 bytes of
 * `JSON.stringify(search)`, so that every cursor it leads to is at most MAX_CURSOR_LENGTH. Bytes,
 * not characters: a 200-character value is up to 600 bytes of UTF-8, and bytes are what deflate
 * and base64 see. A cursor is `base64url(deflateRaw(payload)) "." base64url(HMAC-SHA256)`
 * (cursor-codec.ts), the payload being the JSON of `{v, op, search, limit, state, exp}`:
 *
 * - payload ≤ search + 2,000 bytes: `state` is at most ~1,500 (a point-in-time id of 200 to 400
 *   characters, sort values, a 520-character quantized vector), the other members under 100;
 * - deflate expands incompressible input by at most 5 bytes per stored block, and at the codec's
 *   memory level 2 a block holds at least 255 input bytes: at most × 260/255, + 5;
 * - base64url multiplies by 4/3, rounded up; then come "." and the 43-character signature.
 *
 * 700,000 + 2,000 = 702,000 → deflate ≤ 715,770 → base64url ≤ 954,360 → cursor ≤ 954,404, under
 * 1,000,000. (Without the deflate term, ⌈702,000 × 4/3⌉ + 100 = 936,100; the difference is the
 * measured worst case of random bytes, 1.96 %.)
 */
export const MAX_SEARCH_JSON_LENGTH = 700_000;

/** What `include` may ask a search to add: `matches`, the match evidence (docs/api-decisions.md). */
export const POST_INCLUDES = ['matches'] as const;
/** One opt-in addition to a search's envelope. */
export type PostInclude = (typeof POST_INCLUDES)[number];

const sortSchema = z.strictObject({
  field: z.custom<FieldKey>((value) => typeof value === 'string'),
  order: z.enum(['asc', 'desc']),
});

/**
 * A `similar_to` as the request schema parsed it: a record's ID, or its alias (a post's shortcode,
 * an account's handle without `@`). The references resolve it (src/services/search/references.ts).
 */
const referenceSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('id'), id: z.string().min(1) }),
  z.strictObject({ kind: z.literal('alias'), alias: z.string().min(1) }),
]);

/** A parsed `similar_to` reference. */
export type SearchReference = z.infer<typeof referenceSchema>;

/**
 * A validated, normalized post search. `include` is absent when nothing is asked: the searches
 * of facets, counts and saved searches have no envelope to add to.
 */
export const postSearchSchema = z.strictObject({
  query: z.string().nullable(),
  /** Post and author filters as one tree (both target posts). */
  filter: filterNodeSchema,
  /** Only on filters-only requests; null means the documented default. */
  sort: sortSchema.nullable(),
  include: z.array(z.enum(POST_INCLUDES)).optional(),
  /** `post.similar_to`: rank by similarity to that post. */
  similarTo: referenceSchema.optional(),
});

/** A validated, normalized post search (see {@link postSearchSchema}). */
export type PostSearch = z.infer<typeof postSearchSchema>;

/** The publishing scope of an account search (spec 4.2). */
const postsScopeSchema = z.strictObject({
  /** 1 to 3 distinct posts that must each satisfy the whole `filter`. */
  minimum: z.int().min(1),
  filter: filterNodeSchema,
});

/** The publishing scope of an account search (spec 4.2). */
export type PostsScope = z.infer<typeof postsScopeSchema>;

/** A validated, normalized account search. */
export const accountSearchSchema = z.strictObject({
  query: z.string().nullable(),
  filter: filterNodeSchema,
  posts: postsScopeSchema.nullable(),
  sort: sortSchema.nullable(),
  /** `account.similar_to`: rank by similarity to that account. */
  similarTo: referenceSchema.optional(),
  /** Opt-in additions (with `similar_to` only): `matches`, why each account is alike. */
  include: z.array(z.enum(POST_INCLUDES)).optional(),
});

/** A validated, normalized account search (see {@link accountSearchSchema}). */
export type AccountSearch = z.infer<typeof accountSearchSchema>;
