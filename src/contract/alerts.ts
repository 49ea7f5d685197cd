import { z } from 'zod';
import { postSummarySchema } from './api.ts';

/**
 * Wire schemas of the alert resources (additive in v1, docs/api-decisions.md "Alerts"): webhook
 * endpoints, saved searches, their events and delivery logs. Fields named by the product's design
 * come first; additions after them.
 */

const timestamp = z.string();

/** A webhook endpoint as every read shows it (the secret only ever in the create and rotate answers). */
export const webhookEndpointSchema = z.strictObject({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  created_at: timestamp,
  disabled_reason: z.string().nullable().meta({ description: 'Why deliveries stopped (null while enabled).' }),
});

/** `POST /v1/social/webhook-endpoints`: the endpoint with its signing secret, shown this once. */
export const createdWebhookEndpointSchema = z.strictObject({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  secret: z.string().meta({ description: 'The signing secret (`whsec_…`), shown only in this answer.' }),
  created_at: timestamp,
  disabled_reason: z.string().nullable(),
});

/** `POST …/{id}/rotate-secret`. */
export const rotatedSecretSchema = z.strictObject({
  id: z.string(),
  secret: z.string().meta({ description: 'The new signing secret, shown only in this answer.' }),
  previous_secret_expires_at: timestamp.meta({
    description: 'Until then every delivery carries signatures by both secrets.',
  }),
});

/** One delivery attempt. */
export const deliveryAttemptSchema = z.strictObject({
  at: timestamp,
  event_id: z.string(),
  attempt: z.number().int(),
  status: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null: no answer." }),
  latency_ms: z.number().int(),
  error: z.string().nullable(),
});

/** A saved search as every read shows it. */
export const savedSearchSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  post: z.record(z.string(), z.unknown()).meta({ description: 'The post scope, as sent.' }),
  webhook_endpoint_id: z.string().nullable(),
  created_at: timestamp,
  last_match_at: timestamp.nullable().meta({ description: 'When a post last came to match it.' }),
  events_dropped: z.number().int().meta({
    description:
      'Matches not recorded because the saved search had recorded its limit of events in 30 days (SAVED_SEARCH_EVENT_LIMIT): a search this broad is better narrowed.',
  }),
  events: z.array(z.enum(['posts', 'volume'])).meta({
    description:
      'What it tells of: `posts` (a `post.matched` per post that comes to match), `volume` (its volume rule).',
  }),
  volume: z
    .strictObject({
      interval: z.enum(['hour', 'day']),
      time_zone: z.string(),
      above: z.number().int().optional(),
      spike: z
        .strictObject({ factor: z.number(), baseline_intervals: z.number().int(), min_count: z.number().int() })
        .optional(),
    })
    .nullable()
    .meta({ description: 'Its volume rule (null: none), the time zone in its canonical spelling.' }),
});

/** The window a volume event is about: `[start, end)`, ISO 8601 with the rule's zone's offset. */
const volumeWindowSchema = z.strictObject({ start: timestamp, end: timestamp });

/**
 * One event: a post that came to match a saved search, a window whose volume crossed the saved
 * search's rule, or a test event.
 */
export const alertEventSchema = z.strictObject({
  id: z.string().meta({ description: '`evt_…`: the same on every delivery attempt of the event (`webhook-id`).' }),
  type: z.enum(['post.matched', 'webhook.test', 'volume.exceeded', 'volume.spiked']),
  created_at: timestamp,
  data: z.strictObject({
    saved_search_id: z.string().optional(),
    webhook_endpoint_id: z.string().optional(),
    post: postSummarySchema.optional(),
    window: volumeWindowSchema.optional().meta({ description: 'Volume events: the window whose posts were counted.' }),
    count: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Volume events: the posts of the window counted when it crossed the rule.' }),
    above: z.number().int().optional().meta({ description: "`volume.exceeded`: the rule's threshold." }),
    factor: z.number().optional().meta({ description: "`volume.spiked`: the rule's factor." }),
    baseline: z
      .strictObject({
        intervals: z.number().int(),
        median: z.number(),
        counts: z.array(z.number().int()).meta({ description: 'The posts of each baseline window, oldest first.' }),
      })
      .optional()
      .meta({ description: '`volume.spiked`: the windows before this one and their median.' }),
  }),
});

/** A list of an owner's resources (capped per holder, so never paged). */
export function listOf<T extends z.ZodType>(item: T) {
  return z.strictObject({ request_id: z.string(), data: z.array(item) });
}

/** `GET /v1/social/saved-searches/{id}/matches`. */
export const alertEventsPageSchema = z.strictObject({
  request_id: z.string(),
  data: z.array(alertEventSchema),
  has_more: z.boolean(),
  next_cursor: z.string().meta({
    description:
      'Where to continue: after the last event shown, or, when there is none yet, where this page began. Never null: poll it for new events.',
  }),
});

export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
export type SavedSearch = z.infer<typeof savedSearchSchema>;
export type AlertEvent = z.infer<typeof alertEventSchema>;
