import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { randomBytes } from 'node:crypto';
import type { AccountService } from '../services/accounts/account-service.ts';
import type { DeliverySigner } from '../delivery/signer.ts';
import type { IntakeService } from '../services/intake/intake-service.ts';
import type { KeyService } from '../services/keys/key-service.ts';
import type { SearchRateLimitOptions } from './plugins/rate-limit.ts';
import type { AccountSearchService, PostSearchService } from '../services/search/search-service.ts';
import type { AccountFacetsService, PostFacetsService } from '../services/search/facets-service.ts';
import type { PostService } from '../services/posts/post-service.ts';
import { registerProblemHandling } from './problems.ts';
import { zodValidatorCompiler } from './validation.ts';
import { deliveryRoutes } from './routes/delivery.ts';
import { facetRoutes } from './routes/facets.ts';
import { healthRoutes, type ReadinessCheck } from './routes/health.ts';
import { intakeRoutes } from './routes/intake.ts';
import { readRoutes } from './routes/reads.ts';

/** Name of the response header that carries the request identity (spec 4.5). */
const REQUEST_ID_HEADER = 'x-request-id';

/** Everything the HTTP layer needs: services, not infrastructure. */
export interface AppDependencies {
  baseUrl: string;
  keys: KeyService;
  posts: PostService;
  postSearch: PostSearchService;
  accounts: AccountService;
  accountSearch: AccountSearchService;
  postFacets: PostFacetsService;
  accountFacets: AccountFacetsService;
  intake: IntakeService;
  signer: DeliverySigner;
  readiness: Record<string, ReadinessCheck>;
  /** Per-key search rate limit; its counters live in Redis so every node shares them. */
  searchRateLimit?: SearchRateLimitOptions;
}

/**
 * Builds the Fastify application. Routes are thin: validate (zod schemas of src/contract), call
 * one service, render; every error becomes a problem object in one handler.
 */
export function buildApp(
  deps: AppDependencies,
  options: {
    logger?: FastifyBaseLogger;
    /**
     * Check every response against its contract schema before sending it (a mismatch is a 500).
     * On outside production: it makes any drift from the spec fail loudly in tests. In production
     * the renderers' types carry the guarantee, and the check would cost ~1–2 ms per page of 20.
     */
    validateResponses?: boolean;
  } = {},
): FastifyInstance {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    genReqId: () => `req_${randomBytes(12).toString('base64url')}`,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Request IDs are always minted here; a client-sent header is not trusted as an identity.
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
  }).withTypeProvider<ZodTypeProvider>();

  // JSON in, JSON out: a text/plain body is an unsupported media type, not a string to parse.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(options.validateResponses === false ? () => (data) => JSON.stringify(data) : serializerCompiler);
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
  registerProblemHandling(app, deps.baseUrl);

  app.register(healthRoutes, { checks: deps.readiness });
  app.register(readRoutes, {
    keys: deps.keys,
    posts: deps.posts,
    postSearch: deps.postSearch,
    accounts: deps.accounts,
    accountSearch: deps.accountSearch,
    ...(deps.searchRateLimit ? { rateLimit: deps.searchRateLimit } : {}),
  });
  app.register(facetRoutes, {
    keys: deps.keys,
    postFacets: deps.postFacets,
    accountFacets: deps.accountFacets,
    ...(deps.searchRateLimit ? { rateLimit: deps.searchRateLimit } : {}),
  });
  app.register(intakeRoutes, { keys: deps.keys, intake: deps.intake });
  app.register(deliveryRoutes, { signer: deps.signer });
  return app;
}
