import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problemSchema } from '../../contract/api.ts';
import { countsResponseSchema, facetsResponseSchema } from '../../contract/search-extras.ts';
import { postCountsRequestSchema } from '../../query/counts-request.ts';
import { accountFacetsRequestSchema, postFacetsRequestSchema } from '../../query/facet-request.ts';
import type { PostCountsService } from '../../services/search/counts-service.ts';
import { answerTag, conditionalGet, conditionalHeaders, notModified } from '../conditional-get.ts';
import type { KeyService } from '../../services/keys/key-service.ts';
import type { AccountFacetsService, PostFacetsService } from '../../services/search/facets-service.ts';
import { requireKey } from '../plugins/auth.ts';
import type { Budgets } from '../plugins/rate-limit.ts';

const errors = {
  401: problemSchema,
  403: problemSchema,
  410: problemSchema,
  422: problemSchema,
  429: problemSchema,
  503: problemSchema,
};

/**
 * Post facets, account facets and post counts: registered like the searches (search scope, the
 * searches' rate limit and budget, zod request and response schemas). Counts also revalidate
 * like the reads (ETag, 304).
 */
export const facetRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  postFacets: PostFacetsService;
  accountFacets: AccountFacetsService;
  postCounts: PostCountsService;
  /** The per-key budgets, one limiter per policy shared by every route of the app. */
  budgets: Budgets;
}> = async (app, { keys, postFacets, accountFacets, postCounts, budgets }) => {
  const onRequest = requireKey(keys, 'search');
  const searches = budgets.search;

  app.post(
    '/v1/social/posts/facets',
    {
      onRequest,
      preValidation: searches.count,
      schema: {
        operationId: 'postFacets',
        body: postFacetsRequestSchema,
        response: { 200: facetsResponseSchema, ...errors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await searches.run(request, reply, () => postFacets.facets(request.body))),
    }),
  );

  app.post(
    '/v1/social/accounts/facets',
    {
      onRequest,
      preValidation: searches.count,
      schema: {
        operationId: 'accountFacets',
        body: accountFacetsRequestSchema,
        response: { 200: facetsResponseSchema, ...errors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await searches.run(request, reply, () => accountFacets.facets(request.body))),
    }),
  );

  app.post(
    '/v1/social/posts/counts',
    {
      onRequest,
      preValidation: searches.count,
      onSend: conditionalGet,
      schema: {
        operationId: 'countPosts',
        body: postCountsRequestSchema,
        headers: conditionalHeaders,
        response: { 200: countsResponseSchema, 304: notModified, ...errors },
      },
    },
    async (request, reply) => {
      const counts = await searches.run(request, reply, () => postCounts.counts(request.body));
      reply.header('etag', answerTag(counts));
      return { request_id: request.id, ...counts };
    },
  );
};
