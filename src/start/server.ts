import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../internal/errors.ts';
import { buildApp } from '../http/app.ts';
import type { Runtime } from './runtime.ts';

/** Builds the HTTP app from a runtime (no listening: tests inject requests into it). */
export function createServer(runtime: Runtime, logger?: Logger): FastifyInstance {
  return buildApp(
    {
      baseUrl: runtime.config.PUBLIC_BASE_URL,
      keys: runtime.keys,
      posts: runtime.posts,
      postSearch: runtime.postSearch,
      accounts: runtime.accounts,
      accountSearch: runtime.accountSearch,
      intake: runtime.intake,
      signer: runtime.signer,
      searchRateLimit: {
        searchesPerMinute: runtime.config.RATE_LIMIT_SEARCH_PER_MINUTE,
        redis: runtime.redis,
        namespace: `${runtime.config.REDIS_PREFIX}:ratelimit:search:`,
      },
      readiness: {
        elasticsearch: async () => (await runtime.engine.checkHealth()).status,
        redis: async () => {
          try {
            return await runtime.redis.ping();
          } catch (cause) {
            throw new ServiceUnavailableError('Redis is unreachable', { cause });
          }
        },
        embeddings: async () => {
          const status = runtime.embedder().status();
          const ranking = runtime.config.SEARCH_RANKING;
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
      },
    },
    { ...(logger ? { logger } : {}), validateResponses: runtime.config.NODE_ENV !== 'production' },
  );
}

/** Starts listening on HOST:PORT. */
export async function listen(app: FastifyInstance, runtime: Runtime): Promise<string> {
  return app.listen({ host: runtime.config.HOST, port: runtime.config.PORT });
}
