import { z } from 'zod';

/**
 * Wire schemas of the v1 additions around names: typeahead suggestions and the dictionaries
 * (taxonomies). Kept apart from api.ts so the spec's own shapes stay as written.
 */

/** What a suggestion names. */
export const SUGGESTION_KINDS = ['account', 'hashtag', 'mention', 'topic', 'niche'] as const;
export type SuggestionKind = (typeof SUGGESTION_KINDS)[number];

const suggestionSchema = z.strictObject({
  kind: z.enum(SUGGESTION_KINDS),
  value: z.string().meta({
    description:
      'What to search or filter by: `@handle` (account, mention), `#tag` (hashtag, lower-cased as the hashtags filter takes it), a classification ID (topic, niche).',
  }),
  label: z.string().meta({ description: 'What to show: the display name, the tag or handle, the ID read as words.' }),
  count: z.number().int().meta({
    description: 'Followers (account); servable posts carrying it (hashtag, mention, topic); public accounts (niche).',
  }),
});

/** `GET /v1/social/suggest`. */
export const suggestResponseSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(suggestionSchema),
});

/** `GET /v1/social/taxonomies/{name}`. */
export const taxonomyResponseSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(
    z.strictObject({
      id: z.string().meta({ description: 'The ID as the filters take it.' }),
      label: z.string(),
      count: z.number().int().meta({ description: 'Records carrying it now (what `counted` says).' }),
    }),
  ),
  counted: z.enum(['accounts', 'posts']).meta({
    description: '`accounts`: servable public accounts (what account search returns); `posts`: servable posts.',
  }),
});

export type Suggestion = z.infer<typeof suggestionSchema>;
