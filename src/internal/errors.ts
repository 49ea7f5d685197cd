import { problemStatus, type ProblemName } from './problem-catalog.ts';

/** What a caught value says: its message when it is an Error (anything can be thrown). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Domain errors. Each names its problem; its HTTP status comes from the problem catalog
 * (`problem-catalog.ts`). The HTTP layer renders any of them as a problem object (spec part 7)
 * with one handler. Engine and queue adapters translate their own failures into these classes,
 * so nothing above them sees a driver error.
 */
export abstract class DomainError extends Error {
  /** Problem name: the last path segment of the problem `type` URL. */
  abstract readonly problem: ProblemName;
  /** The problem's HTTP status. */
  get status(): number {
    return problemStatus(this.problem);
  }
  /** Extra response headers (e.g. Retry-After). */
  headers(): Record<string, string> {
    return {};
  }
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = new.target.name;
  }
}

/** 400: the body is not parseable in its declared content type. */
export class MalformedRequestError extends DomainError {
  readonly problem = 'malformed-request';
}

/** 401: missing, malformed, quoted, padded, unknown or revoked key (spec part 5). */
export class AuthenticationRequiredError extends DomainError {
  readonly problem = 'authentication-required';
  override headers(): Record<string, string> {
    return { 'www-authenticate': 'Bearer realm="social-search"' };
  }
}

/** 403: a valid key that lacks the scope the operation needs. */
export class InsufficientScopeError extends DomainError {
  readonly problem = 'insufficient-scope';
}

/** 403: a delivery URL whose signature does not verify. */
export class InvalidSignatureError extends DomainError {
  readonly problem = 'invalid-signature';
}

/** 404: a post or account that is unknown or currently unavailable (spec 4.3, 7). */
export class NotTrackedError extends DomainError {
  readonly problem = 'not-tracked';
}

/** 404: a webhook endpoint or saved search that is unknown or another holder's. */
export class ResourceNotFoundError extends DomainError {
  readonly problem = 'resource-not-found';
}

/** 409: a holder at its cap of saved searches or webhook endpoints. */
export class LimitReachedError extends DomainError {
  readonly problem = 'limit-reached';
}

/** 404: no such route. */
export class RouteNotFoundError extends DomainError {
  readonly problem = 'not-found';
}

/** 405: the route exists, but not for this method. */
export class MethodNotAllowedError extends DomainError {
  readonly problem = 'method-not-allowed';
  constructor(
    detail: string,
    private readonly allow: string[],
  ) {
    super(detail);
  }
  override headers(): Record<string, string> {
    return { allow: this.allow.join(', ') };
  }
}

/** 410: an account that is known but deactivated, deleted or unobservable (spec 2.2 rule 2). */
export class AccountUnavailableError extends DomainError {
  readonly problem = 'account-unavailable';
}

/** 410: a search continuation cursor that has expired (spec 4.1 rule 5). */
export class ExpiredCursorError extends DomainError {
  readonly problem = 'expired-cursor';
}

/** 410: a signed delivery URL past its expiry. */
export class ExpiredUrlError extends DomainError {
  readonly problem = 'expired-url';
}

/** 413: more observations or bytes than one intake request may carry. */
export class PayloadTooLargeError extends DomainError {
  readonly problem = 'payload-too-large';
}

/** 431: a request line and headers over the server's limit (16 KiB), refused before routing. */
export class HeadersTooLargeError extends DomainError {
  readonly problem = 'headers-too-large';
}

/** 408: a client that did not finish sending its request in time, refused before routing. */
export class RequestTimeoutError extends DomainError {
  readonly problem = 'request-timeout';
}

/** 415: a body in a content type the route does not take. */
export class UnsupportedMediaTypeError extends DomainError {
  readonly problem = 'unsupported-media-type';
}

/** 422: an invalid request (spec part 7). `pointer` names the offending value (RFC 6901). */
export class ValidationFailedError extends DomainError {
  readonly problem = 'validation-failed';
}

/** 429: a search over the key's rate limit. */
export class RateLimitExceededError extends DomainError {
  readonly problem = 'rate-limit-exceeded';
  constructor(
    detail: string,
    private readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
  override headers(): Record<string, string> {
    return { 'retry-after': String(Math.max(1, Math.ceil(this.retryAfterSeconds))) };
  }
}

/** 503: Elasticsearch or Redis cannot be reached or is overloaded; safe to retry. */
export class ServiceUnavailableError extends DomainError {
  readonly problem = 'service-unavailable';
  override headers(): Record<string, string> {
    return { 'retry-after': '5' };
  }
}

/**
 * 503: the intake's backlog is full (the workers are behind); nothing of the request was queued.
 * Bulk loaders (`seed`, `ingest`) wait and send it again; HTTP senders get the 503.
 */
export class IntakeBacklogFullError extends ServiceUnavailableError {}

/**
 * 503: this API node is reading as many intake bodies as its bound allows (config
 * INTAKE_MAX_IN_FLIGHT_MB); nothing of the request was read. Another node, or this one a moment
 * later, takes it.
 */
export class IntakeBusyError extends ServiceUnavailableError {
  override headers(): Record<string, string> {
    return { 'retry-after': '1' };
  }
}

/** 504: `?wait=true` intake whose observations were not all visible in time (they stay queued). */
export class IntakeTimeoutError extends DomainError {
  readonly problem = 'intake-timeout';
}

/** 500: anything unexpected. The detail never carries internals. */
export class InternalError extends DomainError {
  readonly problem = 'internal-error';
}

/**
 * Not a failure: long work that stopped between two of its steps because its process is stopping
 * (a job's `stopping` signal). What was done is kept; the queue runs the rest again later, as the
 * same job, without counting an attempt (src/queues/consumers.ts).
 */
export class PostponedError extends Error {
  override readonly name = 'PostponedError';
}
