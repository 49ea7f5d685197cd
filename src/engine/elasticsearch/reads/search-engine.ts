import type { Client } from '@elastic/elasticsearch';
import { ExpiredCursorError } from '../../../internal/errors.ts';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';
import type { PagedState, SearchEngine, SearchPage } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import {
  accountSearchFilter,
  accountSearchQuery,
  accountSearchSort,
  narrowedScope,
  type QualifyingAccounts,
} from '../queries/account-query.ts';
import { fusedPostSearch } from './fused-search.ts';
import { postRecords } from './fused-sides.ts';
import { postSnapshotIndices, similarPostsWindow, type PostVectorLayout } from './nearest-posts.ts';
import { EXPIRED, pagedSearch } from './paged-search.ts';
import { postSearchFilter, postSearchQuery, postSearchSort } from '../queries/post-query.ts';
import { correctedPostQuery } from '../queries/query-terms.ts';
import { correctedAccountQuery, fusedAccountSearch } from './fused-account-search.ts';
import { similarSearch } from './similar-search.ts';
import type { SnapshotPool } from './snapshot-pool.ts';
import { createVolatileBounds } from '../queries/volatile-bounds.ts';
import type { FusedSettings } from './fused-settings.ts';

/** A page searched with its query's misspelt words corrected: it says so, and its cursor carries them. */
function corrected<R>(found: SearchPage<R, PagedState>, text: string): SearchPage<R, PagedState> {
  return { ...found, correctedQuery: text, state: found.state && { ...found.state, corrected: text } };
}

/**
 * Both searches on Elasticsearch: the ranking of a first page is the service's choice (BM25 or a
 * sort, fused with the query's embedding, or similarity to a reference); a next page follows the
 * kind of its cursor's state.
 */
export function createSearchEngine(
  deps: FusedSettings & {
    client: Client;
    snapshots: SnapshotPool;
    visibility: VisibilityEpoch;
    qualifying: QualifyingAccounts;
    /** The posts and their vector documents. */
    layout: PostVectorLayout;
    accountsIndex: string;
  },
): SearchEngine {
  const { client, snapshots, visibility, qualifying } = deps;
  const { layout } = deps;
  const { similarityFloor, unmatchedFloor, sentenceFloor, relatedFloor, vectorFeedback, queryTerms } = deps;
  const settings: FusedSettings = {
    similarityFloor,
    unmatchedFloor,
    sentenceFloor,
    relatedFloor,
    vectorFeedback,
    queryTerms,
  };
  const posts = { read: layout.posts };
  const accounts = { read: deps.accountsIndex };
  const bounds = createVolatileBounds({ client, accountsIndex: deps.accountsIndex });
  return {
    async searchPosts(asked, page) {
      // Author ranges over counters and metrics, read exactly on the posts' coarse copies.
      const search = { ...asked, filter: await bounds.resolve(asked.filter) };
      const { query } = search;
      const paged = (state: PagedState | null, text: string | null) =>
        pagedSearch<PostRecord>({
          client,
          snapshots,
          visibility,
          index: posts.read,
          query: postSearchQuery(text === null ? search : { ...search, query: text }),
          sort: postSearchSort(search),
          page: { limit: page.limit, keepAliveSeconds: page.keepAliveSeconds, state },
        });
      const lexical = async (state: PagedState | null) => {
        // A query ranked by its words alone is corrected as a fused one's lexical side is; its
        // pages search the same words. A first page searches as typed while a word that may be
        // misspelt is looked up, and again only when one is corrected (the lookup first, then the
        // search, cost every first page 22 % at p50; bench/relevance.md, "Words of the language
        // are no misspellings").
        const carried = state?.corrected ?? null;
        if (carried !== null) return corrected(await paged(state, carried), carried);
        const typed = paged(state, null);
        if (query === null || deps.queryTerms !== true || state !== null) return typed;
        typed.catch(() => undefined);
        const text = await correctedPostQuery(client, posts.read, query);
        if (text === null) return typed;
        // The page as typed is not shown: its own snapshot, if it kept one for a next page, goes.
        void typed
          .then(async ({ state: kept }) => {
            if (kept && !kept.shared) await client.closePointInTime({ id: kept.snapshot });
          })
          .catch(() => undefined);
        return corrected(await paged(null, text), text);
      };
      const fused = (fusedPage: Parameters<typeof fusedPostSearch>[0]['page'], text: string) =>
        fusedPostSearch({
          client,
          snapshots,
          visibility,
          layout,
          search: { ...search, query: text },
          ...settings,
          page: fusedPage,
        });
      const similar = (similarPage: Parameters<typeof similarSearch>[0]['page']) =>
        similarSearch<PostRecord>({
          client,
          snapshots,
          visibility,
          index: postSnapshotIndices(layout),
          field: 'embedding',
          filter: postSearchFilter(search),
          apart: {
            window: (pit, vector, exclude) =>
              similarPostsWindow(client, {
                layout,
                pit,
                keepAlive: `${similarPage.keepAliveSeconds}s`,
                filter: search.filter,
                vector,
                exclude,
              }),
            records: (pit, ids) =>
              postRecords(client, { pit, keepAlive: `${similarPage.keepAliveSeconds}s`, layout }, ids),
          },
          page: similarPage,
        });
      // The service chose the ranking of a first page; a next page follows the kind of its state.
      if (page.state === null) {
        if (page.ranking.kind === 'similar') return similar({ ...page, state: null, ranking: page.ranking });
        return page.ranking.kind === 'fused' && query !== null
          ? fused({ ...page, state: null, ranking: page.ranking }, query)
          : lexical(null);
      }
      if (page.state.kind === 'paged') return lexical(page.state);
      if (page.state.kind === 'similar') return similar({ ...page, state: page.state });
      if (query === null) throw new ExpiredCursorError(EXPIRED);
      return fused({ ...page, state: page.state }, query);
    },

    async searchAccounts(search, page) {
      const scope = search.posts;
      // With a posts scope, one point in time spans both indices: the qualifying set and the
      // account pages come from the same snapshot.
      const index = scope ? [accounts.read, posts.read] : accounts.read;
      // The account filter's facts the posts' author copies hold narrow the posts counted.
      const narrowed = scope ? narrowedScope(scope, search.filter) : null;
      const refine = narrowed ? { refine: async (pit: string) => [await qualifying(pit, narrowed)] } : {};
      const { limit, keepAliveSeconds } = page;
      // The service chose the ranking of a first page; a next page follows the kind of its state.
      const similar =
        page.state === null
          ? page.ranking.kind === 'similar' && { limit, keepAliveSeconds, state: null, ranking: page.ranking }
          : page.state.kind === 'similar' && { limit, keepAliveSeconds, state: page.state };
      const query = search.query;
      if (query !== null) {
        const base = {
          client,
          snapshots,
          visibility,
          index,
          // Words no account carries are corrected with the posts' query terms (SEARCH_QUERY_TERMS).
          correctIn: deps.queryTerms ? { accounts: accounts.read, posts: posts.read } : null,
          search: { ...search, query },
          ...refine,
        };
        const floors = {
          similarityFloor: deps.similarityFloor ?? null,
          ...(deps.unmatchedFloor !== undefined ? { unmatchedFloor: deps.unmatchedFloor } : {}),
        };
        if (page.state === null && page.ranking.kind === 'fused')
          return fusedAccountSearch({
            ...base,
            ...floors,
            page: { limit, keepAliveSeconds, state: null, ranking: page.ranking },
          });
        if (page.state?.kind === 'fused')
          return fusedAccountSearch({ ...base, ...floors, page: { limit, keepAliveSeconds, state: page.state } });
      }
      if (similar) {
        const filter = accountSearchFilter(search);
        return similarSearch<AccountRecord>({
          client,
          snapshots,
          visibility,
          index,
          field: 'lookalike_embedding',
          filter,
          page: similar,
          ...refine,
        });
      }
      const paged = page.state?.kind === 'paged' ? page.state : null;
      // A query ranked by its words alone is corrected as a fused one's lexical side is, before
      // its first page (one count; more only for a word no account carries); its pages search the same.
      const correctedWords =
        query === null || !deps.queryTerms
          ? null
          : page.state === null
            ? await correctedAccountQuery(client, { accounts: accounts.read, posts: posts.read }, query)
            : (paged?.corrected ?? null);
      const found = await pagedSearch<AccountRecord>({
        client,
        snapshots,
        visibility,
        index,
        query: accountSearchQuery(search, correctedWords ?? query),
        sort: accountSearchSort(search),
        page: { limit, keepAliveSeconds, state: paged },
        ...refine,
      });
      return correctedWords === null ? found : corrected(found, correctedWords);
    },
  };
}
