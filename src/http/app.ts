import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import compress from '@fastify/compress';
import fastifyPlugin from 'fastify-plugin';
import { conditionalGet, tagContentCoding } from './conditional-get.ts';
import cors from '@fastify/cors';
import { constants as zlib } from 'node:zlib';
import type { AccountService } from '../services/accounts/account-service.ts';
import type { MediaUrlSigner } from '../media/url-signer.ts';
import type { IntakeService } from '../services/intake/intake-service.ts';
import type { KeyService } from '../services/keys/key-service.ts';
import { createBudgets, type Budgets, type RateLimitOptions } from './plugins/rate-limit.ts';
import { pauseRepeatedKeyRefusals } from './plugins/refusal-pause.ts';
import type { AccountSearchService, PostSearchService } from '../services/search/search-service.ts';
import type { AccountFacetsService, PostFacetsService } from '../services/search/facets-service.ts';
import type { PostCountsService } from '../services/search/counts-service.ts';
import type { PostService } from '../services/posts/post-service.ts';
import type { SuggestService } from '../services/names/suggest-service.ts';
import type { TaxonomyService } from '../services/names/taxonomy-service.ts';
import { registerMetrics, type HttpMetrics } from './metrics.ts';
import { registerOpenApi } from './openapi.ts';
import { dashboardPlugin, type DashboardDeps } from './dashboard/dashboard-plugin.ts';
import { registerUsage } from './usage.ts';
import type { UsageRecorder } from '../services/keys/usage-recorder.ts';
import { clientErrorHandler, frameworkErrorHandler, registerProblemHandling } from './problems.ts';
import { PATH_ID_MAX_LENGTH } from '../contract/ids.ts';
import { REQUEST_ID_HEADER, requestIdGenerator } from './request-id.ts';
import { zodValidatorCompiler } from './validation.ts';
import type { AlertService } from '../services/alerts/alert-service.ts';
import { alertRoutes } from './routes/alerts.ts';
import { mediaRoutes } from './routes/media.ts';
import { facetRoutes } from './routes/facets.ts';
import { healthRoutes, type ReadinessCheck } from './routes/health.ts';
import { intakeRoutes } from './routes/intake.ts';
import { nameRoutes } from './routes/names.ts';
import { problemRoutes } from './routes/problems.ts';
import { readRoutes } from './routes/reads.ts';

/** The version the OpenAPI document states: the `v1` contract, with additive minor versions. */
const API_VERSION = '1.1.0';

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
  postCounts: PostCountsService;
  /** Typeahead. */
  suggest: SuggestService;
  /** The dictionaries of classification IDs and codes. */
  taxonomies: TaxonomyService;
  intake: IntakeService;
  /** Webhook endpoints and saved searches; absent: those routes are not served. */
  alerts?: AlertService;
  signer: MediaUrlSigner;
  readiness: Record<string, ReadinessCheck>;
  /** Per-key rate limits (searches, reads); their counters live in Redis so every node shares them. */
  rateLimit?: RateLimitOptions;
  /** Per-key usage counting (for the dashboard); absent: none. */
  usage?: Pick<UsageRecorder, 'record'>;
  /** The account holders' dashboard at `/dashboard`; absent: off. */
  dashboard?: DashboardDeps;
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
    /** Browser origins allowed to call the API; empty or absent: CORS off. */
    corsOrigins?: readonly string[];
    /** Proxies whose `X-Request-Id` is kept (IPs or CIDRs). */
    trustedProxies?: readonly string[];
    /** Request timing and `/metrics`; absent: neither. */
    metrics?: { registry: HttpMetrics; token?: string | undefined };
    /** Which routes this node serves (config API_ROUTES); default all. */
    routes?: 'all' | 'reads' | 'intake';
    /** Intake request bodies this node reads at once, in bytes (config INTAKE_MAX_IN_FLIGHT_MB); default unbounded. */
    intakeBytesInFlight?: number;
  } = {},
): FastifyInstance {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // Minted here, or kept from a trusted proxy's X-Request-Id (request-id.ts); never a client's.
    genReqId: requestIdGenerator(options.trustedProxies ?? []),
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    requestIdHeader: false,
    // request.ip is the client behind a trusted proxy (the dashboard's per-address sign-in limit).
    ...(options.trustedProxies && options.trustedProxies.length > 0 ? { trustProxy: [...options.trustedProxies] } : {}),
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    clientErrorHandler: clientErrorHandler(deps.baseUrl),
    frameworkErrors: frameworkErrorHandler(deps.baseUrl),
    // The router measures a parameter percent-encoded: one UTF-16 code unit is at most 9 characters
    // there (a 3-byte UTF-8 character), so every value the schemas accept gets through, and a
    // longer one reaches frameworkErrors as a 422 like any other invalid value.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: PATH_ID_MAX_LENGTH * 9 },
  }).withTypeProvider<ZodTypeProvider>();

  // JSON in, JSON out: a text/plain body is an unsupported media type, not a string to parse.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(
    options.validateResponses === false ? () => (data) => JSON.stringify(data) : serializerCompiler,
  );
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
  registerProblemHandling(app, deps.baseUrl);
  if (options.metrics) registerMetrics(app, options.metrics.registry, { token: options.metrics.token });
  if (deps.usage) registerUsage(app, deps.usage);
  // Negotiated (Accept-Encoding), above 1 KiB: a search page of 20 posts is ~40–60 KB of JSON.
  // Brotli at quality 4 costs about what gzip does and compresses better.
  // Pages up to 256 KiB compress synchronously (under 1 ms for a 20-post page): the library's stream
  // path costs more than the compression itself at these sizes (bench/search.md, "Compression of search pages").
  app.register(compress, {
    threshold: 1024,
    syncThreshold: 256 * 1024,
    encodings: ['br', 'gzip', 'deflate'],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
    zlibOptions: { level: 4 },
  });
  // Registered after compression, so that on each conditional GET this hook comes after the one
  // compression adds to the route: a compressed body gets its own strong ETag.
  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRoute', (route) => {
        const hooks = [route.onSend ?? []].flat();
        if (hooks.includes(conditionalGet)) route.onSend = [...hooks, tagContentCoding];
      });
    }),
  );
  if (options.corsOrigins && options.corsOrigins.length > 0) {
    app.register(cors, {
      origin: [...options.corsOrigins],
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'if-none-match'],
      exposedHeaders: [
        REQUEST_ID_HEADER,
        'etag',
        'retry-after',
        'ratelimit-policy',
        'ratelimit',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
      ],
      maxAge: 600,
    });
  }
  registerOpenApi(app, { baseUrl: deps.baseUrl, version: API_VERSION });

  const budgets = createBudgets(deps.rateLimit);
  if (deps.rateLimit?.refusalPause) app.addHook('onSend', pauseRepeatedKeyRefusals(deps.rateLimit.refusalPause));
  app.register(problemRoutes);
  app.register(healthRoutes, { checks: deps.readiness });
  const routes = options.routes ?? 'all';
  if (routes !== 'reads')
    app.register(intakeRoutes, {
      keys: deps.keys,
      intake: deps.intake,
      ...(options.intakeBytesInFlight !== undefined && { bytesInFlight: options.intakeBytesInFlight }),
    });
  if (routes !== 'intake') registerReads(app, deps, budgets);
  return app;
}

/** The public API's routes (searches, reads, names, alerts, media) and the dashboard. */
function registerReads(app: FastifyInstance, deps: AppDependencies, budgets: Budgets): void {
  app.register(readRoutes, {
    keys: deps.keys,
    posts: deps.posts,
    postSearch: deps.postSearch,
    accounts: deps.accounts,
    accountSearch: deps.accountSearch,
    budgets,
  });
  app.register(facetRoutes, {
    keys: deps.keys,
    postFacets: deps.postFacets,
    accountFacets: deps.accountFacets,
    postCounts: deps.postCounts,
    budgets,
  });
  app.register(nameRoutes, {
    keys: deps.keys,
    suggest: deps.suggest,
    taxonomies: deps.taxonomies,
    budgets,
  });
  if (deps.alerts)
    app.register(alertRoutes, {
      keys: deps.keys,
      alerts: deps.alerts,
      budgets,
    });
  app.register(mediaRoutes, { signer: deps.signer });
  if (deps.dashboard)
    app.register(dashboardPlugin, {
      ...deps.dashboard,
      ...(deps.rateLimit ? { rateLimit: deps.rateLimit } : {}),
      prefix: '/dashboard',
    });
}
