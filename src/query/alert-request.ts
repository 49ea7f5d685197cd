import { z } from 'zod';
import { canonicalTimeZone } from './count-window.ts';
import { closedObject } from './filter-schema.ts';
import type { PostSearch } from './search-codec.ts';
import { expectedKeys, OBJECT_EXPECTED, postScope, toPostRequest } from './search-request.ts';

/** The longest webhook URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const text = (max: number, what: string) =>
  z
    .string({ error: 'expected a string' })
    .max(max, { error: `expected at most ${max} characters` })
    .meta({ description: what });

/** `POST /v1/social/webhook-endpoints`. The URL's policy (https, addresses) is the service's to check. */
export const createEndpointSchema = closedObject(
  {
    url: text(
      MAX_WEBHOOK_URL_LENGTH,
      'Where events are POSTed: https (loopback and private addresses only where the operator allows them).',
    ).min(1, {
      error: 'expected a URL',
    }),
    description: text(500, 'A note for the holder.').nullable().optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['url', 'description']),
);

/** The windows a volume rule counts in: calendar hours or days of its time zone. */
export const VOLUME_INTERVALS = ['hour', 'day'] as const;
/** What a saved search tells of: each post that comes to match it, and its volume rule's crossings. */
export const SAVED_SEARCH_EVENTS = ['posts', 'volume'] as const;
/** Bounds of a volume rule. */
export const VOLUME_LIMITS = Object.freeze({
  above: 1_000_000,
  factor: { min: 1.5, max: 100 },
  baselineIntervals: { min: 7, max: 28 },
  minCount: 1_000_000,
});

/** A saved search's volume rule, as stored and shown (`time_zone` canonical). */
export interface VolumeRule {
  interval: (typeof VOLUME_INTERVALS)[number];
  time_zone: string;
  above?: number;
  spike?: { factor: number; baseline_intervals: number; min_count: number };
}

/** A validated saved search: its name, its scope, the endpoint it pushes to, its events. */
export interface SavedSearchInput {
  name: string;
  /** The `post` scope as the client sent it: what is stored and shown back (search-store.ts says why). */
  post: Record<string, unknown>;
  /** The normalized search of `post`. */
  search: PostSearch;
  webhookEndpointId: string | null;
  /** What it tells of (default `["posts"]`, and `"volume"` too with a volume rule). */
  events: Array<(typeof SAVED_SEARCH_EVENTS)[number]>;
  volume: VolumeRule | null;
}

const ZONE_EXPECTED = 'expected an IANA time zone name such as "Europe/Paris" or "UTC"';
const count = (max: number, what: string) => {
  const expected = `expected an integer from 1 to ${max}`;
  return z
    .int({ error: expected })
    .min(1, { error: expected })
    .max(max, { error: expected })
    .meta({ description: what });
};
const FACTOR_EXPECTED = `expected a number from ${VOLUME_LIMITS.factor.min} to ${VOLUME_LIMITS.factor.max}`;
const BASELINE_EXPECTED = `expected an integer from ${VOLUME_LIMITS.baselineIntervals.min} to ${VOLUME_LIMITS.baselineIntervals.max}`;

const spikeSchema = closedObject(
  {
    factor: z
      .number({ error: FACTOR_EXPECTED })
      .min(VOLUME_LIMITS.factor.min, { error: FACTOR_EXPECTED })
      .max(VOLUME_LIMITS.factor.max, { error: FACTOR_EXPECTED })
      .meta({ description: 'A window spikes when its count exceeds this many times the baseline median.' }),
    baseline_intervals: z
      .int({ error: BASELINE_EXPECTED })
      .min(VOLUME_LIMITS.baselineIntervals.min, { error: BASELINE_EXPECTED })
      .max(VOLUME_LIMITS.baselineIntervals.max, { error: BASELINE_EXPECTED })
      .meta({ description: 'The windows before the current one whose median is the baseline.' }),
    min_count: count(
      VOLUME_LIMITS.minCount,
      'The fewest posts a window must hold to spike (a median of 0 or 1 makes any post a multiple of it).',
    ),
  },
  OBJECT_EXPECTED,
  expectedKeys(['factor', 'baseline_intervals', 'min_count']),
).meta({ description: 'A spike: the window holds more than `factor` times the median of the windows before it.' });

/** A saved search's `volume`: a rule on how many of its posts one window holds. */
const volumeSchema = closedObject(
  {
    interval: z
      .enum(VOLUME_INTERVALS, { error: 'expected "hour" or "day"' })
      .meta({ description: "The window: a calendar hour or day of the time zone, by the posts' posted_at." }),
    time_zone: z
      .string({ error: ZONE_EXPECTED })
      .max(64, { error: ZONE_EXPECTED })
      .optional()
      .meta({ description: 'IANA time zone of the windows (default "UTC"), as post counts take it.' }),
    above: count(
      VOLUME_LIMITS.above,
      '`volume.exceeded` when the current window first holds more posts than this.',
    ).optional(),
    spike: spikeSchema.optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['interval', 'time_zone', 'above', 'spike']),
).meta({
  description:
    'A rule on the saved search\'s volume: at most one `volume.exceeded` and one `volume.spiked` event per window (docs/api-decisions.md, "Volume alerts").',
});

const EVENTS_EXPECTED = `expected a non-empty list of ${SAVED_SEARCH_EVENTS.map((e) => `"${e}"`).join(', ')}`;
const eventsSchema = z
  .array(z.enum(SAVED_SEARCH_EVENTS, { error: EVENTS_EXPECTED }), { error: EVENTS_EXPECTED })
  .min(1, { error: EVENTS_EXPECTED })
  .max(SAVED_SEARCH_EVENTS.length * 2, { error: EVENTS_EXPECTED })
  .meta({
    description:
      'What the search tells of: `posts` (a `post.matched` per post that comes to match) and `volume` (its volume rule\'s events). Default: `["posts"]`, and `["posts", "volume"]` with a volume rule.',
  });

/** The volume rule and events of a saved search, checked together (each names the other in its 422). */
function toEvents(
  body: { volume?: z.output<typeof volumeSchema> | undefined; events?: string[] | undefined },
  ctx: z.RefinementCtx,
): Pick<SavedSearchInput, 'events' | 'volume'> {
  let volume: VolumeRule | null = null;
  let valid = true;
  const issue = (path: Array<string | number>, message: string) => {
    ctx.addIssue({ code: 'custom', path, message });
    valid = false;
  };
  if (body.volume) {
    const { interval, above, spike } = body.volume;
    const timeZone = canonicalTimeZone(body.volume.time_zone ?? 'UTC');
    if (timeZone === null) issue(['volume', 'time_zone'], ZONE_EXPECTED);
    if (above === undefined && spike === undefined)
      issue(['volume'], 'expected "above", "spike" or both: a volume rule needs a threshold');
    volume = {
      interval,
      time_zone: timeZone ?? 'UTC',
      ...(above !== undefined && { above }),
      ...(spike !== undefined && { spike }),
    };
  }
  const events = body.events
    ? SAVED_SEARCH_EVENTS.filter((e) => body.events!.includes(e))
    : volume
      ? [...SAVED_SEARCH_EVENTS]
      : ['posts' as const];
  if (events.includes('volume') && !body.volume)
    issue(['events'], '"volume" needs a volume rule: add "volume" with "interval" and "above" or "spike"');
  if (body.volume && !events.includes('volume'))
    issue(['events'], 'a volume rule gives events only with "volume" listed here');
  return valid ? { events, volume } : z.NEVER;
}

/**
 * A saved search's `post` scope read into the normalized search: the post search's own scope,
 * checked by the same code (same 422s, named from `/post`), without `similar_to` (a window of
 * neighbours is no standing condition a new post can meet).
 */
function toSavedSearch(post: z.output<typeof postScope>, ctx: z.RefinementCtx): PostSearch {
  if (post.similar_to !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['post', 'similar_to'],
      message: 'a saved search matches posts by query and filters; "similar_to" is not one',
    });
    return z.NEVER;
  }
  const request = toPostRequest({ post }, ctx);
  return request.kind === 'initial' ? request.search : z.NEVER;
}

const sentScopeSchema = z.record(z.string(), z.unknown());

/**
 * The `post` scope of a saved search to create: validated by post search's scope, and kept as the
 * client sent it besides (the scope's output is normalized). The first step hands the value sent
 * to the last; every step is synchronous, so no other parse comes in between (as in
 * parse-filters.ts), and the reference is weak so that a body that failed does not linger.
 */
const postScopeAsSent = (() => {
  let sent: WeakRef<object> | undefined;
  return z.preprocess(
    (input) => {
      sent = typeof input === 'object' && input !== null ? new WeakRef(input) : undefined;
      return input;
    },
    postScope.transform((scope) => {
      const kept = sentScopeSchema.parse(sent?.deref());
      sent = undefined;
      return { scope, sent: kept };
    }),
  );
})();

/**
 * A stored saved search's scope (`{post}`, as its client sent it: search-store.ts says why) read
 * back into the normalized search by the schema that validated it at creation; the worker reads
 * saved searches with it (search-set.ts).
 */
export const storedSavedSearchSchema = z
  .object({ post: postScope })
  .transform((body, ctx): PostSearch => toSavedSearch(body.post, ctx));

/** `POST /v1/social/saved-searches`. */
export const createSavedSearchSchema = closedObject(
  {
    name: text(200, 'A name for the holder.').min(1, { error: 'expected a non-empty name' }),
    post: postScopeAsSent,
    webhook_endpoint_id: z
      .string({ error: 'expected a webhook endpoint ID' })
      .max(100, { error: 'expected a webhook endpoint ID' })
      .nullable()
      .optional()
      .meta({ description: 'Where new matches are pushed; without it they are only pulled (…/matches).' }),
    volume: volumeSchema.optional(),
    events: eventsSchema.optional(),
  },
  OBJECT_EXPECTED,
  expectedKeys(['name', 'post', 'webhook_endpoint_id', 'volume', 'events']),
).transform((body, ctx): SavedSearchInput => {
  const search = toSavedSearch(body.post.scope, ctx);
  const told = toEvents(body, ctx);
  return {
    name: body.name,
    post: body.post.sent,
    search,
    webhookEndpointId: body.webhook_endpoint_id ?? null,
    ...told,
  };
});

/** `GET /v1/social/saved-searches/{id}/matches`. */
export const matchesQuerySchema = z.strictObject({
  cursor: z
    .string()
    .max(200)
    .optional()
    .meta({ description: 'The next_cursor of a previous page; without it, from the oldest event kept.' }),
  limit: z.coerce
    .number({ error: 'expected an integer from 1 to 100' })
    .int({ error: 'expected an integer from 1 to 100' })
    .min(1, { error: 'expected an integer from 1 to 100' })
    .max(100, { error: 'expected an integer from 1 to 100' })
    .optional()
    .meta({ description: 'Events per page, default 20.' }),
});

/** A resource ID in a path. */
export const resourceParamsSchema = z.strictObject({ id: z.string().min(1).max(100) });
