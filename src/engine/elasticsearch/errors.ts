import { errors } from '@elastic/elasticsearch';
import { DomainError, InternalError, ServiceUnavailableError } from '../../internal/errors.ts';

/**
 * Translates an Elasticsearch client failure into a domain error. Only this adapter sees driver
 * errors; what leaves it is a DomainError whose detail never carries hosts or internals.
 */
export function translateEngineError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (isTransientEngineError(error)) {
    return new ServiceUnavailableError('The search engine is unavailable; retry shortly.', { cause: error });
  }
  if (error instanceof errors.ResponseError && error.statusCode === 404 && isMissingIndex(error)) {
    return indicesNotInstalled(error);
  }
  return new InternalError('The search engine failed to answer this request.', { cause: error });
}

/** True for a failure that a later try may not meet: unreachable, timed out, overloaded (429, 5xx gateway). */
export function isTransientEngineError(error: unknown): boolean {
  return (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError ||
    (error instanceof errors.ResponseError && [429, 502, 503, 504].includes(error.statusCode ?? 0))
  );
}

/** The indices (or their aliases) do not exist: an operator has not run `indices apply` yet. */
export function indicesNotInstalled(cause?: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'The search indices are not installed; an operator must run `social-search indices apply`.',
    { cause },
  );
}

function isMissingIndex(error: InstanceType<typeof errors.ResponseError>): boolean {
  const body = error.body as { error?: { type?: string } } | undefined;
  return body?.error?.type === 'index_not_found_exception';
}

/** Runs `fn`, translating any engine failure. */
export async function engineCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw translateEngineError(error);
  }
}
