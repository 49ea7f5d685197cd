import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  alertEventSchema,
  alertEventsPageSchema,
  createdWebhookEndpointSchema,
  deliveryAttemptSchema,
  listOf,
  rotatedSecretSchema,
  savedSearchSchema,
  webhookEndpointSchema,
} from '../../contract/alerts.ts';
import { problemSchema } from '../../contract/api.ts';
import {
  createEndpointSchema,
  createSavedSearchSchema,
  matchesQuerySchema,
  resourceParamsSchema,
} from '../../query/alert-request.ts';
import { LIMITS } from '../../query/search-request.ts';
import type { AlertService } from '../../services/alerts/alert-service.ts';
import type { KeyService } from '../../services/keys/key-service.ts';
import { requireKey } from '../plugins/auth.ts';
import type { Budgets } from '../plugins/rate-limit.ts';

const errors = {
  401: problemSchema,
  403: problemSchema,
  404: problemSchema,
  409: problemSchema,
  422: problemSchema,
  429: problemSchema,
  503: problemSchema,
};
const deleted = z.null().meta({ description: 'Deleted.' });
const deliveriesQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).optional() });

/**
 * Webhook endpoints and saved searches (additive, docs/api-decisions.md "Alerts"): owned by the
 * key's holder; the `search` scope and the reads' rate limit, which a request that changes
 * something passes before it acts (`mutate`).
 */
export const alertRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  alerts: AlertService;
  /** The per-key budgets, one limiter per policy shared by every route of the app. */
  budgets: Budgets;
}> = async (app, { keys, alerts, budgets }) => {
  const onRequest = requireKey(keys, 'search');
  const reads = budgets.read;
  const owner = (request: { apiKey?: { owner: string } }) => request.apiKey!.owner;
  const common = { onRequest, preValidation: reads.count };
  /** A route on one resource (`:id`): its operation, responses and query. */
  const onOne = <R extends Record<number, z.ZodType>, Q extends z.ZodType | undefined = undefined>(
    operationId: string,
    response: R,
    querystring?: Q,
  ) => ({
    ...common,
    // Without a query, no `querystring` key at all (Fastify warns of one set to nothing).
    schema: {
      operationId,
      params: resourceParamsSchema,
      response: { ...response, ...errors },
      // Either no key or `{ querystring }`: Fastify types the route by the key's type either way.
      ...((querystring ? { querystring } : {}) as { querystring: Q }),
    },
  });

  app.post(
    '/v1/social/webhook-endpoints',
    {
      ...common,
      schema: {
        operationId: 'createWebhookEndpoint',
        body: createEndpointSchema,
        response: { 201: createdWebhookEndpointSchema, ...errors },
      },
    },
    async (request, reply) => {
      const created = await reads.mutate(request, reply, () => alerts.createEndpoint(owner(request), request.body));
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/social/webhook-endpoints',
    {
      ...common,
      schema: { operationId: 'listWebhookEndpoints', response: { 200: listOf(webhookEndpointSchema), ...errors } },
    },
    async (request, reply) => ({
      request_id: request.id,
      data: await reads.run(request, reply, () => alerts.listEndpoints(owner(request))),
    }),
  );

  app.get(
    '/v1/social/webhook-endpoints/:id',
    onOne('getWebhookEndpoint', { 200: webhookEndpointSchema }),
    async (request, reply) => reads.run(request, reply, () => alerts.getEndpoint(owner(request), request.params.id)),
  );

  app.delete(
    '/v1/social/webhook-endpoints/:id',
    onOne('deleteWebhookEndpoint', { 204: deleted }),
    async (request, reply) => {
      await reads.mutate(request, reply, () => alerts.deleteEndpoint(owner(request), request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/social/webhook-endpoints/:id/rotate-secret',
    onOne('rotateWebhookSecret', { 200: rotatedSecretSchema }),
    async (request, reply) =>
      reads.mutate(request, reply, () => alerts.rotateSecret(owner(request), request.params.id)),
  );

  app.post(
    '/v1/social/webhook-endpoints/:id/enable',
    onOne('enableWebhookEndpoint', { 200: webhookEndpointSchema }),
    async (request, reply) =>
      reads.mutate(request, reply, () => alerts.enableEndpoint(owner(request), request.params.id)),
  );

  app.post(
    '/v1/social/webhook-endpoints/:id/test',
    onOne('sendWebhookTest', { 202: alertEventSchema }),
    async (request, reply) => {
      const event = await reads.mutate(request, reply, () => alerts.sendTestEvent(owner(request), request.params.id));
      return reply.code(202).send(event);
    },
  );

  app.get(
    '/v1/social/webhook-endpoints/:id/deliveries',
    onOne('listWebhookDeliveries', { 200: listOf(deliveryAttemptSchema) }, deliveriesQuery),
    async (request, reply) => ({
      request_id: request.id,
      data: await reads.run(request, reply, () =>
        alerts.deliveries(owner(request), request.params.id, request.query.limit ?? 20),
      ),
    }),
  );

  app.post(
    '/v1/social/saved-searches',
    {
      ...common,
      schema: {
        operationId: 'createSavedSearch',
        body: createSavedSearchSchema,
        response: { 201: savedSearchSchema, ...errors },
      },
    },
    async (request, reply) => {
      const created = await reads.mutate(request, reply, () => alerts.createSearch(owner(request), request.body));
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/social/saved-searches',
    {
      ...common,
      schema: { operationId: 'listSavedSearches', response: { 200: listOf(savedSearchSchema), ...errors } },
    },
    async (request, reply) => ({
      request_id: request.id,
      data: await reads.run(request, reply, () => alerts.listSearches(owner(request))),
    }),
  );

  app.get(
    '/v1/social/saved-searches/:id',
    onOne('getSavedSearch', { 200: savedSearchSchema }),
    async (request, reply) => reads.run(request, reply, () => alerts.getSearch(owner(request), request.params.id)),
  );

  app.delete('/v1/social/saved-searches/:id', onOne('deleteSavedSearch', { 204: deleted }), async (request, reply) => {
    await reads.mutate(request, reply, () => alerts.deleteSearch(owner(request), request.params.id));
    return reply.code(204).send(null);
  });

  app.get(
    '/v1/social/saved-searches/:id/matches',
    onOne('listSavedSearchMatches', { 200: alertEventsPageSchema }, matchesQuerySchema),
    async (request, reply) => ({
      request_id: request.id,
      ...(await reads.run(request, reply, () =>
        alerts.matches(owner(request), request.params.id, {
          cursor: request.query.cursor,
          limit: request.query.limit ?? LIMITS.default,
        }),
      )),
    }),
  );
};
