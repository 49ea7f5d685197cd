/**
 * The two windows a hybrid post search fuses, asked of Elasticsearch as the service asks them, for
 * the relevance benches that re-rank them offline (coverage.ts, feedback.ts): the lexical window
 * (a query tree, by score then id) and the semantic one (kNN under the search's filter).
 */
import type { Client } from '@elastic/elasticsearch';
import { FUSION_WINDOW, KNN_CANDIDATES } from '../../src/engine/elasticsearch/reads/fused-search.ts';
import { nearestPostsQuery } from '../../src/engine/elasticsearch/queries/nearest-query.ts';
import { postSearchFilter } from '../../src/engine/elasticsearch/queries/post-query.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';

/** The page size the benches judge (nDCG@10). */
export const K = 10;

/** A window's hit: the post id, its score, and the named queries it matched (lexical). */
export type Hit = { _id: string; _score: number; matched_queries?: string[] | Record<string, number> };

/** The search body of a lexical window: `query` by score then id, one more than the fusion window. */
const lexicalBody = (query: unknown) => ({
  query,
  sort: [{ _score: { order: 'desc' as const } }, { id: 'asc' as const }],
  size: FUSION_WINDOW + 1,
  _source: false,
});

/** The window requests on `es`. */
export function windowsOn(es: Client) {
  return {
    lexicalWindow: async (index: string, query: unknown): Promise<Hit[]> => {
      const r = await es.search({ index, ...(lexicalBody(query) as object) });
      return r.hits.hits.map((h) => ({ _id: h._id!, _score: h._score ?? 0, matched_queries: h.matched_queries }));
    },
    semanticWindow: async (index: string, search: PostSearch, vector: number[]): Promise<Hit[]> => {
      if (vector.length === 0) return [];
      const r = await es.search({
        index,
        ...nearestPostsQuery({
          vector,
          k: FUSION_WINDOW,
          candidates: KNN_CANDIDATES,
          filter: postSearchFilter(search),
        }),
        size: FUSION_WINDOW,
        _source: false,
      });
      return r.hits.hits.map((h) => ({ _id: h._id!, _score: h._score ?? 0 }));
    },
  };
}

/** A query text (its first 2,000 characters) as the service parses a first page of K. */
export function parsed(text: string): PostSearch & { query: string } {
  const request = parsePostSearchRequest({ post: { query: text.slice(0, 2000) }, limit: K });
  if (request.kind !== 'initial') throw new Error('an initial request');
  return { ...request.search, query: request.search.query! };
}
