import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { messageOf } from '../../internal/errors.ts';

/** A dependency check for `/readyz`: resolves with a short status or throws a DomainError. */
export type ReadinessCheck = () => Promise<string>;

/** `/healthz` (the process is up) and `/readyz` (its dependencies answer). */
export const healthRoutes: FastifyPluginAsyncZod<{ checks: Record<string, ReadinessCheck> }> = async (
  app,
  { checks },
) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const results: Record<string, string> = {};
    let ready = true;
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          results[name] = await check();
        } catch (error) {
          ready = false;
          results[name] = `unavailable: ${messageOf(error)}`;
        }
      }),
    );
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not-ready', checks: results });
  });
};
