import type { Client, estypes } from '@elastic/elasticsearch';
import { ServiceUnavailableError } from '../../errors.ts';
import type { AccountRecord, PostRecord } from '../../model/records.ts';
import type { AuthorPostFacts, Engine } from '../engine.ts';
import { engineCall } from './errors.ts';
import { indexNames } from './names.ts';
import { projectAccount, projectPost } from './projection.ts';
import { createRecordStore } from './record-store.ts';

const PAGE = 1000;

/** The Elasticsearch implementation of {@link Engine}. */
export function createElasticsearchEngine(deps: { client: Client; indexPrefix: string }): Engine {
  const { client } = deps;
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

  async function authorFacts(authorId: string): Promise<AuthorPostFacts[]> {
    const facts: AuthorPostFacts[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const response = await engineCall(() =>
        client.search({
          index: posts.read,
          query: {
            bool: {
              filter: [{ term: { 'author.id': authorId } }, { term: { status: 'available' } }, { exists: { field: 'posted_at' } }],
            },
          },
          _source: false,
          docvalue_fields: ['posted_at', 'views', 'view_ratio_to_account_baseline'].map((field) =>
            field === 'posted_at' ? { field, format: 'strict_date_time' } : { field },
          ),
          sort: [{ id: 'asc' }],
          size: PAGE,
          track_total_hits: false,
          ...(after ? { search_after: after as never } : {}),
        }),
      );
      for (const hit of response.hits.hits) {
        const fields = hit.fields as Record<string, unknown[]>;
        facts.push({
          id: hit._id!,
          posted_at: String(fields.posted_at?.[0]),
          views: (fields.views?.[0] as number | undefined) ?? null,
          view_ratio_to_account_baseline: (fields.view_ratio_to_account_baseline?.[0] as number | undefined) ?? null,
        });
      }
      if (response.hits.hits.length < PAGE) return facts;
      after = response.hits.hits.at(-1)!.sort;
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

    async *postIdsLinkedTo(accountId) {
      let after: unknown[] | undefined;
      for (;;) {
        const response = await engineCall(() =>
          client.search({
            index: posts.read,
            query: { bool: { filter: [{ term: { linked_account_ids: accountId } }] } },
            _source: false,
            sort: [{ id: 'asc' }],
            size: PAGE,
            track_total_hits: false,
            ...(after ? { search_after: after as never } : {}),
          }),
        );
        const ids = response.hits.hits.map((h) => h._id!);
        if (ids.length > 0) yield ids;
        if (ids.length < PAGE) return;
        after = response.hits.hits.at(-1)!.sort;
      }
    },

    async authorPostFacts(authorIds) {
      const out = new Map<string, AuthorPostFacts[]>();
      for (const id of authorIds) out.set(id, await authorFacts(id));
      return out;
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
