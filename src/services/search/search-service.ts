import type { Account, PostSummary } from '../../contract/api.ts';
import type { AccountMatch, PostMatch } from '../../contract/search-extras.ts';
import type { SimilarEvidence } from './similar-evidence.ts';
import type { MediaUrlSigner } from '../../media/url-signer.ts';
import { isSearchableAccount, isServablePost } from '../../domain/availability.ts';
import type { AccountRecord, SearchedPost } from '../../domain/records.ts';
import type { RecordReads } from '../../engine/reads.ts';
import type { AccountSearchState, SearchEngine, SearchPage, SearchState } from '../../engine/search.ts';
import { snapshotAccountsOf, withCurrentFollowers } from '../../domain/snapshots.ts';
import type { References } from './references.ts';
import { ValidationFailedError } from '../../internal/errors.ts';
import type { CursorCodec } from '../../query/cursor-codec.ts';
import type { AccountSearch, PostSearch, SearchRequest } from '../../query/search-request.ts';
import { renderAccount } from '../../render/account.ts';
import { renderPostSummary } from '../../render/post.ts';
import type { MatchEvidence } from './match-evidence.ts';
import { accountCursors, postCursors, type Cursor, type OperationCursors } from './cursors.ts';
import { accountRankingOf, postRankingOf, type RankingPolicy } from './ranking.ts';
import { SUGGEST_BELOW } from './did-you-mean.ts';

/** A page of search results as the API returns it (the route adds `request_id`). */
export interface SearchResult<T, M> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  /** Only with `"include": ["matches"]`. */
  matches?: M[];
  /** Post search only: the query with its misspelt words corrected, when it found few posts. */
  suggested_query?: string;
}

/** One search operation: run a validated request's page and render the results. */
export interface SearchService<S, T, M> {
  search(request: SearchRequest<S>): Promise<SearchResult<T, M>>;
}

/**
 * The paging protocol shared by both searches (spec 4.1 rules 4–5): a continuation carries only
 * the cursor (and optionally a lower limit); the cursor carries the normalized request, the
 * original limit and the engine's snapshot position, signed, expiring and versioned.
 */
function createPagedSearch<S, St extends SearchState, R, T, M>(deps: {
  cursors: OperationCursors<S, St>;
  cursorTtlSeconds: number;
  run: (search: S, page: { limit: number; keepAliveSeconds: number; state: St | null }) => Promise<SearchPage<R, St>>;
  render: (records: R[]) => T[];
  /** Opt-in additions to the envelope (after the spec's members, so without them the bytes are unchanged). */
  extras?: (
    search: S,
    page: SearchPage<R, St>,
    data: T[],
    first: boolean,
  ) => Promise<Pick<SearchResult<T, M>, 'matches' | 'suggested_query'>>;
}): SearchService<S, T, M> {
  const { cursors } = deps;
  return {
    async search(request) {
      let cursor: Cursor<S, St> | null = null;
      let limit: number;
      if (request.kind === 'initial') {
        limit = request.limit;
      } else {
        cursor = cursors.decode(request.cursor);
        if (request.limit !== null && request.limit > cursor.limit) {
          throw new ValidationFailedError(
            `/limit: a continuation may not raise the limit above the original ${cursor.limit}`,
          );
        }
        limit = request.limit ?? cursor.limit;
      }
      const search = request.kind === 'initial' ? request.search : cursor!.search;
      const page = await deps.run(search, {
        limit,
        keepAliveSeconds: deps.cursorTtlSeconds,
        state: cursor?.state ?? null,
      });
      const originalLimit = cursor?.limit ?? limit;
      const next = page.state ? cursors.encode({ search, limit: originalLimit, state: page.state }) : null;
      const data = deps.render(page.records);
      const result = { data, has_more: page.hasMore, next_cursor: next };
      return deps.extras ? { ...result, ...(await deps.extras(search, page, data, cursor === null)) } : result;
    },
  };
}

interface SearchDeps {
  engine: SearchEngine;
  cursors: CursorCodec;
  signer: MediaUrlSigner;
  cursorTtlSeconds: number;
}

/** Search posts (spec 4.1). Without a ranking policy, queries rank by BM25. */
export function createPostSearchService(
  deps: SearchDeps & {
    ranking?: RankingPolicy;
    evidence: MatchEvidence;
    similarEvidence: SimilarEvidence;
    references: References;
    reads: Pick<RecordReads, 'currentFollowers'>;
    /** "Did you mean" (did-you-mean.ts); absent: no `suggested_query`. */
    didYouMean?: (query: string) => Promise<string | null>;
  },
): PostSearchService {
  /**
   * A first page of a query that found fewer than {@link SUGGEST_BELOW} posts in all may carry a
   * corrected query. A suggestion is an aid, not the answer: if asking for it fails, the page is
   * answered without one.
   */
  async function suggestion(search: PostSearch, found: number, hasMore: boolean) {
    if (!deps.didYouMean || search.query === null || search.similarTo !== undefined) return {};
    if (hasMore || found >= SUGGEST_BELOW) return {};
    const suggested = await deps.didYouMean(search.query).catch(() => null);
    return suggested !== null && suggested !== search.query ? { suggested_query: suggested } : {};
  }

  async function matchesOf(
    search: PostSearch,
    page: SearchPage<SearchedPost, SearchState>,
    data: PostSummary[],
  ): Promise<{ matches?: PostMatch[] }> {
    if (!search.include?.includes('matches')) return {};
    if (search.similarTo !== undefined)
      return {
        matches: await deps.similarEvidence.posts(
          search.similarTo,
          page.records.filter((r) => data.some((d) => d.id === r.id)),
          page.similarity ?? new Map(),
        ),
      };
    return {
      matches: await deps.evidence(
        search.query,
        data.map((p) => p.id),
        // Without a fused ranking, a query's results come from BM25 alone; a filters-only search has no sides.
        (id) => page.retrievedBy?.get(id) ?? (search.query === null ? null : 'lexical'),
      ),
    };
  }

  return createPagedSearch<PostSearch, SearchState, SearchedPost, PostSummary, PostMatch>({
    cursors: postCursors(deps.cursors),
    cursorTtlSeconds: deps.cursorTtlSeconds,
    run: async (search, page) => {
      const found =
        page.state === null
          ? await deps.engine.searchPosts(search, { ...page, state: null, ranking: await postRankingOf(search, deps) })
          : await deps.engine.searchPosts(search, { ...page, state: page.state });
      // Posts keep their authors' counters coarsened: the summaries show the current ones.
      const followers = await deps.reads.currentFollowers(snapshotAccountsOf(found.records));
      return { ...found, records: found.records.map((r) => withCurrentFollowers(r, followers)) };
    },
    // The engine filters on the indexed `servable` flag; the check guards rendering.
    render: (records) => records.filter(isServablePost).map((r) => renderPostSummary(r, deps.signer)),
    extras: async (search, page, data, first) => {
      const [matches, suggested] = await Promise.all([
        matchesOf(search, page, data),
        first ? suggestion(search, data.length, page.hasMore) : {},
      ]);
      return { ...matches, ...suggested };
    },
  });
}

/** Search accounts (spec 4.2). */
export function createAccountSearchService(
  deps: SearchDeps & { references: References; similarEvidence: SimilarEvidence },
): AccountSearchService {
  return createPagedSearch<AccountSearch, AccountSearchState, AccountRecord, Account, AccountMatch>({
    cursors: accountCursors(deps.cursors),
    cursorTtlSeconds: deps.cursorTtlSeconds,
    run: async (search, page) => {
      if (page.state !== null || search.similarTo === undefined)
        return deps.engine.searchAccounts(
          search,
          page.state === null ? { ...page, state: null } : { ...page, state: page.state },
        );
      return deps.engine.searchAccounts(search, {
        ...page,
        state: null,
        ranking: await accountRankingOf(search, deps),
      });
    },
    render: (records) => records.filter(isSearchableAccount).map((r) => renderAccount(r, deps.signer)),
    extras: async (search, page) =>
      search.include?.includes('matches') && search.similarTo !== undefined
        ? {
            matches: await deps.similarEvidence.accounts(
              search.similarTo,
              page.records.filter(isSearchableAccount),
              page.similarity ?? new Map(),
            ),
          }
        : {},
  });
}

/** Search posts (spec 4.1). */
export type PostSearchService = SearchService<PostSearch, PostSummary, PostMatch>;
/** Search accounts (spec 4.2). */
export type AccountSearchService = SearchService<AccountSearch, Account, AccountMatch>;
