import type { Account, PostSummary } from '../../contract/api.ts';
import type { DeliverySigner } from '../../delivery/signer.ts';
import type { Engine, PageRequest, SearchPage, SearchState, SemanticQuery } from '../../engine/engine.ts';
import { ServiceUnavailableError, ValidationFailedError } from '../../internal/errors.ts';
import type { CursorCodec } from '../../query/cursor-codec.ts';
import {
  parseAccountSearchRequest,
  parsePostSearchRequest,
  type AccountSearch,
  type PostSearch,
  type SearchRequest,
} from '../../query/search-request.ts';
import { isSearchableAccount, isServablePost } from '../../domain/availability.ts';
import { renderAccount } from '../../render/account.ts';
import { renderPostSummary } from '../../render/post.ts';
import type { SearchVisibility } from './visibility.ts';

/** A page of search results as the API returns it (the route adds `request_id`). */
export interface SearchResult<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** One search operation: parse a body, run a page, render the results. */
export interface SearchService<T> {
  search(body: unknown): Promise<SearchResult<T>>;
}

interface Cursor<S> {
  v: 1;
  kind: string;
  search: S;
  limit: number;
  state: SearchState;
}

/**
 * The paging protocol shared by both searches (spec 4.1 rules 4–5): a continuation carries only
 * the cursor (and optionally a lower limit); the cursor carries the normalized request, the
 * original limit and the engine's snapshot position, signed and expiring.
 */
function createPagedSearch<S, R, T>(deps: {
  kind: string;
  cursors: CursorCodec;
  cursorTtlSeconds: number;
  visibility: Pick<SearchVisibility, 'current'>;
  parse: (body: unknown) => SearchRequest<S>;
  run: (search: S, page: PageRequest) => Promise<SearchPage<R>>;
  render: (records: R[]) => T[];
}): SearchService<T> {
  return {
    async search(body) {
      const request = deps.parse(body);
      let search: S;
      let limit: number;
      let originalLimit: number;
      let state: SearchState | null = null;
      if (request.kind === 'initial') {
        ({ search, limit } = request);
        originalLimit = limit;
      } else {
        const cursor = deps.cursors.decode(request.cursor) as unknown as Cursor<S>;
        if (cursor.v !== 1 || cursor.kind !== deps.kind) {
          throw new ValidationFailedError('/cursor: this cursor belongs to another operation');
        }
        if (request.limit !== null && request.limit > cursor.limit) {
          throw new ValidationFailedError(`/limit: a continuation may not raise the limit above the original ${cursor.limit}`);
        }
        ({ search, state } = cursor);
        originalLimit = cursor.limit;
        limit = request.limit ?? cursor.limit;
      }
      const page = await deps.run(search, {
        limit,
        state,
        keepAliveSeconds: deps.cursorTtlSeconds,
        visibilityEpoch: () => deps.visibility.current(),
      });
      const next: Cursor<S> | null = page.state
        ? { v: 1, kind: deps.kind, search, limit: originalLimit, state: page.state }
        : null;
      return {
        data: deps.render(page.records),
        has_more: page.hasMore,
        next_cursor: next ? deps.cursors.encode(next) : null,
      };
    },
  };
}

/** What ranking by meaning needs of the embedder (see src/embedding). */
export interface QueryEmbedder {
  status(): { state: 'off' | 'loading' | 'ready' | 'failed' };
  ready(): Promise<void>;
  embedQuery(text: string): Promise<Float32Array>;
}

/** How `post.query` ranks (config SEARCH_RANKING) and the embedder that makes it semantic. */
export interface SemanticRanking {
  mode: 'hybrid' | 'lexical' | 'semantic';
  embedder: () => QueryEmbedder;
  logger?: { warn(obj: object, msg?: string): void };
}

/**
 * The query's embedding when the ranking uses one and the model serves; otherwise undefined, and
 * the search ranks by BM25 alone (the model being off or broken must not take search down).
 */
async function semanticQueryOf(ranking: SemanticRanking | undefined, query: string): Promise<SemanticQuery | undefined> {
  if (!ranking || ranking.mode === 'lexical') return undefined;
  const embedder = ranking.embedder();
  const state = embedder.status().state;
  if (state === 'off' || state === 'failed') return undefined;
  if (state === 'loading') {
    try {
      await embedder.ready();
    } catch {
      return undefined;
    }
  }
  // Not awaited: the engine runs its lexical side while the model works.
  const vector = embedder.embedQuery(query).catch((cause: unknown) => {
    ranking.logger?.warn({ err: cause }, 'query embedding failed');
    throw new ServiceUnavailableError('The embedding model failed on this query; retry shortly.', { cause });
  });
  return { vector, mode: ranking.mode };
}

interface SearchDeps {
  engine: Pick<Engine, 'searchPosts' | 'searchAccounts'>;
  cursors: CursorCodec;
  signer: DeliverySigner;
  cursorTtlSeconds: number;
  visibility: Pick<SearchVisibility, 'current'>;
  /** Posts only; without it, queries rank by BM25. */
  ranking?: SemanticRanking;
}

/** Search posts (spec 4.1). */
export function createPostSearchService(deps: SearchDeps): SearchService<PostSummary> {
  return createPagedSearch<PostSearch, Parameters<typeof renderPostSummary>[0], PostSummary>({
    kind: 'posts',
    cursors: deps.cursors,
    cursorTtlSeconds: deps.cursorTtlSeconds,
    visibility: deps.visibility,
    parse: parsePostSearchRequest,
    run: async (search, page) => {
      // Continuations carry the first page's query vector in their state.
      const semantic = page.state === null && search.query !== null ? await semanticQueryOf(deps.ranking, search.query) : undefined;
      return deps.engine.searchPosts(search, page, semantic);
    },
    // The engine filters on the indexed `servable` flag; the check guards rendering.
    render: (records) => records.filter(isServablePost).map((r) => renderPostSummary(r, deps.signer)),
  });
}

/** Search accounts (spec 4.2). */
export function createAccountSearchService(deps: SearchDeps): SearchService<Account> {
  return createPagedSearch<AccountSearch, Parameters<typeof renderAccount>[0], Account>({
    kind: 'accounts',
    cursors: deps.cursors,
    cursorTtlSeconds: deps.cursorTtlSeconds,
    visibility: deps.visibility,
    parse: parseAccountSearchRequest,
    run: (search, page) => deps.engine.searchAccounts(search, page),
    render: (records) =>
      records
        .filter(isSearchableAccount)
        .map((r) => renderAccount(r, deps.signer)),
  });
}

/** Type of {@link createPostSearchService}'s result. */
export type PostSearchService = SearchService<PostSummary>;
/** Type of {@link createAccountSearchService}'s result. */
export type AccountSearchService = SearchService<Account>;
