import type { Account, PostSummary } from '../../contract/api.ts';
import type { AccountMatch, PostMatch } from '../../contract/search-extras.ts';
import type { SimilarEvidence } from './similar-evidence.ts';
import type { MediaUrlSigner } from '../../media/url-signer.ts';
import { isSearchableAccount, isServablePost } from '../../domain/availability.ts';
import type { PostRecord, SearchedPost } from '../../domain/records.ts';
import type { RecordReads } from '../../engine/reads.ts';
import type { SearchEngine, SearchPage, SearchState } from '../../engine/search.ts';
import { snapshotAccountsOf, withCurrentFollowers } from '../../domain/snapshots.ts';
import type { References } from './references.ts';
import { ValidationFailedError } from '../../internal/errors.ts';
import type { CursorCodec } from '../../query/cursor-codec.ts';
import type { AccountSearch, PostSearch } from '../../query/search-codec.ts';
import type { SearchRequest } from '../../query/search-request.ts';
import { renderAccount } from '../../render/account.ts';
import { renderPostSummary } from '../../render/post.ts';
import type { MatchEvidence } from './match-evidence.ts';
import { accountCursors, postCursors, type Cursor, type OperationCursors } from './cursors.ts';
import {
  accountRankingOf,
  accountSimilar,
  accountSearchKind,
  postSimilar,
  postRankingOf,
  postSearchKind,
  type SimilarSearch,
  type RankingPolicy,
} from './ranking.ts';
import { SUGGEST_BELOW } from './did-you-mean.ts';

/** A page of search results as the API returns it (the route adds `request_id`). */
export interface SearchResult<T, M> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  /** Only with `"include": ["matches"]`. */
  matches?: M[];
  /** The query with its misspelt words corrected, when its first page found few results. */
  suggested_query?: string;
  /** The query as searched, when the lexical side corrected words no post (account) carries. */
  corrected_query?: string;
}

/** One search operation: run a validated request's page and render the results. */
export interface SearchService<S, T, M> {
  search(request: SearchRequest<S>): Promise<SearchResult<T, M>>;
}

/**
 * What the service decided a page is (ranking.ts), once per page: a first page's kind, or, on a
 * next page (whose order follows its cursor's state), what its evidence needs.
 */
type Plan<St, First, Next> = { state: null; kind: First } | { state: St; kind: Next };

/**
 * The paging protocol shared by both searches (spec 4.1 rules 4–5): a continuation carries only
 * the cursor (and optionally a lower limit); the cursor carries the normalized request, the
 * original limit and the engine's snapshot position, signed, expiring and versioned.
 */
function createPagedSearch<S, St extends SearchState, R, T, M, First, Next>(deps: {
  cursors: OperationCursors<S, St>;
  cursorTtlSeconds: number;
  /** The kind of a first page, and what a next page's evidence needs: decided once per page. */
  kinds: { first: (search: S) => Promise<First>; next: (search: S) => Next };
  run: (
    search: S,
    plan: Plan<St, First, Next>,
    page: { limit: number; keepAliveSeconds: number },
  ) => Promise<SearchPage<R, St>>;
  render: (records: R[]) => T[];
  /** Opt-in additions to the envelope (after the spec's members, so without them the bytes are unchanged). */
  extras?: (
    search: S,
    plan: Plan<St, First, Next>,
    page: SearchPage<R, St>,
    data: T[],
  ) => Promise<Pick<SearchResult<T, M>, 'matches' | 'suggested_query' | 'corrected_query'>>;
}): SearchService<S, T, M> {
  const { cursors } = deps;
  /** The search, the original limit and the page's plan of a request. */
  async function planOf(request: SearchRequest<S>) {
    if (request.kind === 'initial') {
      const plan: Plan<St, First, Next> = { state: null, kind: await deps.kinds.first(request.search) };
      return { search: request.search, originalLimit: request.limit, limit: request.limit, plan };
    }
    const cursor: Cursor<S, St> = cursors.decode(request.cursor);
    if (request.limit !== null && request.limit > cursor.limit) {
      throw new ValidationFailedError(
        `/limit: a continuation may not raise the limit above the original ${cursor.limit}`,
      );
    }
    const plan: Plan<St, First, Next> = { state: cursor.state, kind: deps.kinds.next(cursor.search) };
    return { search: cursor.search, originalLimit: cursor.limit, limit: request.limit ?? cursor.limit, plan };
  }
  return {
    async search(request) {
      const { search, originalLimit, limit, plan } = await planOf(request);
      const page = await deps.run(search, plan, { limit, keepAliveSeconds: deps.cursorTtlSeconds });
      const next = page.state ? cursors.encode({ search, limit: originalLimit, state: page.state }) : null;
      const data = deps.render(page.records);
      const result = { data, has_more: page.hasMore, next_cursor: next };
      return deps.extras ? { ...result, ...(await deps.extras(search, plan, page, data)) } : result;
    },
  };
}

interface SearchDeps {
  engine: SearchEngine;
  cursors: CursorCodec;
  signer: MediaUrlSigner;
  cursorTtlSeconds: number;
  /** "Did you mean" from the searched documents' words (did-you-mean.ts); absent: no `suggested_query`. */
  didYouMean?: (query: string) => Promise<string | null>;
}

/**
 * A first page of a query that found fewer than {@link SUGGEST_BELOW} results in all may carry a
 * corrected query (a similar search has no query). It corrects the query as searched (`searched`,
 * the lexical side's correction when it made one), so it never repeats `corrected_query`. A
 * suggestion is an aid, not the answer: if asking for it fails, the page is answered without one.
 */
async function suggestion(
  didYouMean: SearchDeps['didYouMean'],
  typed: string | null,
  searched: string | undefined,
  page: { found: number; hasMore: boolean },
): Promise<Pick<SearchResult<unknown, unknown>, 'suggested_query'>> {
  if (!didYouMean || typed === null) return {};
  if (page.hasMore || page.found >= SUGGEST_BELOW) return {};
  const query = searched ?? typed;
  const suggested = await didYouMean(query).catch(() => null);
  return suggested !== null && suggested !== query && suggested !== typed ? { suggested_query: suggested } : {};
}

/** What every page of a search searched for, when the lexical side corrected it (its cursor carries the correction). */
function correctedOf(page: Pick<SearchPage<unknown, SearchState>, 'correctedQuery'>) {
  return page.correctedQuery !== undefined ? { corrected_query: page.correctedQuery } : {};
}

/** Search posts (spec 4.1). Without a ranking policy, queries rank by BM25. */
export function createPostSearchService(
  deps: SearchDeps & {
    ranking?: RankingPolicy;
    evidence: MatchEvidence;
    similarEvidence: SimilarEvidence;
    references: References;
    reads: Pick<RecordReads, 'currentFollowers'>;
  },
): PostSearchService {
  async function matchesOf(
    search: PostSearch,
    similar: SimilarSearch<PostRecord> | null,
    page: SearchPage<SearchedPost, SearchState>,
    data: PostSummary[],
  ): Promise<{ matches?: PostMatch[] }> {
    if (!search.include?.includes('matches')) return {};
    if (similar)
      return {
        matches: deps.similarEvidence.posts(
          await similar.reference(),
          page.records.filter((r) => data.some((d) => d.id === r.id)),
          page.similarity ?? new Map(),
        ),
      };
    return {
      matches: await deps.evidence(
        // The words the lexical side searched: a misspelt word's evidence is its correction's.
        page.correctedQuery ?? search.query,
        data.map((p) => p.id),
        // Without a fused ranking, a query's results come from BM25 alone; a filters-only search has no sides.
        (id) => page.retrievedBy?.get(id) ?? (search.query === null ? null : 'lexical'),
      ),
    };
  }

  return createPagedSearch({
    cursors: postCursors(deps.cursors),
    cursorTtlSeconds: deps.cursorTtlSeconds,
    kinds: { first: (search) => postSearchKind(search, deps), next: (search) => postSimilar(search, deps) },
    run: async (search, plan, page) => {
      const found =
        plan.state === null
          ? await deps.engine.searchPosts(search, { ...page, state: null, ranking: await postRankingOf(plan.kind) })
          : await deps.engine.searchPosts(search, { ...page, state: plan.state });
      // Posts keep their authors' counters coarsened: the summaries show the current ones.
      const followers = await deps.reads.currentFollowers(snapshotAccountsOf(found.records));
      return { ...found, records: found.records.map((r) => withCurrentFollowers(r, followers)) };
    },
    // The engine filters on the indexed `servable` flag; the check guards rendering.
    render: (records) => records.filter(isServablePost).map((r) => renderPostSummary(r, deps.signer)),
    extras: async (search, plan, page, data) => {
      const similar = plan.kind?.kind === 'similar' ? plan.kind : null;
      const [matches, suggested] = await Promise.all([
        matchesOf(search, similar, page, data),
        plan.state === null
          ? suggestion(deps.didYouMean, search.query, page.correctedQuery, {
              found: data.length,
              hasMore: page.hasMore,
            })
          : {},
      ]);
      return { ...matches, ...suggested, ...correctedOf(page) };
    },
  });
}

/** Search accounts (spec 4.2). */
export function createAccountSearchService(
  deps: SearchDeps & { references: References; similarEvidence: SimilarEvidence; ranking?: RankingPolicy },
): AccountSearchService {
  return createPagedSearch({
    cursors: accountCursors(deps.cursors),
    cursorTtlSeconds: deps.cursorTtlSeconds,
    kinds: {
      first: (search) => accountSearchKind(search, deps),
      next: (search) => accountSimilar(search, deps) ?? { kind: 'lexical' as const },
    },
    run: async (search, plan, page) =>
      plan.state === null
        ? deps.engine.searchAccounts(search, { ...page, state: null, ranking: await accountRankingOf(plan.kind) })
        : deps.engine.searchAccounts(search, { ...page, state: plan.state }),
    render: (records) => records.filter(isSearchableAccount).map((r) => renderAccount(r, deps.signer)),
    extras: async (search, plan, page, data) => {
      if (search.include?.includes('matches') && plan.kind.kind === 'similar') {
        const reference = await plan.kind.reference();
        const records = page.records.filter(isSearchableAccount);
        return { matches: await deps.similarEvidence.accounts(reference, records, page.similarity ?? new Map()) };
      }
      const suggested =
        plan.state === null
          ? await suggestion(deps.didYouMean, search.query, page.correctedQuery, {
              found: data.length,
              hasMore: page.hasMore,
            })
          : {};
      return { ...suggested, ...correctedOf(page) };
    },
  });
}

/** Search posts (spec 4.1). */
export type PostSearchService = SearchService<PostSearch, PostSummary, PostMatch>;
/** Search accounts (spec 4.2). */
export type AccountSearchService = SearchService<AccountSearch, Account, AccountMatch>;
