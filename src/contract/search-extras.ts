import { z } from 'zod';

/**
 * Wire schemas of the v1 additions around search: facets responses and the opt-in
 * match evidence of post search. Kept apart from api.ts so the spec's own shapes stay as written.
 */

const rangeValue = z.strictObject({ from: z.number().nullable(), to: z.number().nullable() });

/** One bucket: a value (a range for counters; null counts results without a value) and its exact count. */
const facetBucketSchema = z.strictObject({
  value: z.union([z.string(), z.boolean(), rangeValue, z.null()]),
  count: z.number().int(),
});

/** The facets envelope: the exact number of matching results and, per requested field, its buckets. */
export const facetsResponseSchema = z.strictObject({
  request_id: z.string(),
  total: z.number().int(),
  facets: z.record(z.string(), z.array(facetBucketSchema)),
});

/** The intervals of post counts: calendar hours, days, weeks (from Monday) and months of a time zone. */
export const COUNT_INTERVALS = ['hour', 'day', 'week', 'month'] as const;

/** One bucket of post counts. */
const countBucketSchema = z.strictObject({
  start: z.string().meta({ description: "The bucket's start: ISO 8601 with the time zone's offset at that instant." }),
  count: z.number().int(),
  breakdown: z
    .array(z.strictObject({ value: z.string(), count: z.number().int() }))
    .optional()
    .meta({
      description: "With a breakdown: the window's most frequent values, each counted in this bucket (0 included).",
    }),
  other: z
    .number()
    .int()
    .optional()
    .meta({ description: 'With a breakdown: the posts of this bucket that carry none of those values.' }),
});

/** `POST /v1/social/posts/counts`: how many posts the matching search returns, bucket by bucket. */
export const countsResponseSchema = z.strictObject({
  request_id: z.string(),
  interval: z.enum(COUNT_INTERVALS),
  time_zone: z.string().meta({ description: "The canonical IANA name of the buckets' time zone." }),
  total: z.number().int().meta({ description: 'The posts counted: the sum of the buckets.' }),
  buckets: z.array(countBucketSchema).meta({ description: 'Every bucket of the window, in time order.' }),
});

/** A snippet of a field's text: `text` is verbatim from the field, `highlights` the matched spans in it. */
const snippetSchema = z.strictObject({
  text: z.string(),
  highlights: z.array(z.strictObject({ start: z.number().int(), end: z.number().int() })),
});

const similarity = z.number().meta({ description: 'Cosine similarity to the reference (−1 to 1).' });

/** Why one returned post matched. */
const postMatchSchema = z.strictObject({
  id: z.string(),
  retrieved_by: z.enum(['lexical', 'semantic', 'both']).nullable(),
  fields: z.array(z.strictObject({ field: z.string(), snippets: z.array(snippetSchema) })),
  /** Only on a `similar_to` search: how alike the post is to the reference, and what they share. */
  similar: z
    .strictObject({
      similarity,
      shared: z.strictObject({
        topics: z.array(z.string()),
        hashtags: z.array(z.string()),
        languages: z.array(z.string()),
        author_niches: z.array(z.string()),
      }),
    })
    .optional(),
});

/** `matches` of a post search page with `"include": ["matches"]`: one entry per returned post, in `data` order. */
export const postMatchesSchema = z.array(postMatchSchema);

/** Why one returned account is like the reference of an `account.similar_to` search. */
const accountMatchSchema = z.strictObject({
  id: z.string(),
  similarity,
  shared: z.strictObject({
    niches: z.array(z.string()),
    topics: z.array(z.string()).meta({ description: 'Topics both publish on (of their tracked posts).' }),
    languages: z.array(z.string()),
  }),
  closest_posts: z
    .array(z.strictObject({ id: z.string(), similarity }))
    .meta({ description: "Up to three of the account's posts closest to the reference, closest first." }),
});

/** `matches` of an account search page with `account.similar_to` and `"include": ["matches"]`. */
export const accountMatchesSchema = z.array(accountMatchSchema);

export type FacetBucket = z.infer<typeof facetBucketSchema>;
export type FacetsResponse = z.infer<typeof facetsResponseSchema>;
export type CountsResponse = z.infer<typeof countsResponseSchema>;
export type PostMatch = z.infer<typeof postMatchSchema>;
export type AccountMatch = z.infer<typeof accountMatchSchema>;
export type Snippet = z.infer<typeof snippetSchema>;
