import type { FastifyInstance } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { AuthenticationRequiredError } from '../internal/errors.ts';

/** What the HTTP layer reports and serves; the Prometheus registry behind it is wired in src/start. */
export interface HttpMetrics {
  /** One finished request: its route pattern (never the raw URL: IDs would explode the series). */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** The exposition, in the registry's text format. */
  exposition(): Promise<{ contentType: string; body: string }>;
}

/** The path Prometheus scrapes. */
export const METRICS_PATH = '/metrics';

/**
 * Times every request by route pattern and status, and serves `/metrics`. With a token, the
 * scraper must send `Authorization: Bearer <token>` (compared in constant time); without, the
 * endpoint is open, for deployments that keep the API port off the public network or put
 * `/metrics` behind their proxy's rules (docs/api-decisions.md).
 */
export function registerMetrics(
  app: FastifyInstance,
  metrics: HttpMetrics,
  options: { token?: string | undefined },
): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === METRICS_PATH) return;
    metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
  });
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : null;
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (expected) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new AuthenticationRequiredError(
          '/metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>.',
        );
      }
    }
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).header('cache-control', 'no-store').send(body);
  });
}
