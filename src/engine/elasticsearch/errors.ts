import { errors, type Client } from '@elastic/elasticsearch';
import { DomainError, InternalError, ServiceUnavailableError } from '../../internal/errors.ts';
import { fieldOf } from '../../internal/typed-objects.ts';

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
  return fieldOf(fieldOf(error.body, 'error'), 'type') === 'index_not_found_exception';
}

/** The engine refused an aggregation of more buckets than `search.max_buckets` (65,536 by default). */
export function isTooManyBuckets(error: unknown): boolean {
  return (
    error instanceof errors.ResponseError && JSON.stringify(error.body ?? '').includes('too_many_buckets_exception')
  );
}

/**
 * True when a point in time lost part of itself with a node that left the cluster (killed,
 * partitioned): the shard copies it read there are gone, though other copies of those shards live
 * on. Asked for complete results ({@link COMPLETE_RESULTS}), a search on it answers 404
 * `search_context_missing_nodes_exception` (measured on a 3-node cluster, test/cluster); while the
 * node is still leaving, a shard failure names the lost connection. A node that restarted and
 * came back has simply forgotten the context: that is isForgottenContext (paged-search.ts).
 */
export function isLostNode(error: unknown): boolean {
  if (!(error instanceof errors.ResponseError)) return false;
  const text = JSON.stringify(error.body ?? '');
  return /search_context_missing_nodes_exception|node_disconnected_exception|node_not_connected_exception|connect_transport_exception|node_closed_exception/i.test(
    text,
  );
}

/**
 * Every search of the adapter asks for complete results: by default Elasticsearch answers 200
 * with the hits of the shards it could reach when a shard copy is lost (a node left the cluster),
 * which would silently drop results from a page, a facet count, a fan-out or a rebuild copy.
 */
export const COMPLETE_RESULTS = { allow_partial_search_results: false } as const;

/**
 * Refreshes `index` on every shard copy, or fails (503, a transient error: jobs retry). A refresh
 * that failed on a copy (its node left mid-request) answers 200 with the failure counted, and a
 * search that reads that copy next would miss writes it must see (fan-out, baselines, `?wait`).
 * `allowMissing`: an alias with no index behind it yet (the metric history before its first
 * point) is nothing to refresh.
 */
export async function refreshAll(
  client: Client,
  index: string | string[],
  options: { allowMissing?: boolean } = {},
): Promise<void> {
  const missing = options.allowMissing ? { ignore_unavailable: true, allow_no_indices: true } : {};
  const response = await engineCall(() => client.indices.refresh({ index, ...missing }));
  const failed = response._shards?.failed ?? 0;
  if (failed > 0)
    throw new ServiceUnavailableError(`The search engine could not refresh ${failed} shard copies; retry shortly.`);
}

/** Runs `fn`, translating any engine failure. */
export async function engineCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw translateEngineError(error);
  }
}
