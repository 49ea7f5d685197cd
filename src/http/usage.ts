import type { FastifyInstance } from 'fastify';
import type { UsageOperation, UsageRecorder } from '../services/keys/usage-recorder.ts';

/** The API's operation ids (OpenAPI) → the usage counters' operation names. */
const OPERATIONS: Record<string, UsageOperation> = {
  searchPosts: 'search_posts',
  searchAccounts: 'search_accounts',
  getPost: 'get_post',
  getAccount: 'get_account',
  lookupPosts: 'lookup_posts',
  lookupAccounts: 'lookup_accounts',
  suggest: 'suggest',
  getTaxonomy: 'taxonomies',
  postFacets: 'post_facets',
  accountFacets: 'account_facets',
  countPosts: 'post_counts',
  ingestObservations: 'intake',
};

/**
 * Counts every response to an authenticated API operation for the key's holder (dashboard
 * usage): after authentication, so 4xx and 429 answers count too, but a request with no valid
 * key counts for nobody.
 */
export function registerUsage(app: FastifyInstance, usage: Pick<UsageRecorder, 'record'>): void {
  app.addHook('onResponse', async (request, reply) => {
    if (!request.apiKey) return;
    const operationId = request.routeOptions.schema?.operationId;
    const operation = operationId ? OPERATIONS[operationId] : undefined;
    if (operation) usage.record(request.apiKey.id, operation, reply.statusCode);
  });
}
