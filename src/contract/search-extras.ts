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
export type PostMatch = z.infer<typeof postMatchSchema>;
export type AccountMatch = z.infer<typeof accountMatchSchema>;
export type Snippet = z.infer<typeof snippetSchema>;
