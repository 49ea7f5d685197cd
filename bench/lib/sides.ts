/**
 * The two sides of a latency comparison. The API side: JSON over one keep-alive undici connection,
 * the HTTP client the Elasticsearch client itself uses, so both sides pay the same client costs and
 * the ratio measures the service; the answer is parsed, as the Elasticsearch client parses its own.
 * The raw side, one per query shape: what the engine adapter sends for a first page, built by the
 * service's own query builders and sent straight to Elasticsearch.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { Pool } from 'undici';
import {
  accountSearchQuery,
  accountSearchSort,
  narrowedScope,
  qualifyingRequest,
} from '../../src/engine/elasticsearch/queries/account-query.ts';
import { postSearchQuery, postSearchSort, SEARCH_SOURCE } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { postVectorNames } from '../../src/engine/elasticsearch/names.ts';
import { parseAccountSearchRequest, parsePostSearchRequest } from '../../src/query/search-request.ts';

/**
 * The raw engine of a bench that reads an existing prefix: a client of ELASTICSEARCH_URL and the
 * aliases of INDEX_PREFIX (default `bench`, the 1M-post index of bench/search.md), the posts'
 * vectors among them (`vectors`: they are in an index of their own, not the posts').
 */
export function rawEngine(): { es: Client; prefix: string; posts: string; vectors: string; accounts: string } {
  const prefix = process.env['INDEX_PREFIX'] ?? 'bench';
  return {
    es: new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' }),
    prefix,
    posts: `${prefix}-posts`,
    vectors: postVectorNames(prefix).read,
    accounts: `${prefix}-accounts`,
  };
}

/**
 * The read alias of the posts' vector documents (`<prefix>-post-vectors`,
 * src/engine/elasticsearch/documents/vector-projection.ts) beside the posts index or alias
 * `posts` (`<prefix>-posts`), for a bench that names its posts index rather than a prefix: the
 * posts index maps no vector, so a kNN over posts runs there.
 */
export function postVectorsOf(posts: string): string {
  const prefix = /^(.+)-posts$/.exec(posts)?.[1];
  if (prefix === undefined) throw new Error(`${posts} is not named <prefix>-posts: no vector index beside it`);
  return postVectorNames(prefix).read;
}

/** An API client: `post` sends a JSON body, throws unless the answer is a 200, returns it parsed. */
export interface ApiClient {
  post(path: string, body: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/** One connection, no pipelining, the key as a bearer token (none when `key` is null). */
export function apiClient(address: string, key: string | null, pool = { connections: 1, pipelining: 1 }): ApiClient {
  const connection = new Pool(address, pool);
  return {
    async post(path, body) {
      const response = await connection.request({
        path,
        method: 'POST',
        body: JSON.stringify(body),
        headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), 'content-type': 'application/json' },
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}: ${text}`);
      return JSON.parse(text) as unknown;
    },
    close: () => connection.close(),
  };
}

/** A post search's first page (`body` as the API takes it), as the engine adapter asks for it. */
export async function rawPostSearch(
  es: Client,
  index: string,
  body: unknown,
): Promise<estypes.SearchResponse<{ record: unknown }>> {
  return (await postPage(es, index, body)).response;
}

/** The records of a post search's first page, raw. */
export async function rawPostRecords(es: Client, index: string, body: unknown): Promise<unknown[]> {
  const { limit, response } = await postPage(es, index, body);
  return response.hits.hits.slice(0, limit).map((h) => h._source!.record);
}

async function postPage(es: Client, index: string, body: unknown) {
  const request = parsePostSearchRequest(body);
  if (request.kind !== 'initial') throw new Error('initial requests only');
  const response = await es.search<{ record: unknown }>({
    index,
    query: postSearchQuery(request.search),
    sort: postSearchSort(request.search),
    size: request.limit + 1,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
  return { limit: request.limit, response };
}

/**
 * An account search's first page, raw: with a posts scope, first the service's own aggregation of
 * the qualifying authors (on the scope narrowed by the account filter's exactly copied facts, no
 * shard request cache: a cached answer would be an artifact of a bench that asks each scope once
 * per side), then the accounts among them.
 */
export async function rawAccountRecords(
  es: Client,
  indices: { posts: string; accounts: string },
  body: unknown,
): Promise<unknown[]> {
  const request = parseAccountSearchRequest(body);
  if (request.kind !== 'initial') throw new Error('initial requests only');
  const search = request.search;
  const filter: estypes.QueryDslQueryContainer[] = [accountSearchQuery(search)];
  if (search.posts) {
    const scope = narrowedScope(search.posts, search.filter);
    const agg = await es.search({ index: indices.posts, ...qualifyingRequest(scope) });
    const buckets = (agg.aggregations?.['authors'] as { buckets?: Array<{ key: string }> } | undefined)?.buckets;
    const ids = (buckets ?? []).map((b) => b.key);
    filter.push(ids.length ? { terms: { id: ids } } : { match_none: {} });
  }
  const response = await es.search<{ record: unknown }>({
    index: indices.accounts,
    query: { bool: { filter } },
    sort: accountSearchSort(search),
    size: request.limit + 1,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
  return response.hits.hits.slice(0, request.limit).map((h) => h._source!.record);
}
