import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problemSchema } from '../../contract/api.ts';
import { PATH_ID_MAX_LENGTH } from '../../contract/ids.ts';
import { MEDIA_KINDS, type MediaUrlSigner } from '../../media/url-signer.ts';

const MAX_CACHE_SECONDS = 86_400;

/**
 * Delivery routes (spec 2.6, contract §4): signed, expiring URLs that answer 302 to the source.
 * No bearer key: the signature is the credential, so the URLs work in `<img src>`.
 */
export const mediaRoutes: FastifyPluginAsyncZod<{ signer: MediaUrlSigner; now?: () => number }> = async (
  app,
  { signer, now = Date.now },
) => {
  app.get(
    '/v1/social/delivery/:kind/:id',
    {
      schema: {
        operationId: 'deliver',
        params: z.strictObject({
          kind: z.enum(MEDIA_KINDS),
          id: z.string().min(1).max(PATH_ID_MAX_LENGTH),
        }),
        querystring: z.object({
          src: z.string().max(8192).optional(),
          exp: z.string().max(20).optional(),
          sig: z.string().max(100).optional(),
        }),
        response: {
          302: z
            .null()
            .meta({ description: 'Found: redirects to the source URL (Location), cacheable until the URL expires.' }),
          403: problemSchema,
          410: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const { source, expiresAt } = signer.verify(request.params.kind, request.params.id, request.query);
      const maxAge = Math.max(0, Math.min(MAX_CACHE_SECONDS, expiresAt - Math.floor(now() / 1000)));
      return reply
        .header('cache-control', `public, max-age=${maxAge}`)
        .header('expires', new Date(expiresAt * 1000).toUTCString())
        .redirect(source, 302);
    },
  );
};
