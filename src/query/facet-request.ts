import { z } from 'zod';
import { and, isMatchAll, type FilterNode } from './ast.ts';
import { FILTER_FIELDS, type FieldDef, type FieldKey, type FieldType, type FilterScope } from './fields.ts';
import { closedObject } from './filter-schema.ts';
import {
  accountScope,
  expectedKeys,
  normalizeQuery,
  OBJECT_EXPECTED,
  postScope,
  similarAllowed,
} from './search-request.ts';
import type { AccountSearch, PostSearch, PostsScope } from './search-codec.ts';

/** Bounds of a facets request (docs/filters.md, "Facets"). */
export const FACET_LIMITS = Object.freeze({ facets: 20, defaultSize: 10, maxSize: 100, ranges: 20 });

/** One requested range: `from` inclusive, `to` exclusive (the filter grammar's `gte` / `lt`); null is open. */
export interface FacetRange {
  from: number | null;
  to: number | null;
}

/** A validated facet: value counts of a keyword-like field, or range counts of a counter. */
export type FacetSpec =
  | { kind: 'terms'; name: string; field: FieldKey; type: FieldType; size: number }
  | { kind: 'ranges'; name: string; field: FieldKey; type: FieldType; ranges: FacetRange[] };

/** A validated facets request: the same normalized search as a first page, and the facets. */
export interface FacetsRequest<S> {
  search: S;
  facets: FacetSpec[];
}

/** Unique per document (or nearly): counting them answers nothing a search does not. */
const NOT_FACETED = new Set(['id', 'shortcode', 'handle']);
const TERM_TYPES: ReadonlySet<FieldType> = new Set(['keyword', 'keywords', 'ids', 'boolean']);
const RANGE_TYPES: ReadonlySet<FieldType> = new Set(['integer', 'number']);

/** Facetable fields by API name: `topics`, `author.niches`, … */
function facetFields(scopes: Array<[FilterScope, string]>): ReadonlyMap<string, FieldDef> {
  const out = new Map<string, FieldDef>();
  for (const [scope, prefix] of scopes) {
    for (const field of Object.values(FILTER_FIELDS[scope])) {
      if (NOT_FACETED.has(field.name) || !(TERM_TYPES.has(field.type) || RANGE_TYPES.has(field.type))) continue;
      out.set(`${prefix}${field.name}`, field);
    }
  }
  return out;
}

/** Facetable fields of post facets: post fields and, prefixed `author.`, the author's. */
export const POST_FACET_FIELDS = facetFields([
  ['post', ''],
  ['author', 'author.'],
]);
/** Facetable fields of account facets. */
export const ACCOUNT_FACET_FIELDS = facetFields([['account', '']]);

/** Whether a facetable field is counted by ranges (counters) rather than by value. */
export function isRangeField(field: FieldDef): boolean {
  return RANGE_TYPES.has(field.type);
}

type Ctx = z.core.$RefinementCtx;
const issue = (ctx: Ctx, path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message });

const SIZE_EXPECTED = `expected an integer from 1 to ${FACET_LIMITS.maxSize}`;
/** A facet that is not an object (a bare field name, say): the two shapes it may take, as `/sort` words its own. */
const FACET_EXPECTED = `expected an object {"field": <field>, "size": <1 to ${FACET_LIMITS.maxSize}, optional>} or, for a counter, {"field": <counter>, "ranges": [{"from": n, "to": n}, …]}`;
const BOUND_EXPECTED = 'expected a number or null';

const rangeSchema = closedObject(
  {
    from: z
      .number({ error: BOUND_EXPECTED })
      .nullable()
      .optional()
      .meta({ description: 'Inclusive lower bound; absent or null: open.' }),
    to: z
      .number({ error: BOUND_EXPECTED })
      .nullable()
      .optional()
      .meta({ description: 'Exclusive upper bound; absent or null: open.' }),
  },
  OBJECT_EXPECTED,
  expectedKeys(['from', 'to']),
);

/**
 * A facet of `fields`. The JSON Schema says what validation checks, so that a client generated
 * from the OpenAPI document (or a fuzzer) writes facets the API takes: the field is one of
 * `fields`, and `oneOf` tells a value facet (`size`, no `ranges`) from a range facet of a counter
 * (`ranges`, no `size`). Validation itself words each refusal (toFacets).
 */
function facetSchema(fields: ReadonlyMap<string, FieldDef>) {
  const entries = [...fields.entries()];
  const names = entries.map(([name]) => name);
  const listed = names.map((f) => `"${f}"`).join(', ');
  const byValue = entries.filter(([, def]) => !isRangeField(def)).map(([name]) => name);
  const byRanges = entries.filter(([, def]) => isRangeField(def)).map(([name]) => name);
  return closedObject(
    {
      field: z
        .enum(names, {
          error: (iss) =>
            typeof iss.input === 'string'
              ? `not a facetable field; expected one of ${listed}`
              : 'expected a field name',
        })
        .meta({ description: 'A facetable field (docs/filters.md, "Facets").' }),
      size: z
        .int({ error: SIZE_EXPECTED })
        .min(1, { error: SIZE_EXPECTED })
        .max(FACET_LIMITS.maxSize, { error: SIZE_EXPECTED })
        .optional()
        .meta({
          description: `Value facets: how many values, most frequent first (default ${FACET_LIMITS.defaultSize}).`,
        }),
      ranges: z
        .array(rangeSchema, { error: 'expected an array of ranges' })
        .min(1, { error: 'expected at least one range' })
        .max(FACET_LIMITS.ranges, { error: `expected at most ${FACET_LIMITS.ranges} ranges` })
        .optional()
        .meta({ description: 'Range facets of counters: the buckets, each counted separately (they may overlap).' }),
    },
    FACET_EXPECTED,
    expectedKeys(['field', 'size', 'ranges']),
  ).meta({
    oneOf: [
      {
        title: 'value facet',
        properties: { field: { enum: byValue } },
        not: { required: ['ranges'] },
      },
      {
        title: 'range facet',
        properties: { field: { enum: byRanges } },
        required: ['ranges'],
        not: { required: ['size'] },
      },
    ],
  });
}

/** The facets of a request over `fields`: at least one, at most {@link FACET_LIMITS}.facets. */
function facetsSchema(fields: ReadonlyMap<string, FieldDef>) {
  return z
    .array(facetSchema(fields), { error: 'expected an array of facets' })
    .min(1, { error: 'expected at least one facet' })
    .max(FACET_LIMITS.facets, { error: `expected at most ${FACET_LIMITS.facets} facets` })
    .meta({ description: 'The fields to count over the matching results.' });
}

type FacetInput = z.output<ReturnType<typeof facetSchema>>;

/** The validated facets (issues at `/facets/i/...` for unknown fields, misplaced options, duplicates). */
function toFacets(inputs: FacetInput[], fields: ReadonlyMap<string, FieldDef>, ctx: Ctx): FacetSpec[] | null {
  const out: FacetSpec[] = [];
  const seen = new Set<string>();
  let ok = true;
  const fail = (path: PropertyKey[], message: string) => {
    issue(ctx, ['facets', ...path], message);
    ok = false;
  };
  for (const [i, input] of inputs.entries()) {
    // Always found: the schema's enum admits the keys of `fields` alone.
    const field = fields.get(input.field);
    if (!field) continue;
    if (seen.has(input.field)) fail([i, 'field'], 'this field is already counted by an earlier facet');
    seen.add(input.field);
    if (isRangeField(field)) {
      if (input.size !== undefined) fail([i, 'size'], 'a counter is counted by "ranges", not "size"');
      if (input.ranges === undefined) {
        fail([i, 'ranges'], 'required: a counter is counted by ranges, e.g. [{"to": 1000}, {"from": 1000}]');
        continue;
      }
      const ranges = input.ranges.map((r) => ({ from: r.from ?? null, to: r.to ?? null }));
      for (const [j, r] of ranges.entries()) {
        if (r.from !== null && r.to !== null && r.from >= r.to) fail([i, 'ranges', j], '"from" must be less than "to"');
      }
      out.push({ kind: 'ranges', name: input.field, field: field.field, type: field.type, ranges });
    } else {
      if (input.ranges !== undefined)
        fail([i, 'ranges'], `"${input.field}" is counted by value ("size"), not by ranges`);
      out.push({
        kind: 'terms',
        name: input.field,
        field: field.field,
        type: field.type,
        size: input.size ?? FACET_LIMITS.defaultSize,
      });
    }
  }
  return ok ? out : null;
}

type PostScopeInput = z.output<typeof postScope>;

function toPostFacets(body: { post: PostScopeInput; facets: FacetInput[] }, ctx: Ctx): FacetsRequest<PostSearch> {
  const facets = toFacets(body.facets, POST_FACET_FIELDS, ctx);
  const query = normalizeQuery(body.post.query);
  const filter = and(
    [body.post.filters ?? and([]), body.post.author?.filters ?? and([])].filter((f) => !isMatchAll(f)),
  );
  const similarTo = body.post.similar_to;
  if (!similarAllowed('post', similarTo, query, false, ctx)) return z.NEVER;
  if (facets === null) return z.NEVER;
  return { search: { query, filter, sort: null, ...(similarTo !== undefined && { similarTo }) }, facets };
}

/**
 * The body of post facets: the `post` scope of search posts (query, filters, author filters; all
 * optional here: facets over every post are a question a search cannot ask) and the facets.
 */
export const postFacetsRequestSchema = closedObject(
  { post: postScope, facets: facetsSchema(POST_FACET_FIELDS) },
  OBJECT_EXPECTED,
  expectedKeys(['post', 'facets']),
)
  .meta({ description: 'Post facets: counts over the posts a post search with the same scope returns.' })
  .transform(toPostFacets);

type AccountScopeInput = z.output<typeof accountScope>;

function toAccountFacets(
  body: { account: AccountScopeInput; facets: FacetInput[] },
  ctx: Ctx,
): FacetsRequest<AccountSearch> {
  const facets = toFacets(body.facets, ACCOUNT_FACET_FIELDS, ctx);
  const scope = body.account.posts;
  const posts: PostsScope | null = scope
    ? { minimum: scope.minimum_matching_posts ?? 1, filter: scope.filters ?? and([]) }
    : null;
  const filter: FilterNode = body.account.filters ?? and([]);
  const query = normalizeQuery(body.account.query);
  const similarTo = body.account.similar_to;
  if (!similarAllowed('account', similarTo, query, false, ctx)) return z.NEVER;
  if (facets === null) return z.NEVER;
  return {
    search: { query, filter, posts, sort: null, ...(similarTo !== undefined && { similarTo }) },
    facets,
  };
}

/** The body of account facets: the `account` scope of search accounts (posts scope included) and the facets. */
export const accountFacetsRequestSchema = closedObject(
  { account: accountScope, facets: facetsSchema(ACCOUNT_FACET_FIELDS) },
  OBJECT_EXPECTED,
  expectedKeys(['account', 'facets']),
)
  .meta({ description: 'Account facets: counts over the accounts an account search with the same scope returns.' })
  .transform(toAccountFacets);
