import { z } from 'zod';
import { and, isMatchAll } from './ast.ts';
import { canonicalTimeZone, COUNT_INTERVALS, type CountInterval } from './count-window.ts';
import { FILTER_FIELDS, type FieldDef } from './fields.ts';
import { closedObject } from './filter-schema.ts';
import { expectedKeys, normalizeQuery, OBJECT_EXPECTED, postScope, similarAllowed } from './search-request.ts';
import type { PostSearch } from './search-codec.ts';
import { keysOf } from '../internal/typed-objects.ts';

/**
 * The fields a count may be broken down by, under the names a trend chart uses, each one field of
 * the filter grammar's table (fields.ts): its values are the values its filters take.
 */
export const BREAKDOWN_FIELDS: Readonly<Record<string, FieldDef>> = Object.freeze({
  language: FILTER_FIELDS.post.primary_language!,
  format: FILTER_FIELDS.post.format!,
  niches: FILTER_FIELDS.author.niches!,
  topics: FILTER_FIELDS.post.topics!,
  country: FILTER_FIELDS.author.country_codes!,
  hashtags: FILTER_FIELDS.post.hashtags!,
  caption_mentions: FILTER_FIELDS.post.caption_mentions!,
  offer_types: FILTER_FIELDS.post.offer_types!,
});

/** Bounds of a breakdown. */
export const BREAKDOWN_LIMITS = Object.freeze({ defaultSize: 5, maxSize: 20 });

/** A validated breakdown: the field's API name (`language`) and its grammar field. */
export interface BreakdownSpec {
  by: string;
  field: FieldDef;
  size: number;
}

/** A validated counts request: the same normalized search as a first page, and how to count it. */
export interface CountsRequest {
  search: PostSearch;
  interval: CountInterval;
  /** Canonical IANA name. */
  timeZone: string;
  breakdown: BreakdownSpec | null;
}

const INTERVAL_EXPECTED = `expected one of ${COUNT_INTERVALS.map((i) => `"${i}"`).join(', ')}`;
const ZONE_EXPECTED = 'expected an IANA time zone name such as "Europe/Paris" or "UTC"';
const SIZE_EXPECTED = `expected an integer from 1 to ${BREAKDOWN_LIMITS.maxSize}`;
const BY_EXPECTED = `expected one of ${Object.keys(BREAKDOWN_FIELDS)
  .map((f) => `"${f}"`)
  .join(', ')}`;

const breakdownSchema = closedObject(
  {
    by: z
      .enum(keysOf(BREAKDOWN_FIELDS), { error: BY_EXPECTED })
      .meta({ description: 'The field whose values split each bucket.' }),
    size: z
      .int({ error: SIZE_EXPECTED })
      .min(1, { error: SIZE_EXPECTED })
      .max(BREAKDOWN_LIMITS.maxSize, { error: SIZE_EXPECTED })
      .optional()
      .meta({
        description: `How many values: the most frequent over the whole window (default ${BREAKDOWN_LIMITS.defaultSize}).`,
      }),
  },
  OBJECT_EXPECTED,
  expectedKeys(['by', 'size']),
).meta({ description: 'Split each bucket by the values of a field; the rest is counted in `other`.' });

/**
 * The body of post counts: the `post` scope of search posts (validated by the same schema, so
 * the same 422s at the same pointers; all optional, as in facets), the interval, the time zone
 * and an optional breakdown.
 */
export const postCountsRequestSchema = closedObject(
  {
    post: postScope,
    interval: z.enum(COUNT_INTERVALS, { error: INTERVAL_EXPECTED }).meta({
      description: 'Bucket size: calendar hours, days, weeks (from Monday) or months of the time zone.',
    }),
    time_zone: z
      .string({ error: ZONE_EXPECTED })
      .max(64, { error: ZONE_EXPECTED })
      .optional()
      .meta({ description: 'IANA time zone of the buckets (default "UTC"); answered in its canonical spelling.' }),
    breakdown: breakdownSchema.optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['post', 'interval', 'time_zone', 'breakdown']),
)
  .meta({
    description:
      'Post counts: how many posts a post search with the same scope returns, by posted_at, in buckets of a time zone.',
  })
  .transform((body, ctx): CountsRequest => {
    const timeZone = canonicalTimeZone(body.time_zone ?? 'UTC');
    if (timeZone === null) ctx.addIssue({ code: 'custom', path: ['time_zone'], message: ZONE_EXPECTED });
    const query = normalizeQuery(body.post.query);
    const similarTo = body.post.similar_to;
    const similar = similarAllowed('post', similarTo, query, false, ctx);
    if (timeZone === null || !similar) return z.NEVER;
    const filter = and(
      [body.post.filters ?? and([]), body.post.author?.filters ?? and([])].filter((f) => !isMatchAll(f)),
    );
    const by = body.breakdown?.by;
    return {
      search: { query, filter, sort: null, ...(similarTo !== undefined && { similarTo }) },
      interval: body.interval,
      timeZone,
      breakdown:
        by === undefined
          ? null
          : { by, field: BREAKDOWN_FIELDS[by]!, size: body.breakdown?.size ?? BREAKDOWN_LIMITS.defaultSize },
    };
  });
