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

/** Why one returned post matched. */
const postMatchSchema = z.strictObject({
  id: z.string(),
  retrieved_by: z.enum(['lexical', 'semantic', 'both']).nullable(),
  fields: z.array(z.strictObject({ field: z.string(), snippets: z.array(snippetSchema) })),
});

/** `matches` of a post search page with `"include": ["matches"]`: one entry per returned post, in `data` order. */
export const postMatchesSchema = z.array(postMatchSchema);

export type FacetBucket = z.infer<typeof facetBucketSchema>;
export type FacetsResponse = z.infer<typeof facetsResponseSchema>;
export type PostMatch = z.infer<typeof postMatchSchema>;
export type Snippet = z.infer<typeof snippetSchema>;
