import type { FacetBucket } from '../contract/search-extras.ts';
import type { FacetSpec } from '../query/facet-request.ts';
import type { AccountSearch, PostSearch } from '../query/search-codec.ts';
import type { AccountRanking, PostRanking } from './search.ts';

/** Exact counts over the results of one search. */
export interface FacetCounts {
  total: number;
  /** Buckets by facet name, in request order. */
  facets: Record<string, FacetBucket[]>;
}

/** What facets (post and account) need of the engine. */
export interface FacetEngine {
  /**
   * Counts over exactly the posts a post search with this ranking returns across all its pages
   * (hybrid: lexical matches and the semantic window; semantic: the window), on a first page's
   * snapshot.
   */
  postFacets(
    search: PostSearch,
    facets: FacetSpec[],
    options: { ranking: PostRanking; keepAliveSeconds: number },
  ): Promise<FacetCounts>;
  /**
   * Counts over exactly the accounts an account search returns (private accounts never; with a
   * `similar` ranking, its window of similar accounts).
   */
  accountFacets(
    search: AccountSearch,
    facets: FacetSpec[],
    options: { keepAliveSeconds: number; ranking: AccountRanking },
  ): Promise<FacetCounts>;
}
