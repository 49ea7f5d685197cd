import { z } from 'zod';
import { ACCOUNT_COUNTERS, jsonValue, POST_COUNTERS } from './observations.ts';
import { accountMatchesSchema, postMatchesSchema } from './search-extras.ts';

/**
 * Zod schemas of the public API's responses (spec part 2 and 7). Routes declare them as response
 * schemas, so every response is checked and serialized field for field against the spec, and an
 * OpenAPI document can be generated from the same source.
 */

const url = z.string();
const timestamp = z.string();

/** Spec 2.3: the author summary, embedded as `author` and `attribution.account`. */
const authorSummarySchema = z.strictObject({
  id: z.string(),
  handle: z.string(),
  display_name: z.string(),
  web_url: url,
  avatar_url: url.nullable(),
  followers_count: z.number().int(),
  is_verified: z.boolean(),
});

/** Spec 2.2. Post-derived fields are null for private accounts and while account enrichment is pending. */
export const accountSchema = z.strictObject({
  id: z.string(),
  handle: z.string(),
  display_name: z.string(),
  web_url: url,
  avatar_url: url.nullable(),
  biography: z.string(),
  bio_links: z.array(z.strictObject({ url, title: z.string() })),
  account_type: z.string(),
  category_label: z.string(),
  declared_locations: z.array(
    z.strictObject({ country_code: z.string(), region_code: z.string(), locality: z.string() }),
  ),
  is_verified: z.boolean(),
  is_private: z.boolean(),
  followers_count: z.number().int(),
  following_count: z.number().int(),
  posts_count: z.number().int(),
  publishing_summary: z.string().nullable(),
  publishing_languages: z.array(z.string()).nullable(),
  niches: z.array(z.string()).nullable(),
  observed_at: timestamp,
  // Additive (v1): metrics the service derives; each null when it cannot be computed, all null for
  // a private account (docs/api-decisions.md, "Account metrics").
  followers_growth_7d: z.number().nullable().meta({
    description:
      'Relative change of followers_count over ~7 days (0.052 = +5.2%); null without a point 5–9 days before.',
  }),
  followers_growth_30d: z
    .number()
    .nullable()
    .meta({ description: 'Relative change of followers_count over ~30 days; null without a point 28–32 days before.' }),
  median_views_90d: z.number().nullable().meta({
    description:
      'Median views of the posts with views posted in the 90 days before observed_at; null with fewer than 3.',
  }),
  engagement_rate_90d: z
    .number()
    .nullable()
    .meta({ description: 'Median engagement_rate_by_views of the same posts; null with fewer than 3.' }),
  posts_per_week_90d: z
    .number()
    .nullable()
    .meta({ description: 'Tracked posts posted in the 90 days before observed_at, per week.' }),
});

/** Spec 2.5. */
const audioSchema = z.strictObject({
  id: z.string(),
  social_id: z.string().nullable(),
  type: z.string(),
  title: z.string(),
  attribution: z.strictObject({
    display_name: z.string(),
    account: authorSummarySchema.nullable(),
  }),
  duration_seconds: z.number(),
  web_url: url.nullable(),
});

const strings = z.array(z.string());

/** Spec 2.4: every summary field, also the base of the full post. */
const postSummaryShape = {
  id: z.string(),
  shortcode: z.string(),
  web_url: url,
  posted_at: timestamp,
  observed_at: timestamp,
  format: z.string(),
  primary_language: z.string().nullable(),
  caption: z.string(),
  hashtags: strings,
  caption_mentions: z.array(jsonValue),
  audio: audioSchema.nullable(),
  content_summary: z.string().nullable(),
  topics: strings.nullable(),
  creative_formats: strings.nullable(),
  hook: z.strictObject({ construction: z.string(), devices: strings, modalities: strings }).nullable(),
  key_messages: z.array(z.strictObject({ summary: z.string(), roles: strings, presentation: z.string() })).nullable(),
  proofs: z.array(z.strictObject({ summary: z.string(), mechanisms: strings, cited_source_types: strings })).nullable(),
  offers: z.array(z.strictObject({ summary: z.string(), types: strings, stated_terms: strings })).nullable(),
  calls_to_action: z
    .array(z.strictObject({ summary: z.string(), actions: strings, stages: strings, modalities: strings }))
    .nullable(),
  narrative_structure: z.strictObject({ description: z.string(), patterns: strings }).nullable(),
  has_paid_partnership_label: z.boolean().nullable(),
  paid_partners: z.array(jsonValue).nullable(),
  commercial_contexts: strings.nullable(),
  comments_enabled: z.boolean(),
  views: z.number().int().nullable(),
  likes: z.number().int(),
  comments: z.number().int(),
  engagement_rate_by_views: z.number().nullable(),
  view_ratio_to_account_baseline: z.number().nullable(),
  author: authorSummarySchema,
  coauthors: z.array(authorSummarySchema),
};

export const postSummarySchema = z.strictObject(postSummaryShape);

const imageVisibleText = z.array(z.strictObject({ text: z.string() })).nullable();
const videoVisibleText = z
  .array(
    z.strictObject({
      text: z.string(),
      start_seconds: z.number().optional(),
      end_seconds: z.number().optional(),
    }),
  )
  .nullable();

/** Spec 2.6: media items, discriminated by `type`. */
const mediaItemSchema = z.discriminatedUnion('type', [
  z.strictObject({
    id: z.string(),
    type: z.literal('image'),
    width: z.number().int(),
    height: z.number().int(),
    media_url: url,
    visible_text: imageVisibleText,
    visual_description: z.string().nullable(),
  }),
  z.strictObject({
    id: z.string(),
    type: z.literal('video'),
    width: z.number().int(),
    height: z.number().int(),
    media_url: url,
    duration_seconds: z.number().nullable(),
    thumbnail_url: url.nullable(),
    transcript: z.string().nullable(),
    visible_text: videoVisibleText,
    visual_description: z.string().nullable(),
  }),
]);

/** Spec 2.6: the full post. */
export const fullPostSchema = z.strictObject({ ...postSummaryShape, media: z.array(mediaItemSchema) });

/** Spec 4.1: the search posts envelope. */
export const postSearchResponseSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(postSummarySchema),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
  /** Only with `"include": ["matches"]` (an additive v1 member). */
  matches: postMatchesSchema.optional(),
  /** Only on a first page of a query that found fewer than 3 posts (an additive v1 member). */
  suggested_query: z.string().optional().meta({
    description:
      'Did you mean: the query with its misspelt words corrected from the indexed vocabulary, each correction carried by more posts than the word typed. Only on the first page of a query that found fewer than 3 posts, and only when a word has such a correction.',
  }),
  /** Only when a hybrid search corrected words no post carries, on every page (an additive v1 member). */
  corrected_query: z.string().optional().meta({
    description:
      'Showing results for: the query as it was searched, when the hybrid ranking corrected words of it that no post carries to the closest indexed word ("soudough" searched as "sourdough"); the rest as typed. On every page of such a search. A `suggested_query` beside it corrects this text further, never repeats it.',
  }),
});

/** Spec 4.2: the search accounts envelope. */
export const accountSearchResponseSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(accountSchema),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
  /** Only with `account.similar_to` and `"include": ["matches"]` (an additive v1 member). */
  matches: accountMatchesSchema.optional(),
  /** Only on a first page of a query that found fewer than 3 accounts (an additive v1 member). */
  suggested_query: z.string().optional().meta({
    description:
      "Did you mean: the query with its misspelt words corrected from the words of accounts' names and descriptions, each correction carried by more accounts than the word typed. Only on the first page of a query that found fewer than 3 accounts, and only when a word has such a correction.",
  }),
  /** Only when the search corrected words no account carries, on every page (an additive v1 member). */
  corrected_query: z.string().optional().meta({
    description:
      'Showing results for: the query as it was searched, when the search corrected words of it that no account carries in its name or description (nor any post) to the closest such word ("travl vlogger" searched as "travel vlogger"); the rest as typed. On every page of such a search. A `suggested_query` beside it corrects this text further, never repeats it.',
  }),
});

/** The entries of a lookup that named nothing get would serve, as sent (an additive v1 member). */
const notFoundSchema = z.array(z.string()).meta({
  description:
    'The entries (handles, shortcodes, IDs) that named nothing the get operation would answer with a record: unknown, unavailable or deleted. Each distinct entry once, as sent, in the order asked.',
});

/** Lookup of accounts by list (additive): accounts exactly as get account answers them. */
export const accountLookupResponseSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(accountSchema),
  not_found: notFoundSchema,
});

/** Lookup of posts by list (additive): posts exactly as get post answers them. */
export const postLookupResponseSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(fullPostSchema),
  not_found: notFoundSchema,
});

/** Spec part 7. */
export const problemSchema = z.strictObject({
  type: z.string(),
  status: z.number().int(),
  request_id: z.string(),
  detail: z.string(),
});

/** Contract §2: the intake response. */
export const intakeResponseSchema = z.strictObject({
  request_id: z.string(),
  accepted: z.number().int(),
  rejected: z.array(z.strictObject({ line: z.number().int(), detail: z.string() })),
});

export type AuthorSummary = z.infer<typeof authorSummarySchema>;
/** How a history is answered: every point, or the last point of each UTC day or ISO week. */
export const HISTORY_INTERVALS = ['raw', 'day', 'week'] as const;
export type HistoryInterval = (typeof HISTORY_INTERVALS)[number];

/** One point of a metric history: when, and each counter observed then (absent: not observed). */
function historyPointSchema<K extends string>(counters: readonly K[]) {
  return z.strictObject({
    at: timestamp,
    // Object.fromEntries answers a string-keyed record: its keys are exactly `counters`.
    ...(Object.fromEntries(counters.map((c) => [c, z.number().int().optional()])) as Record<
      K,
      z.ZodOptional<z.ZodNumber>
    >),
  });
}

function historySchema<K extends string>(counters: readonly K[], what: string) {
  return z.strictObject({
    id: z.string().meta({ description: `The ${what}'s ID.` }),
    interval: z.enum(HISTORY_INTERVALS),
    points: z.array(historyPointSchema(counters)).meta({ description: 'In time order.' }),
    from: timestamp.meta({ description: 'The range asked for (defaults resolved), inclusive.' }),
    to: timestamp,
  });
}

/** `GET /v1/social/accounts/{id}/history` (additive). */
export const accountHistorySchema = historySchema(ACCOUNT_COUNTERS, 'account');
/** `GET /v1/social/posts/{id}/history` (additive). */
export const postHistorySchema = historySchema(POST_COUNTERS, 'post');

export type Account = z.infer<typeof accountSchema>;
export type AccountHistory = z.infer<typeof accountHistorySchema>;
export type PostHistory = z.infer<typeof postHistorySchema>;
export type Audio = z.infer<typeof audioSchema>;
export type PostSummary = z.infer<typeof postSummarySchema>;
export type MediaItem = z.infer<typeof mediaItemSchema>;
export type FullPost = z.infer<typeof fullPostSchema>;
export type Problem = z.infer<typeof problemSchema>;
