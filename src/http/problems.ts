import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { Problem } from '../contract/api.ts';
import { formatIssues } from '../contract/observations.ts';
import {
  DomainError,
  InternalError,
  MalformedRequestError,
  PayloadTooLargeError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
  ValidationFailedError,
} from '../internal/errors.ts';

/** Content type of every error response. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The problem object of spec part 7 for a domain error. */
export function problemOf(error: DomainError, requestId: string, baseUrl: string): Problem {
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
  return reply
    .code(error.status)
    .headers(error.headers())
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problem));
}

const PARTS: Record<string, string> = { body: '', params: 'path parameter ', querystring: 'query parameter ' };

/** Turns any error thrown while handling a request into a domain error. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = (error as { validationContext?: string }).validationContext ?? 'body';
    const issues = error.validation.map((v) => ({
      ...(v.params as object),
      code: v.keyword,
      message: v.message ?? 'invalid',
      path: v.instancePath === '/' ? [] : v.instancePath.split('/').slice(1),
    })) as unknown as z.core.$ZodIssue[];
    return new ValidationFailedError(`${PARTS[context] ?? ''}${formatIssues(issues)}`);
  }
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

/** Installs the one error handler and the not-found handler. */
export function registerProblemHandling(app: FastifyInstance, baseUrl: string): void {
  app.setErrorHandler((error, request: FastifyRequest, reply) => {
    const domain = toDomainError(error);
    if (domain.status >= 500) {
      const level = domain.status === 503 ? 'warn' : 'error';
      request.log[level]({ err: domain.cause ?? error, problem: domain.problem }, domain.detail);
      if (isResponseSerializationError(error)) request.log.error({ issues: error.cause.issues }, 'response does not match its contract schema');
    }
    return sendProblem(reply, domain, baseUrl);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new RouteNotFoundError(`No route ${request.method} ${request.url.split('?')[0]}.`), baseUrl),
  );
}
