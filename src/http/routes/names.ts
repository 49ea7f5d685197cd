import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problemSchema } from '../../contract/api.ts';
import { suggestResponseSchema, taxonomyResponseSchema } from '../../contract/names.ts';
import { suggestQuerySchema } from '../../query/suggest-request.ts';
import { taxonomyParamsSchema } from '../../query/taxonomies.ts';
import type { KeyService } from '../../services/keys/key-service.ts';
import type { SuggestService } from '../../services/names/suggest-service.ts';
import type { TaxonomyService } from '../../services/names/taxonomy-service.ts';
import { requireKey } from '../plugins/auth.ts';
import type { Budgets } from '../plugins/rate-limit.ts';

const errors = {
  401: problemSchema,
  403: problemSchema,
  422: problemSchema,
  429: problemSchema,
  503: problemSchema,
};

/**
 * Typeahead and the dictionaries (additive): the search scope, each request one read of the
 * key's budget (a typeahead asks once per keystroke, which the searches' budget is not sized for).
 */
export const nameRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  suggest: SuggestService;
  taxonomies: TaxonomyService;
  /** The per-key budgets, one limiter per policy shared by every route of the app. */
  budgets: Budgets;
}> = async (app, { keys, suggest, taxonomies, budgets }) => {
  const onRequest = requireKey(keys, 'search');
  const reads = budgets.read;

  app.get(
    '/v1/social/suggest',
    {
      onRequest,
      preValidation: reads.count,
      schema: {
        operationId: 'suggest',
        querystring: suggestQuerySchema,
        response: { 200: suggestResponseSchema, ...errors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await reads.run(request, reply, () => suggest.suggest(request.query))),
    }),
  );

  app.get(
    '/v1/social/taxonomies/:name',
    {
      onRequest,
      preValidation: reads.count,
      schema: {
        operationId: 'getTaxonomy',
        params: taxonomyParamsSchema,
        response: { 200: taxonomyResponseSchema, ...errors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await reads.run(request, reply, () => taxonomies.list(request.params.name))),
    }),
  );
};
