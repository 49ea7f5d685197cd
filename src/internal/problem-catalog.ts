/**
 * Every problem the API answers, in one table (spec part 7 gives five; the rest is the service's,
 * docs/api-decisions.md, "Problem catalogue"): its status, a title, whether the same request may succeed
 * later, and what a client should do. The domain errors (`errors.ts`) take their status from it,
 * the OpenAPI document lists its entries per status, and each problem `type` URL
 * (`{base_url}/problems/<name>`) serves its entry as a page.
 */
import { isKeyOf, keysOf } from './typed-objects.ts';
export interface ProblemDefinition {
  status: number;
  title: string;
  /** Whether the same request may succeed later without changes. */
  retryable: boolean;
  /** When it happens and what to do about it. */
  description: string;
}

const PROBLEMS = {
  'malformed-request': {
    status: 400,
    title: 'Malformed request',
    retryable: false,
    description:
      'The body cannot be parsed in its declared Content-Type (invalid JSON, an intake body that is neither NDJSON nor a JSON array, an empty body). Fix the body and send it again.',
  },
  'authentication-required': {
    status: 401,
    title: 'Authentication required',
    retryable: false,
    description:
      'The Authorization header is missing, is not `Bearer <key>`, or names an unknown or revoked key. Never retryable with the same credentials: get a valid key.',
  },
  'insufficient-scope': {
    status: 403,
    title: 'Insufficient scope',
    retryable: false,
    description:
      'The key is valid but lacks the scope the operation needs (`search` for reads and searches, `ingest` for the intake).',
  },
  'invalid-signature': {
    status: 403,
    title: 'Invalid signature',
    retryable: false,
    description:
      'A delivery URL (media, thumbnail, avatar) whose signature does not match. Use the URL exactly as a post or account response gave it.',
  },
  'not-found': {
    status: 404,
    title: 'No such route',
    retryable: false,
    description: 'No operation answers this path. Check the path against the OpenAPI document at /openapi.json.',
  },
  'not-tracked': {
    status: 404,
    title: 'Not tracked',
    retryable: true,
    description:
      'The post or account is unknown to this service or currently unavailable. This does not claim it is absent from the platform; it may appear once observed.',
  },
  'resource-not-found': {
    status: 404,
    title: 'No such resource',
    retryable: false,
    description:
      "No webhook endpoint or saved search with this ID belongs to the key's holder (another holder's is answered the same way). List them to find their IDs.",
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    retryable: false,
    description: 'The path exists but not for this HTTP method; the `Allow` header lists the methods it answers.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    retryable: true,
    description: 'The request was not received completely in time; the connection is closed. Send it again.',
  },
  'account-unavailable': {
    status: 410,
    title: 'Account unavailable',
    retryable: false,
    description: 'The account is known but deactivated, deleted or fully unobservable, so no snapshot of it is served.',
  },
  'expired-cursor': {
    status: 410,
    title: 'Expired cursor',
    retryable: false,
    description:
      'A search continuation cursor that is past its lifetime, was issued by an earlier version, or whose snapshot is gone. Start the search again from its first page.',
  },
  'expired-url': {
    status: 410,
    title: 'Expired delivery URL',
    retryable: false,
    description: 'A signed delivery URL past its expiry. Read the post or account again for a fresh URL.',
  },
  'limit-reached': {
    status: 409,
    title: 'Limit reached',
    retryable: false,
    description:
      'The holder already has as many saved searches (or webhook endpoints) as the service allows; the detail gives the limit. Delete one first.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    retryable: false,
    description:
      "More observations (5,000) or bytes (20 MiB) than one intake request may carry, or a request body over its route's limit. Split it.",
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    retryable: false,
    description:
      'A body in a Content-Type the route does not take: JSON for searches; NDJSON or a JSON array for the intake.',
  },
  'headers-too-large': {
    status: 431,
    title: 'Request header fields too large',
    retryable: false,
    description:
      'The request line and headers exceed 16 KiB (a very long URL or header); refused before routing. Shorten them.',
  },
  'validation-failed': {
    status: 422,
    title: 'Validation failed',
    retryable: false,
    description:
      'The request is well-formed but invalid: the detail starts with the JSON pointer of the offending value (e.g. `/post/filters/views/gte: expected an integer`).',
  },
  'rate-limit-exceeded': {
    status: 429,
    title: 'Rate limit exceeded',
    retryable: true,
    description:
      'The key made more searches (facets included) or more reads this minute than its limit allows; `RateLimit-Policy` names the budget. Wait for the number of seconds in `Retry-After`.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal error',
    retryable: true,
    description: 'Something unexpected failed. Quote the `request_id` when reporting it.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    retryable: true,
    description:
      'A dependency (search engine or Redis) cannot be reached or is overloaded. Safe to retry after `Retry-After`; intake accepted nothing when it answers this.',
  },
  'intake-timeout': {
    status: 504,
    title: 'Intake timeout',
    retryable: true,
    description:
      'An intake with `?wait=true` whose observations were not all visible in time. They stay queued and will be indexed; do not resend them.',
  },
} as const satisfies Record<string, ProblemDefinition>;

/** A problem name: the last path segment of a problem `type` URL. */
export type ProblemName = keyof typeof PROBLEMS;

/** A problem with its name. */
export interface ProblemEntry extends ProblemDefinition {
  name: ProblemName;
}

/** The catalog, by status then name. */
export const PROBLEM_CATALOG: readonly ProblemEntry[] = keysOf(PROBLEMS)
  .map((name): ProblemEntry => ({ name, ...PROBLEMS[name] }))
  .sort((a, b) => a.status - b.status || a.name.localeCompare(b.name));

/** The HTTP status of problem `name`. */
export function problemStatus(name: ProblemName): number {
  return PROBLEMS[name].status;
}

/** The entry of problem `name`, if it exists. */
export function problemEntry(name: string): ProblemEntry | undefined {
  return isKeyOf(PROBLEMS, name) ? { name, ...PROBLEMS[name] } : undefined;
}

/** The problems answered with `status`. */
export function problemsWithStatus(status: number): ProblemEntry[] {
  return PROBLEM_CATALOG.filter((entry) => entry.status === status);
}
