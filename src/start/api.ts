import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createMediaUrlSigner } from '../media/url-signer.ts';
import type { Embedder } from '../embedding/embedder.ts';
import type { ElasticsearchEngine } from '../engine/elasticsearch/engine.ts';
import { buildApp } from '../http/app.ts';
import type { ReadinessCheck } from '../http/routes/health.ts';
import { createRefusalPause, PAUSED_PER_NODE, PAUSED_PER_SUBJECT } from '../http/plugins/refusal-pause.ts';
import type { Config } from '../internal/config.ts';
import { ServiceUnavailableError } from '../internal/errors.ts';
import { createCursorCodec } from '../query/cursor-codec.ts';
import { createAccountService, type AccountService } from '../services/accounts/account-service.ts';
import type { IntakeService } from '../services/intake/intake-service.ts';
import type { KeyService } from '../services/keys/key-service.ts';
import { createPostService, type PostService } from '../services/posts/post-service.ts';
import { createSuggestService } from '../services/names/suggest-service.ts';
import { createTaxonomyService } from '../services/names/taxonomy-service.ts';
import { createAccountFacetsService, createPostFacetsService } from '../services/search/facets-service.ts';
import { createPostCountsService } from '../services/search/counts-service.ts';
import { createMatchEvidence } from '../services/search/match-evidence.ts';
import { createDidYouMean } from '../services/search/did-you-mean.ts';
import {
  createAccountSearchService,
  createPostSearchService,
  type PostSearchService,
} from '../services/search/search-service.ts';
import { createReferences } from '../services/search/references.ts';
import { createSimilarEvidence } from '../services/search/similar-evidence.ts';
import type { Connections } from './connections.ts';
import { openFollowersMirror, openHolders, openIntake, openKeys, type Closable } from './core.ts';
import { openAlertService } from './alerts.ts';
import { createHmac } from 'node:crypto';
import type { Session } from 'fastify';
import { dashboardAssetsDir } from '../internal/paths.ts';
import { createHolderKeys } from '../services/keys/holder-keys.ts';
import { createSessionStore } from '../services/keys/session-store.ts';
import { createUsageReader } from '../services/keys/usage-reader.ts';
import { createUsageRecorder } from '../services/keys/usage-recorder.ts';
import { createPrometheusMetrics } from './metrics.ts';
import { createProducer, INDEX_WRITING_QUEUES, type Producer, type QueueName } from '../queues/registry.ts';
import { englishWords } from '../text/english-words.ts';

/** The HTTP API of one process, and the services behind it that an entry point may call itself. */
export interface Api extends Closable {
  app: FastifyInstance;
  posts: PostService;
  accounts: AccountService;
  postSearch: PostSearchService;
  keys: KeyService;
  intake: IntakeService;
}

/**
 * Builds the API from the engine and embedder the process owns (a worker in the same process
 * shares them). No listening: tests inject requests into `app`. `close` stops the HTTP server
 * and what the API opened itself; the owner closes the engine, embedder and connections.
 */
export function createApi(
  config: Config,
  connections: Connections,
  parts: { engine: ElasticsearchEngine; embedder: Embedder; logger?: Logger },
): Api {
  const { engine, embedder } = parts;
  // Read before the first search, not by it: misspelt words are told from words of the language.
  englishWords();
  const signer = createMediaUrlSigner({
    baseUrl: config.PUBLIC_BASE_URL,
    secret: config.SIGNING_SECRET,
    previous: config.SIGNING_SECRET_PREVIOUS,
    ttlSeconds: config.DELIVERY_URL_TTL_SECONDS,
  });
  const keys = openKeys(config, connections, { cached: true });
  const intake = openIntake(config, connections);
  const alerts = openAlertService(config, connections, embedder);
  const references = createReferences({ reads: engine.reads, model: () => embedder.status().state });
  // Posts render their authors' current followers from the mirror (engine reads for the rest).
  const reads = {
    ...engine.reads,
    currentFollowers: openFollowersMirror(config, connections, engine).currentFollowers,
  };
  const search = {
    engine: engine.search,
    references,
    similarEvidence: createSimilarEvidence({ engine: engine.similarity }),
    signer,
    cursors: createCursorCodec({
      secret: config.SIGNING_SECRET,
      previous: config.SIGNING_SECRET_PREVIOUS,
      ttlSeconds: config.CURSOR_TTL_SECONDS,
    }),
    cursorTtlSeconds: config.CURSOR_TTL_SECONDS,
  };
  // Facets rank as the search does: the ranking decides which posts a query returns.
  const ranking = {
    mode: config.SEARCH_RANKING,
    embedder,
    questionWeights: config.SEARCH_QUESTION_WEIGHTS === 'on',
    ...(parts.logger ? { logger: parts.logger } : {}),
  };
  const facets = { engine: engine.facets, references, keepAliveSeconds: config.CURSOR_TTL_SECONDS };
  const services = {
    posts: createPostService({ reads, lookups: engine.lookups, history: engine.history, signer }),
    accounts: createAccountService({ reads: engine.reads, lookups: engine.lookups, history: engine.history, signer }),
    postSearch: createPostSearchService({
      ...search,
      reads,
      evidence: createMatchEvidence({ highlighter: engine.highlights, signer }),
      didYouMean: createDidYouMean({ corrector: engine.spelling }),
      ranking,
    }),
    accountSearch: createAccountSearchService({
      ...search,
      didYouMean: createDidYouMean({ corrector: engine.accountSpelling }),
      ranking,
    }),
    postFacets: createPostFacetsService({ ...facets, ranking }),
    accountFacets: createAccountFacetsService({ ...facets, ranking }),
    postCounts: createPostCountsService({ ...facets, engine: engine.counts, ranking }),
    suggest: createSuggestService({ suggester: engine.suggest }),
    taxonomies: createTaxonomyService({ facets: engine.facets, keepAliveSeconds: config.CURSOR_TTL_SECONDS }),
    keys,
    intake: intake.intake,
    alerts: alerts.service,
  };
  // Queue handles for the depth gauges: producers only, on the producers' connection.
  const queues =
    config.METRICS === 'on'
      ? // Object.fromEntries answers a string-keyed record: its keys are exactly INDEX_WRITING_QUEUES.
        (Object.fromEntries(
          INDEX_WRITING_QUEUES.map((name) => [
            name,
            createProducer(name, { connection: connections.producerRedis(), prefix: config.REDIS_PREFIX }),
          ]),
        ) as Record<QueueName, Producer<QueueName>>)
      : null;
  const refusalPause = createRefusalPause({
    pauseMs: config.RATE_LIMIT_REFUSAL_PAUSE_MS,
    perSubject: PAUSED_PER_SUBJECT,
    total: PAUSED_PER_NODE,
  });
  const metrics = queues
    ? {
        registry: createPrometheusMetrics({
          elasticsearch: connections.elasticsearch(),
          snapshotStats: () => engine.snapshotStats(),
          embedder,
          queues,
          deliveries: alerts.stores.deliveries,
          refusals: refusalPause,
        }),
        token: config.METRICS_TOKEN,
      }
    : undefined;
  const usagePrefix = `${config.REDIS_PREFIX}:usage`;
  const usage = createUsageRecorder({
    redis: connections.redis(),
    prefix: usagePrefix,
    retentionDays: config.USAGE_RETENTION_DAYS,
  });
  const defaultLimits = { search: config.RATE_LIMIT_SEARCH_PER_MINUTE, read: config.RATE_LIMIT_READ_PER_MINUTE };
  const sessionIdleMs = Math.round(config.SESSION_IDLE_HOURS * 3_600_000);
  const dashboard =
    config.DASHBOARD === 'on'
      ? {
          holders: openHolders(config, connections),
          keys: createHolderKeys({
            keys,
            usage: createUsageReader({ redis: connections.redis(), prefix: usagePrefix }),
            defaultLimits,
          }),
          sessions: createSessionStore<Session>({
            redis: connections.redis(),
            prefix: `${config.REDIS_PREFIX}:holders`,
            ttlMs: sessionIdleMs,
          }),
          // One secret fewer to manage: derived from SIGNING_SECRET unless set on its own.
          sessionSecret:
            config.SESSION_SECRET ??
            createHmac('sha256', config.SIGNING_SECRET).update('dashboard session cookies').digest('hex'),
          sessionIdleMs,
          baseUrl: config.PUBLIC_BASE_URL,
          assetsDir: dashboardAssetsDir(),
          alerts: alerts.service,
          insights: {
            postSearch: services.postSearch,
            postCounts: services.postCounts,
            posts: services.posts,
            accounts: services.accounts,
            accountSearch: services.accountSearch,
            taxonomies: services.taxonomies,
            suggest: services.suggest,
          },
        }
      : undefined;
  if (dashboard && config.PUBLIC_BASE_URL.startsWith('https:') && config.TRUSTED_PROXIES.length === 0) {
    // The session cookie is Secure, and is only set on a request this node sees as https: behind
    // a TLS-terminating proxy that takes X-Forwarded-Proto from a trusted proxy.
    parts.logger?.warn(
      'the dashboard needs TRUSTED_PROXIES (the TLS-terminating proxy) when PUBLIC_BASE_URL is https: without it no sign-in can keep its session',
    );
  }
  const app = buildApp(
    {
      baseUrl: config.PUBLIC_BASE_URL,
      ...services,
      signer,
      rateLimit: {
        perMinute: { search: config.RATE_LIMIT_SEARCH_PER_MINUTE, read: config.RATE_LIMIT_READ_PER_MINUTE },
        redis: connections.redis(),
        namespace: `${config.REDIS_PREFIX}:ratelimit:`,
        searchesPerKey: config.SEARCH_IN_FLIGHT_PER_KEY,
        refusalPause,
      },
      readiness: readinessChecks(config, connections, engine, embedder),
      usage,
      ...(dashboard ? { dashboard } : {}),
    },
    {
      ...(parts.logger ? { logger: parts.logger } : {}),
      validateResponses: config.NODE_ENV !== 'production',
      routes: config.API_ROUTES,
      intakeBytesInFlight: config.INTAKE_MAX_IN_FLIGHT_MB * 2 ** 20,
      corsOrigins: config.CORS_ORIGINS,
      trustedProxies: config.TRUSTED_PROXIES,
      ...(metrics ? { metrics } : {}),
    },
  );
  // Once, however often asked (a shutdown phase and its caller's own close): the usage recorder's
  // last flush must not run again after the caller cleaned up.
  let closing: Promise<void> | undefined;
  return {
    app,
    ...services,
    close() {
      closing ??= (async () => {
        await app.close();
        await usage.close().catch(() => undefined);
        await keys.close();
        await intake.close();
        await Promise.all(Object.values(queues ?? {}).map((q) => q.close().catch(() => undefined)));
      })();
      return closing;
    },
  };
}

/** `/readyz`: each dependency's status, or why it cannot serve. */
function readinessChecks(
  config: Config,
  connections: Connections,
  engine: ElasticsearchEngine,
  embedder: Embedder,
): Record<string, ReadinessCheck> {
  return {
    elasticsearch: () => engine.health.check(),
    redis: async () => {
      let answer: string;
      try {
        answer = await connections.redis().ping();
      } catch (cause) {
        throw new ServiceUnavailableError('Redis is unreachable', { cause });
      }
      // After an outage the intake's connection may reconnect a moment later than this one.
      if (!connections.redisUp()) throw new ServiceUnavailableError('Redis is reconnecting (the intake is not yet)');
      return answer;
    },
    embeddings: async () => {
      const status = embedder.status();
      const ranking = config.SEARCH_RANKING;
      switch (status.state) {
        case 'ready':
          return `ready: ${status.detail}; queries rank ${ranking === 'lexical' ? 'by BM25 only (SEARCH_RANKING=lexical)' : ranking}`;
        case 'loading':
          return `loading: ${status.detail}`;
        case 'off':
          return `off (BM25 only): ${status.detail}`;
        default:
          // A configured model that cannot serve is a fault an operator must see.
          throw new ServiceUnavailableError(`the embedding model failed: ${status.detail}; queries rank by BM25 only`);
      }
    },
  };
}
