import { z } from 'zod';
import { entriesOf, isKeyOf, keysOf } from '../internal/typed-objects.ts';

/**
 * Zod schemas of the observation kinds of the operations contract §3. Every line of an intake
 * request is parsed on its own with {@link observationSchema}. Objects are strict: a field the
 * contract does not name is a rejected line with a precise reason, never silently dropped.
 * Timestamps are normalized to `YYYY-MM-DDTHH:mm:ss.sssZ`, so that string order is time order.
 */

/** The shape of a UTC timestamp, calendar aside: tells "not a timestamp" from "not a real one". */
const UTC_TIMESTAMP_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]00:00)$/;

/**
 * A real UTC timestamp of the years 1000 to 9999, calendar included (month lengths, 29 February in
 * leap years only). Four-digit years keep every date the service derives from one (a growth window
 * 90 days back, a week's end) a four-digit year as well, which the engine's date format requires;
 * and the pattern, published in the OpenAPI document, accepts exactly what the service accepts, so
 * a client or fuzzer generating from it never meets a 422 for a string the pattern allows.
 */
const UTC_TIMESTAMP = new RegExp(
  '^(?:[1-9]\\d{3}-(?:' +
    // Any year: days 01-28 of every month, 29-30 of every month but February, 31 of the long ones.
    '(?:0[1-9]|1[0-2])-(?:0[1-9]|1\\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)' +
    // 29 February: years divisible by 4, centuries only when divisible by 400.
    '|(?:[1-9]\\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)-02-29)' +
    'T(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?(?:Z|[+-]00:00)$',
);

/** The parts of a timestamp {@link UTC_TIMESTAMP} admitted: day, hour and minute, second, fraction. */
const TIMESTAMP_PARTS = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?/;

/** An ISO 8601 UTC timestamp (`Z` or `+00:00`), normalized to millisecond `…Z` form. */
export const utcTimestamp = z
  .string()
  .regex(UTC_TIMESTAMP, {
    error: (issue) =>
      typeof issue.input !== 'string' || !UTC_TIMESTAMP_SHAPE.test(issue.input)
        ? 'expected an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00Z'
        : issue.input < '1000'
          ? `expected a year from 1000 to 9999: ${issue.input}`
          : `not a real date and time: ${issue.input}`,
  })
  .transform((value) => {
    // The pattern admitted a real date and time of a four-digit year, so its normal form is its
    // own parts put together, as toISOString would (the fraction cut, not rounded, to
    // milliseconds): no Date, which was 6 % of the API's CPU in a profiled intake bench (2026-12-06).
    const [, day, minute, second = '00', fraction = ''] = TIMESTAMP_PARTS.exec(value) ?? [];
    return `${day}T${minute}:${second}.${(fraction + '000').slice(0, 3)}Z`;
  });

const platformId = z.string().min(1).max(200);
const url = z.url({ protocol: /^https?$/ }).max(4096);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const classificationIds = z.array(z.string().min(1).max(200)).max(200);
const text = (max: number) => z.string().max(max);
/** Arrays whose element shape the spec does not show; kept and returned as given. */
/**
 * Any JSON value (platform-shaped data the spec does not detail, passed through). Bodies are parsed
 * JSON, so every value is one already; described as `{}` (any) in documents, where a recursive
 * union would only make generated client types circular.
 */
export const jsonValue = z.unknown().meta({ id: 'JsonValue', description: 'Any JSON value, passed through as given.' });

const opaqueArray = z.array(jsonValue).max(1000);

/** The account-summary-bearing part of an account observation. */
const accountProfile = {
  handle: z
    .string()
    .min(1)
    .max(100)
    .regex(/^@?[^\s@]+$/, 'a handle has no whitespace and at most one leading "@"')
    .transform((h) => h.replace(/^@/, '')),
  display_name: text(500),
  web_url: url,
  avatar_source_url: url.nullable(),
  biography: text(5000),
  bio_links: z.array(z.strictObject({ url, title: text(500) })).max(100),
  account_type: z.string().min(1).max(100),
  category_label: text(200),
  declared_locations: z
    .array(
      z.strictObject({
        country_code: z.string().max(10),
        region_code: z.string().max(20),
        locality: text(200),
      }),
    )
    .max(50),
  is_verified: z.boolean(),
  is_private: z.boolean(),
  followers_count: count,
  following_count: count,
  posts_count: count,
};

const activeAccount = z.strictObject({
  kind: z.literal('account'),
  platform_id: platformId,
  observed_at: utcTimestamp,
  status: z.literal('active'),
  ...accountProfile,
});

/** A non-active account needs only its identity and status; other fields are checked but not kept. */
const inactiveAccount = z.strictObject({
  kind: z.literal('account'),
  platform_id: platformId,
  observed_at: utcTimestamp,
  status: z.enum(['deactivated', 'deleted', 'unobservable']),
  ...z.object(accountProfile).partial().shape,
});

export const accountObservation = z.discriminatedUnion('status', [activeAccount, inactiveAccount]);

const audio = z.strictObject({
  platform_id: platformId.nullable(),
  type: z.string().min(1).max(100),
  title: text(1000),
  attribution_display_name: text(500),
  attribution_account_platform_id: platformId.nullable(),
  duration_seconds: z.number().min(0),
  web_url: url.nullable(),
});

const mediaItem = z
  .strictObject({
    platform_id: platformId,
    type: z.enum(['image', 'video']),
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    source_url: url,
    duration_seconds: z.number().min(0).nullable().optional(),
    thumbnail_source_url: url.nullable().optional(),
  })
  .superRefine((m, ctx) => {
    if (m.type === 'image' && (m.duration_seconds != null || m.thumbnail_source_url != null)) {
      ctx.addIssue({
        code: 'custom',
        message: 'an image item has no duration_seconds or thumbnail_source_url',
      });
    }
  });

const postFields = {
  shortcode: z.string().min(1).max(100),
  web_url: url,
  author_platform_id: platformId,
  coauthor_platform_ids: z.array(platformId).max(20),
  posted_at: utcTimestamp,
  format: z.string().min(1).max(100),
  caption: text(30_000),
  caption_mentions: opaqueArray,
  comments_enabled: z.boolean(),
  views: count.nullable(),
  likes: count,
  comments: count,
  audio: audio.nullable(),
  media: z
    .array(mediaItem)
    .min(1)
    .max(100)
    .refine((items) => new Set(items.map((m) => m.platform_id)).size === items.length, {
      message: 'media platform_id values must be distinct',
    }),
  hashtags: z
    .array(
      z
        .string()
        .min(1)
        .max(200)
        .transform((h) => h.replace(/^#/, '')),
    )
    .max(500)
    .optional(),
};

const availablePost = z.strictObject({
  kind: z.literal('post'),
  platform_id: platformId,
  observed_at: utcTimestamp,
  status: z.literal('available'),
  ...postFields,
});

const unavailablePost = z.strictObject({
  kind: z.literal('post'),
  platform_id: platformId,
  observed_at: utcTimestamp,
  status: z.literal('unavailable'),
  ...z.object(postFields).partial().shape,
});

export const postObservation = z.discriminatedUnion('status', [availablePost, unavailablePost]);

const summaryItem = text(5000);
const labels = z.array(z.string().min(1).max(200)).max(100);

/** The counters an `account` observation carries: each observation of them is a metric history point. */
export const ACCOUNT_COUNTERS = ['followers_count', 'following_count', 'posts_count'] as const;
/** The counters a `post` observation carries (`views` may be null: then it is not a point's). */
export const POST_COUNTERS = ['views', 'likes', 'comments'] as const;

/** Post enrichment fields of spec 2.4, each optional (absent = untouched) and nullable. */
const postEnrichmentFields = {
  primary_language: z.string().min(1).max(20).nullable(),
  content_summary: text(10_000).nullable(),
  topics: classificationIds.nullable(),
  creative_formats: classificationIds.nullable(),
  hook: z.strictObject({ construction: summaryItem, devices: labels, modalities: labels }).nullable(),
  key_messages: z
    .array(z.strictObject({ summary: summaryItem, roles: labels, presentation: z.string().max(200) }))
    .max(100)
    .nullable(),
  proofs: z
    .array(z.strictObject({ summary: summaryItem, mechanisms: labels, cited_source_types: labels }))
    .max(100)
    .nullable(),
  offers: z
    .array(z.strictObject({ summary: summaryItem, types: labels, stated_terms: labels }))
    .max(100)
    .nullable(),
  calls_to_action: z
    .array(z.strictObject({ summary: summaryItem, actions: labels, stages: labels, modalities: labels }))
    .max(100)
    .nullable(),
  narrative_structure: z.strictObject({ description: summaryItem, patterns: labels }).nullable(),
  has_paid_partnership_label: z.boolean().nullable(),
  paid_partners: opaqueArray.nullable(),
  commercial_contexts: classificationIds.nullable(),
};

/** Names of the post enrichment fields. */
export type PostEnrichmentField = keyof typeof postEnrichmentFields;
export const POST_ENRICHMENT_FIELDS = keysOf(postEnrichmentFields);
/** The value each post enrichment field carries, as its schema parses it (null: known to be absent). */
export type PostEnrichmentValues = { [K in PostEnrichmentField]: z.infer<(typeof postEnrichmentFields)[K]> };

const visibleText = z
  .array(
    z.strictObject({
      text: text(10_000),
      start_seconds: z.number().min(0).optional(),
      end_seconds: z.number().min(0).optional(),
    }),
  )
  .max(1000)
  .nullable();

/** Per-media enrichment fields. */
const mediaEnrichmentFields = {
  transcript: text(200_000).nullable(),
  visible_text: visibleText,
  visual_description: text(20_000).nullable(),
};
export type MediaEnrichmentField = keyof typeof mediaEnrichmentFields;
export const MEDIA_ENRICHMENT_FIELDS = keysOf(mediaEnrichmentFields);
/** The value each per-media enrichment field carries, as its schema parses it. */
export type MediaEnrichmentValues = { [K in MediaEnrichmentField]: z.infer<(typeof mediaEnrichmentFields)[K]> };

const postEnrichmentObservation = z.strictObject({
  kind: z.literal('post_enrichment'),
  post_platform_id: platformId,
  produced_at: utcTimestamp,
  ...z.object(postEnrichmentFields).partial().shape,
  media: z
    .array(z.strictObject({ platform_id: platformId, ...z.object(mediaEnrichmentFields).partial().shape }))
    .max(100)
    .optional(),
});

const accountEnrichmentObservation = z.strictObject({
  kind: z.literal('account_enrichment'),
  account_platform_id: platformId,
  produced_at: utcTimestamp,
  publishing_summary: text(10_000).nullable().optional(),
  publishing_languages: z.array(z.string().min(1).max(20)).max(50).nullable().optional(),
  niches: classificationIds.nullable().optional(),
});

const schemaByKind = {
  account: accountObservation,
  post: postObservation,
  post_enrichment: postEnrichmentObservation,
  account_enrichment: accountEnrichmentObservation,
} as const;

/** Component names of the observation schemas in generated documents (OpenAPI). */
export const OBSERVATION_SCHEMA_IDS = {
  account: 'AccountObservation',
  post: 'PostObservation',
  post_enrichment: 'PostEnrichmentObservation',
  account_enrichment: 'AccountEnrichmentObservation',
} as const satisfies Record<keyof typeof schemaByKind, string>;
for (const [kind, id] of entriesOf(OBSERVATION_SCHEMA_IDS)) {
  z.globalRegistry.add(schemaByKind[kind], { id });
}

/** The observation kinds of contract §3. */
const OBSERVATION_KINDS = keysOf(schemaByKind);

/** Result of {@link parseObservation}. */
export type ParsedObservation = { ok: true; value: Observation } | { ok: false; detail: string };

/**
 * Validates one observation. `kind` is checked first, so that the reasons name the fields of the
 * right kind; a failure's detail lists each problem as `JSON-pointer: reason`.
 */
export function parseObservation(value: unknown): ParsedObservation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, detail: 'expected a JSON object' };
  }
  const kind: unknown = Reflect.get(value, 'kind');
  if (typeof kind !== 'string' || !isKeyOf(schemaByKind, kind)) {
    return {
      ok: false,
      detail: `/kind: expected one of ${OBSERVATION_KINDS.map((k) => `"${k}"`).join(', ')}`,
    };
  }
  const result = schemaByKind[kind].safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, detail: formatIssues(result.error.issues) };
}

/**
 * Renders zod issues as `pointer: reason` pairs ({@link formatPairs}). Given the `input` parsed, a
 * field it lacks reads `required, <the schema's own reason>`, not as if a wrong value were there.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], base = '', input?: unknown): string {
  return formatPairs(
    issues.flatMap((issue): Array<[string, string]> => {
      const pointer = base + toPointer(issue.path);
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((key) => [`${pointer}${toPointer([key])}`, 'unknown field']);
      if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined'))
        return [[pointer || '/', 'required']];
      if (lacks(input, issue.path))
        return [[pointer || '/', `required, ${issue.message.replace(/^Invalid input: /, '')}`]];
      // A discriminated union's key missing or unknown (an observation's `status`): its values in
      // the words `/kind` uses, not zod's "Invalid discriminator value. Expected 'a' | 'b'".
      if (issue.code === 'invalid_union' && 'options' in issue && issue.options?.length)
        return [[pointer || '/', `expected one of ${issue.options.map((o) => JSON.stringify(o)).join(', ')}`]];
      return [[pointer || '/', issue.message.replace(/^Invalid input: /, '')]];
    }),
  );
}

/** Pairs and pointers a detail shows before it says how many more there are. */
const SHOWN = 5;

/**
 * A 422's detail from `[pointer, reason]` pairs: `pointer: reason`, at most five, and how many were
 * left out. Pointers with the same reason share one pair (`/a, /b: unknown field; expected …`), so
 * a reason that lists the allowed names is given once, however many keys it answers.
 */
export function formatPairs(pairs: ReadonlyArray<readonly [string, string]>): string {
  const byReason = new Map<string, string[]>();
  for (const [pointer, reason] of pairs) {
    const pointers = byReason.get(reason);
    if (pointers) pointers.push(pointer);
    else byReason.set(reason, [pointer]);
  }
  const more = (n: number) => ` and ${n - SHOWN} more`;
  const parts = [...byReason].map(
    ([reason, pointers]) =>
      `${pointers.slice(0, SHOWN).join(', ')}${pointers.length > SHOWN ? more(pointers.length) : ''}: ${reason}`,
  );
  const shown = parts.slice(0, SHOWN);
  if (parts.length > SHOWN) shown.push(`and ${parts.length - SHOWN} more`);
  return shown.join('; ');
}

/** Whether `input` lacks the field at `path`: the object that would hold it has no such key (false without `input`). */
function lacks(input: unknown, path: readonly PropertyKey[]): boolean {
  if (input === undefined || path.length === 0) return false;
  let parent: unknown = input;
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return false;
    parent = Reflect.get(parent, key);
  }
  return (
    typeof parent === 'object' && parent !== null && !Array.isArray(parent) && !Object.hasOwn(parent, path.at(-1)!)
  );
}

/** RFC 6901 JSON pointer of a path. */
export function toPointer(path: readonly PropertyKey[]): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export type AccountObservation = z.infer<typeof accountObservation>;
export type PostObservation = z.infer<typeof postObservation>;
export type PostEnrichmentObservation = z.infer<typeof postEnrichmentObservation>;
export type AccountEnrichmentObservation = z.infer<typeof accountEnrichmentObservation>;
export type Observation =
  AccountObservation | PostObservation | PostEnrichmentObservation | AccountEnrichmentObservation;
