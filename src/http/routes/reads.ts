import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccountService } from '../../services/accounts/account-service.ts';
import {
  accountHistorySchema,
  accountLookupResponseSchema,
  accountSchema,
  accountSearchResponseSchema,
  fullPostSchema,
  postHistorySchema,
  postLookupResponseSchema,
  postSearchResponseSchema,
  problemSchema,
} from '../../contract/api.ts';
import { PATH_ID_MAX_LENGTH } from '../../contract/ids.ts';
import type { KeyService } from '../../services/keys/key-service.ts';
import type { AccountSearchService, PostSearchService } from '../../services/search/search-service.ts';
import type { PostService } from '../../services/posts/post-service.ts';
import { accountSearchRequestSchema, postSearchRequestSchema } from '../../query/search-request.ts';
import { historyQuerySchema } from '../../query/history-request.ts';
import { accountLookupRequestSchema, lookupCost, postLookupRequestSchema } from '../../query/lookup-request.ts';
import { conditionalGet, conditionalHeaders, notModified } from '../conditional-get.ts';
import { requireKey } from '../plugins/auth.ts';
import type { Budgets } from '../plugins/rate-limit.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(PATH_ID_MAX_LENGTH) });
const errors = {
  401: problemSchema,
  403: problemSchema,
  404: problemSchema,
  410: problemSchema,
  422: problemSchema,
  429: problemSchema,
  503: problemSchema,
};
/** A lookup names its resources in the body: what it cannot find is listed, not a 404 or 410. */
const { 404: _notTracked, 410: _unavailable, ...lookupErrors } = errors;

/** Get post (4.3), get account (4.4): bare resources; search posts (4.1): an envelope. */
export const readRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  posts: PostService;
  postSearch: PostSearchService;
  accounts: AccountService;
  accountSearch: AccountSearchService;
  /** The per-key budgets, one limiter per policy shared by every route of the app. */
  budgets: Budgets;
}> = async (app, { keys, posts, postSearch, accounts, accountSearch, budgets }) => {
  const onRequest = requireKey(keys, 'search');
  const searches = budgets.search;
  const reads = budgets.read;

  app.get(
    '/v1/social/posts/:id',
    {
      onRequest,
      preValidation: reads.count,
      onSend: conditionalGet,
      schema: {
        operationId: 'getPost',
        params: idParams,
        headers: conditionalHeaders,
        response: { 200: fullPostSchema, 304: notModified, ...errors },
      },
    },
    async (request, reply) => reads.run(request, reply, () => posts.get(request.params.id)),
  );

  app.post(
    '/v1/social/posts/search',
    {
      onRequest,
      preValidation: searches.count,
      schema: {
        operationId: 'searchPosts',
        body: postSearchRequestSchema,
        response: { 200: postSearchResponseSchema, ...errors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await searches.run(request, reply, () => postSearch.search(request.body))),
    }),
  );

  app.post(
    '/v1/social/accounts/search',
    {
      onRequest,
      preValidation: searches.count,
      schema: {
        operationId: 'searchAccounts',
        body: accountSearchRequestSchema,
        response: { 200: accountSearchResponseSchema, ...errors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await searches.run(request, reply, () => accountSearch.search(request.body))),
    }),
  );

  app.get(
    '/v1/social/accounts/:id',
    {
      onRequest,
      preValidation: reads.count,
      onSend: conditionalGet,
      schema: {
        operationId: 'getAccount',
        params: idParams,
        headers: conditionalHeaders,
        response: { 200: accountSchema, 304: notModified, ...errors },
      },
    },
    async (request, reply) => reads.run(request, reply, () => accounts.get(request.params.id)),
  );

  // Lookups by list (additive): each entry spends one read of the key's budget.
  const entries = reads.countBy((request) => lookupCost(request.body));
  app.post(
    '/v1/social/accounts/lookup',
    {
      onRequest,
      preValidation: entries,
      schema: {
        operationId: 'lookupAccounts',
        body: accountLookupRequestSchema,
        response: { 200: accountLookupResponseSchema, ...lookupErrors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await reads.run(request, reply, () => accounts.lookup(request.body))),
    }),
  );

  app.post(
    '/v1/social/posts/lookup',
    {
      onRequest,
      preValidation: entries,
      schema: {
        operationId: 'lookupPosts',
        body: postLookupRequestSchema,
        response: { 200: postLookupResponseSchema, ...lookupErrors },
      },
    },
    async (request, reply) => ({
      request_id: request.id,
      ...(await reads.run(request, reply, () => posts.lookup(request.body))),
    }),
  );

  // Metric histories (additive): same IDs and aliases, problems, budget and ETag as the GETs.
  app.get(
    '/v1/social/accounts/:id/history',
    {
      onRequest,
      preValidation: reads.count,
      onSend: conditionalGet,
      schema: {
        operationId: 'getAccountHistory',
        params: idParams,
        querystring: historyQuerySchema,
        headers: conditionalHeaders,
        response: { 200: accountHistorySchema, 304: notModified, ...errors },
      },
    },
    async (request, reply) => reads.run(request, reply, () => accounts.history(request.params.id, request.query)),
  );

  app.get(
    '/v1/social/posts/:id/history',
    {
      onRequest,
      preValidation: reads.count,
      onSend: conditionalGet,
      schema: {
        operationId: 'getPostHistory',
        params: idParams,
        querystring: historyQuerySchema,
        headers: conditionalHeaders,
        response: { 200: postHistorySchema, 304: notModified, ...errors },
      },
    },
    async (request, reply) => reads.run(request, reply, () => posts.history(request.params.id, request.query)),
  );
};
