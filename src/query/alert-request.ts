import { z } from 'zod';
import { closedObject } from './filter-schema.ts';
import { expectedKeys, OBJECT_EXPECTED, postScope, toPostRequest, type PostSearch } from './search-request.ts';

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

/** A validated saved search: its name, the normalized search, the endpoint it pushes to. */
export interface SavedSearchInput {
  name: string;
  search: PostSearch;
  webhookEndpointId: string | null;
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

/**
 * A stored saved search's scope (`{post}`, as its client sent it) read back into the normalized
 * search, by the very schema that validated it at creation: the worker reads saved searches with
 * it (search-set.ts), never by casting stored JSON.
 */
export const storedSavedSearchSchema = z
  .object({ post: postScope })
  .transform((body, ctx): PostSearch => toSavedSearch(body.post, ctx));

/** `POST /v1/social/saved-searches`. */
export const createSavedSearchSchema = closedObject(
  {
    name: text(200, 'A name for the holder.').min(1, { error: 'expected a non-empty name' }),
    post: postScope,
    webhook_endpoint_id: z
      .string({ error: 'expected a webhook endpoint ID' })
      .max(100, { error: 'expected a webhook endpoint ID' })
      .nullable()
      .optional()
      .meta({ description: 'Where new matches are pushed; without it they are only pulled (…/matches).' }),
  },
  OBJECT_EXPECTED,
  expectedKeys(['name', 'post', 'webhook_endpoint_id']),
).transform((body, ctx): SavedSearchInput => ({
  name: body.name,
  search: toSavedSearch(body.post, ctx),
  webhookEndpointId: body.webhook_endpoint_id ?? null,
}));

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
