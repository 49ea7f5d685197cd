import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isResponseSerializationError } from 'fastify-type-provider-zod';
import type { Problem } from '../contract/api.ts';
import {
  DomainError,
  InternalError,
  MalformedRequestError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
} from '../internal/errors.ts';
import { reasonOf } from '../internal/outages.ts';

/** Content type of every error response. */
const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The problem object of spec part 7 for a domain error. */
function problemOf(error: DomainError, requestId: string, baseUrl: string): Problem {
  return {
    type: `${baseUrl}/problems/${error.problem}`,
    status: error.status,
    request_id: requestId,
    detail: error.detail,
  };
}

/** Sends a domain error as a problem object. */
function sendProblem(reply: FastifyReply, error: DomainError, baseUrl: string): FastifyReply {
  const problem = problemOf(error, reply.request.id, baseUrl);
  return reply
    .code(error.status)
    .headers(error.headers())
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problem));
}

/** Turns any error thrown while handling a request into a domain error. */
function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError('The request body is larger than this route accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError('This route does not accept that Content-Type.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new MalformedRequestError('The body is empty but Content-Type says JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new MalformedRequestError(`The body is not valid JSON: ${fastifyError.message ?? ''}`.trim());
    default:
      break;
  }
  if (error instanceof SyntaxError) return new MalformedRequestError(`The body is not valid JSON: ${error.message}`);
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) return new MalformedRequestError(fastifyError.message ?? 'Bad request.');
  return new InternalError('An unexpected error occurred; quote the request_id when reporting it.', { cause: error });
}

/**
 * The methods each route path answers, for telling "no such path" (404) from "not with this
 * method" (405 with `Allow`, RFC 9110). Fills itself from Fastify's `onRoute` hook, so it must be
 * installed before the routes are registered.
 */
function collectRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    // `:param` matches one path segment; Fastify's own router has the same rule.
    const source = route.url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    const methods = [route.method].flat().map((m) => m.toUpperCase());
    routes.push({ pattern: new RegExp(`^${source.join('/')}/?$`), methods });
  });
  return (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
}

/** Installs the one error handler and the not-found handler (404, or 405 for a known path). */
export function registerProblemHandling(app: FastifyInstance, baseUrl: string): void {
  const methodsOf = collectRouteMethods(app);
  app.setErrorHandler((error, request: FastifyRequest, reply) => {
    const domain = toDomainError(error);
    if (domain.status === 503 || domain.status === 504) {
      // A dependency is down or slow (503), or indexing outlasted a wait (504): expected, and an
      // outage is logged once by its connection (src/start/connections.ts), so each request says
      // only what it answered and why, never a stack. Stacks are for 500s: bugs.
      request.log.warn({ problem: domain.problem, reason: reasonOf(domain.cause ?? domain) }, domain.detail);
    } else if (domain.status >= 500) {
      request.log.error({ err: domain.cause ?? error, problem: domain.problem }, domain.detail);
      if (isResponseSerializationError(error)) request.log.error({ issues: error.cause.issues }, 'response does not match its contract schema');
    }
    return sendProblem(reply, domain, baseUrl);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allow = methodsOf(path);
    const problem =
      allow.length > 0
        ? new MethodNotAllowedError(`${path} answers ${allow.join(', ')}, not ${request.method}.`, allow)
        : new RouteNotFoundError(`No route ${request.method} ${path}.`);
    return sendProblem(reply, problem, baseUrl);
  });
}
