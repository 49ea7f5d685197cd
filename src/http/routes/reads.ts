import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccountService } from '../../accounts/account-service.ts';
import { accountSchema, fullPostSchema, problemSchema } from '../../contract/api.ts';
import type { KeyService } from '../../keys/key-service.ts';
import type { PostService } from '../../posts/post-service.ts';
import { requireKey } from '../plugins/auth.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(256) });
const errors = { 401: problemSchema, 403: problemSchema, 404: problemSchema, 410: problemSchema, 422: problemSchema, 503: problemSchema };

/** Get post (spec 4.3) and get account (spec 4.4): bare resources, no envelope. */
export const readRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  posts: PostService;
  accounts: AccountService;
}> = async (app, { keys, posts, accounts }) => {
  const onRequest = requireKey(keys, 'search');

  app.get(
    '/v1/social/posts/:id',
    { onRequest, schema: { operationId: 'getPost', params: idParams, response: { 200: fullPostSchema, ...errors } } },
    async (request) => posts.get(request.params.id),
  );

  app.get(
    '/v1/social/accounts/:id',
    { onRequest, schema: { operationId: 'getAccount', params: idParams, response: { 200: accountSchema, ...errors } } },
    async (request) => accounts.get(request.params.id),
  );
};
