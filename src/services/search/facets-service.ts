import type { FacetCounts, FacetEngine } from '../../engine/facets.ts';
import type { FacetsRequest } from '../../query/facet-request.ts';
import type { AccountSearch, PostSearch } from '../../query/search-codec.ts';
import { accountRankingOf, accountSearchKind, postRankingOf, postSearchKind, type RankingPolicy } from './ranking.ts';
import type { References } from './references.ts';

/** Facets of one search operation: exact counts over what the matching search returns. */
export interface FacetsService<S> {
  facets(request: FacetsRequest<S>): Promise<FacetCounts>;
}

/** Post facets. They rank like the first page of the matching search, since ranking decides the result set. */
export type PostFacetsService = FacetsService<PostSearch>;
/** Account facets. */
export type AccountFacetsService = FacetsService<AccountSearch>;

interface FacetsDeps {
  engine: FacetEngine;
  /** Snapshots opened for facets are shared with first pages, so they live as long as a cursor's. */
  keepAliveSeconds: number;
}

/**
 * Post facets. The ranking matters: a hybrid search returns the lexical matches and the
 * semantic window, so the facets count exactly those (see FacetEngine.postFacets).
 */
export function createPostFacetsService(
  deps: FacetsDeps & { ranking?: RankingPolicy; references: References },
): PostFacetsService {
  return {
    async facets({ search, facets }) {
      const ranking = await postRankingOf(await postSearchKind(search, deps));
      return deps.engine.postFacets(search, facets, { ranking, keepAliveSeconds: deps.keepAliveSeconds });
    },
  };
}

/** Account facets: the accounts an account search returns, never private ones (with `similar_to`, the similar ones). */
export function createAccountFacetsService(
  deps: FacetsDeps & { ranking?: RankingPolicy; references: References },
): AccountFacetsService {
  return {
    async facets({ search, facets }) {
      const ranking = await accountRankingOf(await accountSearchKind(search, deps));
      return deps.engine.accountFacets(search, facets, { keepAliveSeconds: deps.keepAliveSeconds, ranking });
    },
  };
}
