import type { FastifyInstance } from 'fastify';
import { formatIssues } from '../../contract/observations.ts';
import { DomainError, InternalError, ValidationFailedError } from '../../internal/errors.ts';
import { suggestQuerySchema } from '../../query/suggest-request.ts';
import type { SuggestService } from '../../services/names/suggest-service.ts';
import { sendProblem } from '../problems.ts';
import type { RouteRateLimit } from '../plugins/rate-limit.ts';

/** 401 for the dashboard: no signed-in session (never a `WWW-Authenticate: Bearer`, no key is asked). */
class SignInRequiredError extends DomainError {
  readonly problem = 'authentication-required';
}

/**
 * `GET {dashboard}/suggest?q=&kinds=&limit=`: the typeahead of the Explore page's script, for a
 * signed-in holder, with no API key: the suggest service called as the pages call services,
 * validated by the API's own schema (the same bounds of `q`, `kinds` and `limit`), answered as the
 * API answers (`{request_id, data}`, problems as problem objects).
 *
 * A GET that changes nothing, so it needs no CSRF token; what it must not do is answer another
 * site. The session cookie is `SameSite=Lax` (a cross-site fetch does not carry it), Helmet sends
 * `Cross-Origin-Resource-Policy: same-origin` and `nosniff`, the dashboard has no CORS, and a
 * request a browser marks as cross-site (`Sec-Fetch-Site`) is answered as one without a session.
 * Each suggestion spends one read of the holder's budget (the API's read limit per holder).
 */
export function registerSuggestRoute(
  app: FastifyInstance,
  deps: { suggest: SuggestService; baseUrl: string; budget: RouteRateLimit },
): void {
  app.get(
    '/suggest',
    {
      preValidation: deps.budget.count,
      errorHandler: (error, request, reply) => {
        const domain =
          error instanceof DomainError
            ? error
            : new InternalError('An unexpected error occurred; quote the request_id when reporting it.', {
                cause: error,
              });
        if (domain.status >= 500) request.log.error({ err: domain.cause ?? error }, 'dashboard suggestions failed');
        void sendProblem(reply.header('cache-control', 'no-store'), domain, deps.baseUrl);
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const site = request.headers['sec-fetch-site'];
      if (!request.session.holder || (site !== undefined && site !== 'same-origin' && site !== 'none'))
        throw new SignInRequiredError('Sign in to the dashboard to get suggestions.');
      const parsed = suggestQuerySchema.safeParse(request.query ?? {});
      if (!parsed.success) throw new ValidationFailedError(`query parameter ${formatIssues(parsed.error.issues)}`);
      const answer = await deps.budget.run(request, reply, () => deps.suggest.suggest(parsed.data));
      return { request_id: request.id, ...answer };
    },
  );
}
