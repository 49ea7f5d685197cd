import type { Client, estypes } from '@elastic/elasticsearch';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import type { AccountRecord, PostRecord } from '../../domain/records.ts';
import type { PostSearch } from '../../query/search-request.ts';
import type { AuthorPostFacts, Engine } from '../engine.ts';
import { engineCall } from './errors.ts';
import { indexNames } from './names.ts';
import { accountSearchQuery, accountSearchSort, createQualifyingAccounts } from './account-query.ts';
import { fusedPostSearch, isFusedState } from './fused-search.ts';
import { pagedSearch } from './paged-search.ts';
import { createSnapshotPool } from './snapshot-pool.ts';
import { postSearchQuery, postSearchSort } from './post-query.ts';
import { projectAccount, projectPost } from './projection.ts';
import { createRecordStore } from './record-store.ts';

const PAGE = 2000;

/** The Elasticsearch implementation of {@link Engine}. */
export function createElasticsearchEngine(deps: {
  client: Client;
  indexPrefix: string;
  /** How long first pages may share a point in time (0: one per search). */
  snapshotMaxAgeMs?: number;
}): Engine {
  const { client } = deps;
  const snapshots = createSnapshotPool({ client, maxAgeMs: deps.snapshotMaxAgeMs ?? 0 });
  const qualifying = createQualifyingAccounts(client);
  const posts = indexNames(deps.indexPrefix, 'posts');
  const accounts = indexNames(deps.indexPrefix, 'accounts');

  async function firstId(
    index: string,
    query: estypes.QueryDslQueryContainer,
    sort: estypes.Sort,
  ): Promise<string | null> {
    const response = await engineCall(() =>
      client.search({ index, query, sort, size: 1, _source: false, track_total_hits: false }),
    );
    return response.hits.hits[0]?._id ?? null;
  }

  /** Pages through every hit of a filter query in `id` order, with the given doc-value fields. */
  async function* pages(index: string, filter: estypes.QueryDslQueryContainer[], fields: string[]) {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await engineCall(() =>
        client.search({
          index,
          query: { bool: { filter } },
          _source: false,
          docvalue_fields: fields.map((field) => (field === 'posted_at' ? { field, format: 'strict_date_time' } : { field })),
          sort: [{ id: 'asc' }],
          size: PAGE,
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = response.hits.hits;
      if (hits.length > 0) yield hits;
      if (hits.length < PAGE) return;
      after = hits.at(-1)!.sort;
    }
  }

  return {
    name: 'elasticsearch',
    posts: createRecordStore<PostRecord>({ client, index: posts.write, project: projectPost }),
    accounts: createRecordStore<AccountRecord>({ client, index: accounts.write, project: projectAccount }),

    findPostIdByShortcode(shortcode) {
      return firstId(
        posts.read,
        { bool: { filter: [{ term: { shortcode } }] } },
        [{ observed_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
      );
    },

    findAccountIdByHandle(handle) {
      // Two records can claim a handle until the rename of the former holder is observed:
      // the most recently observed claim is the current holder.
      return firstId(
        accounts.read,
        { bool: { filter: [{ term: { handle: handle.toLowerCase() } }] } },
        [{ handle_observed_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
      );
    },

    async *postIdsLinkedTo(accountIds) {
      if (accountIds.length === 0) return;
      for await (const hits of pages(posts.read, [{ terms: { linked_account_ids: [...accountIds] } }], [])) {
        yield hits.map((h) => h._id!);
      }
    },

    async authorPostFacts(authorIds) {
      const out = new Map<string, AuthorPostFacts[]>(authorIds.map((id) => [id, []]));
      if (authorIds.length === 0) return out;
      const filter = [
        { terms: { 'author.id': [...authorIds] } },
        { term: { status: 'available' } },
        { exists: { field: 'posted_at' } },
      ];
      const fields = ['author.id', 'posted_at', 'views', 'view_ratio_to_account_baseline'];
      for await (const hits of pages(posts.read, filter, fields)) {
        for (const hit of hits) {
          const f = hit.fields as Record<string, unknown[]>;
          const authorId = String(f['author.id']?.[0]);
          out.get(authorId)?.push({
            id: hit._id!,
            author_id: authorId,
            posted_at: String(f.posted_at?.[0]),
            views: (f.views?.[0] as number | undefined) ?? null,
            view_ratio_to_account_baseline: (f.view_ratio_to_account_baseline?.[0] as number | undefined) ?? null,
          });
        }
      }
      return out;
    },

    async examples() {
      const accountId = await firstId(
        accounts.read,
        { bool: { filter: [{ term: { servable: true } }, { term: { is_private: false } }, { exists: { field: 'publishing_summary' } }] } },
        [{ followers_count: { order: 'desc', unmapped_type: 'long' } }, { id: 'asc' }],
      );
      const postId = accountId
        ? await firstId(
            posts.read,
            { bool: { filter: [{ term: { servable: true } }, { term: { 'author.id': accountId } }, { term: { enrichment_pending: false } }] } },
            [{ posted_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
          )
        : null;
      return { accountId, postId };
    },

    searchPosts(search, page, semantic) {
      const fused = search.query !== null && (page.state === null ? semantic !== undefined : isFusedState(page.state));
      if (fused) {
        return fusedPostSearch({ client, snapshots, index: posts.read, search: search as PostSearch & { query: string }, semantic, page });
      }
      return pagedSearch<PostRecord>({ client, snapshots, index: posts.read, query: postSearchQuery(search), sort: postSearchSort(search), page });
    },

    searchAccounts(search, page) {
      const scope = search.posts;
      return pagedSearch<AccountRecord>({
        client,
        snapshots,
        // With a posts scope, one point in time spans both indices: the qualifying set and the
        // account pages come from the same snapshot.
        index: scope ? [accounts.read, posts.read] : accounts.read,
        query: accountSearchQuery(search),
        sort: accountSearchSort(search),
        page,
        ...(scope ? { refine: async (pit: string) => [await qualifying(pit, scope)] } : {}),
      });
    },

    async refresh() {
      await engineCall(() => client.indices.refresh({ index: [posts.read, accounts.read] }));
    },

    async checkHealth() {
      const health = await engineCall(() => client.cluster.health({ timeout: '2s' }));
      if (health.status === 'red') {
        throw new ServiceUnavailableError('The search engine cluster is red; retry shortly.');
      }
      return { status: health.status };
    },

    async close() {
      await client.close();
    },
  };
}
