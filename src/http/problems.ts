import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isResponseSerializationError } from 'fastify-type-provider-zod';
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Problem } from '../contract/api.ts';
import { PATH_ID_MAX_LENGTH } from '../contract/ids.ts';
import {
  DomainError,
  HeadersTooLargeError,
  InternalError,
  MalformedRequestError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RequestTimeoutError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
  ValidationFailedError,
} from '../internal/errors.ts';
import { reasonOf } from '../internal/outages.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';

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
export function sendProblem(reply: FastifyReply, error: DomainError, baseUrl: string): FastifyReply {
  const problem = problemOf(error, reply.request.id, baseUrl);
  return reply.code(error.status).headers(error.headers()).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** Turns any error thrown while handling a request into a domain error. */
function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  // Not a DomainError: Fastify's and its plugins' errors, read by their optional `code`.
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError('The request body is larger than this route accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError('This route does not accept that Content-Type.');
    case 'FST_CP_ERR_INVALID_CONTENT_ENCODING':
      // RFC 9110 §15.5.16: a content coding the server does not support is a 415.
      return new UnsupportedMediaTypeError(
        'This route does not accept that Content-Encoding; send identity, gzip, deflate or br.',
      );
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

/** The routes' own table: which methods each path answers. */
interface RouteTable {
  /** The methods a request path is answered with (a concrete path's, when one matches). */
  methodsOf(path: string): string[];
  /** The methods of the concrete (parameter-free) route of exactly this path; empty when none. */
  concreteMethodsOf(path: string): string[];
}

/**
 * The methods each route path answers, for telling "no such path" (404) from "not with this
 * method" (405 with `Allow`, RFC 9110). Fills itself from Fastify's `onRoute` hook, so it must be
 * installed before the routes are registered.
 */
function collectRouteMethods(app: FastifyInstance): RouteTable {
  const routes: Array<{ pattern: RegExp; methods: string[]; concrete: boolean }> = [];
  const concrete = new Map<string, Set<string>>();
  const trimmed = (path: string) => path.replace(/(.)\/+$/, '$1');
  app.addHook('onRoute', (route) => {
    // `:param` matches one path segment; Fastify's own router has the same rule.
    const source = route.url
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    const methods = [route.method].flat().map((m) => m.toUpperCase());
    const isConcrete = !route.url.includes(':') && !route.url.includes('*');
    routes.push({ pattern: new RegExp(`^${source.join('/')}/?$`), methods, concrete: isConcrete });
    if (isConcrete) {
      const known = concrete.get(trimmed(route.url)) ?? new Set<string>();
      for (const m of methods) known.add(m);
      concrete.set(trimmed(route.url), known);
    }
  });
  return {
    methodsOf(path) {
      const matching = routes.filter((r) => r.pattern.test(path));
      // OpenAPI matches a concrete path before a templated one (`/posts/search` is not `/posts/{id}`).
      const concreteOnes = matching.filter((r) => r.concrete);
      return [...new Set((concreteOnes.length > 0 ? concreteOnes : matching).flatMap((r) => r.methods))].sort();
    },
    concreteMethodsOf(path) {
      return [...(concrete.get(trimmed(path)) ?? [])].sort();
    },
  };
}

/**
 * A request the router gave to a templated route whose path is also a concrete route (`GET
 * /v1/social/posts/facets` reaching `/v1/social/posts/:id`) is that concrete path asked with the
 * wrong method: 405 with its `Allow`, as OpenAPI matches a concrete path before a templated one,
 * for every such path the routes declare, before any key is checked (as for any other 405).
 */
function concretePathsFirst(app: FastifyInstance, table: RouteTable): void {
  app.addHook('onRequest', async (request) => {
    const template = request.routeOptions.url;
    // Only parameters (`:id`): a wildcard route (CORS preflights) answers every path on purpose.
    if (template === undefined || !template.includes(':') || template.includes('*')) return;
    // Route parameters are strings (Fastify's path parser), absent when the route has none.
    const params = request.params as Record<string, string | undefined>;
    // The path as the router read it (parameters decoded), so `%73earch` is `search` here too.
    const path = template.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => params[name] ?? '');
    const allow = table.concreteMethodsOf(path);
    if (allow.length > 0 && !allow.includes(request.method))
      throw new MethodNotAllowedError(`${path} answers ${allow.join(', ')}, not ${request.method}.`, allow);
  });
}

/** Installs the one error handler and the not-found handler (404, or 405 for a known path). */
export function registerProblemHandling(app: FastifyInstance, baseUrl: string): void {
  const table = collectRouteMethods(app);
  concretePathsFirst(app, table);
  const notFound = (request: FastifyRequest): DomainError => {
    const path = request.url.split('?')[0]!;
    const allow = table.methodsOf(path);
    return allow.length > 0
      ? new MethodNotAllowedError(`${path} answers ${allow.join(', ')}, not ${request.method}.`, allow)
      : new RouteNotFoundError(`No route ${request.method} ${path}.`);
  };
  app.setErrorHandler((error, request: FastifyRequest, reply) => {
    // A request no route takes can fail before reaching the not-found handler (a body method
    // without Content-Type): the answer is still 404 or 405, not a complaint about its body.
    const domain = request.is404 ? notFound(request) : toDomainError(error);
    if (domain.status === 503 || domain.status === 504) {
      // A dependency is down or slow (503), or indexing outlasted a wait (504): expected, and an
      // outage is logged once by its connection (src/start/connections.ts), so each request says
      // only what it answered and why, never a stack. Stacks are for 500s: bugs.
      request.log.warn({ problem: domain.problem, reason: reasonOf(domain.cause ?? domain) }, domain.detail);
    } else if (domain.status >= 500) {
      request.log.error({ err: domain.cause ?? error, problem: domain.problem }, domain.detail);
      if (isResponseSerializationError(error))
        request.log.error({ issues: error.cause.issues }, 'response does not match its contract schema');
    }
    return sendProblem(reply, domain, baseUrl);
  });
  app.setNotFoundHandler((request, reply) => sendProblem(reply, notFound(request), baseUrl));
}

/**
 * Fastify's `frameworkErrors`: what the router answers before any route runs, in the problem shape
 * rather than Fastify's own JSON. A path parameter longer than the router takes
 * (`maxParamLength`, set so that only a value over its schema's maxLength can reach it) and a path
 * that is not valid percent-encoding are both invalid values of the route's parameters: 422, which
 * every route with parameters documents.
 */
export function frameworkErrorHandler(baseUrl: string) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // No hook runs before the router: the request id header is set here.
    reply.header(REQUEST_ID_HEADER, request.id);
    const detail =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? `/path: a path parameter is longer than ${PATH_ID_MAX_LENGTH} characters.`
        : error.code === 'FST_ERR_BAD_URL'
          ? '/path: the path is not valid percent-encoded UTF-8.'
          : null;
    const domain = detail ? new ValidationFailedError(detail) : toDomainError(error);
    void sendProblem(reply, domain, baseUrl);
  };
}

/**
 * Fastify's `clientErrorHandler`: what the server answers to a request it could not even parse
 * (headers over the limit, a client too slow, broken HTTP), in the problem shape like every other
 * error rather than Fastify's default JSON. No request exists yet, so the id is minted here.
 */
export function clientErrorHandler(baseUrl: string) {
  return (error: NodeJS.ErrnoException, socket: Duplex): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const domain =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new HeadersTooLargeError('The request line and headers are larger than 16 KiB.')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new RequestTimeoutError('The request was not received in time.')
          : new MalformedRequestError('The request is not valid HTTP.');
    const body = JSON.stringify(problemOf(domain, `req_${randomBytes(12).toString('base64url')}`, baseUrl));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${domain.status} ${STATUS_CODES[domain.status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
