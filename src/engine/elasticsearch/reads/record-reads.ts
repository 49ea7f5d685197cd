import type { Client, estypes } from '@elastic/elasticsearch';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';
import type { RecordReader } from '../../records.ts';
import type { RecordReads, StoredFollowers } from '../../reads.ts';
import { COMPLETE_RESULTS, engineCall } from '../errors.ts';
import { firstNumber, firstString } from '../response-values.ts';
import { postVectorsBody, readPostVectors } from '../queries/post-vectors.ts';

/**
 * The record reads of the API: records by ID (the stores), the current holders of shortcodes and
 * handles, accounts' current follower counts, and an example account and post for the docs.
 */
export function createRecordReads(deps: {
  client: Client;
  postsIndex: string;
  accountsIndex: string;
  /** The posts' vector documents (documents/vector-projection.ts). */
  postVectorsIndex: string;
  posts: RecordReader<PostRecord>;
  accounts: RecordReader<AccountRecord>;
}): RecordReads {
  const { client, postsIndex, accountsIndex } = deps;

  async function firstId(
    index: string,
    query: estypes.QueryDslQueryContainer,
    sort: estypes.Sort,
  ): Promise<string | null> {
    const response = await engineCall(() =>
      client.search({ ...COMPLETE_RESULTS, index, query, sort, size: 1, _source: false, track_total_hits: false }),
    );
    return response.hits.hits[0]?._id ?? null;
  }

  const reads: RecordReads = {
    posts: deps.posts,
    accounts: deps.accounts,

    findPostIdByShortcode(shortcode) {
      return firstId(postsIndex, { bool: { filter: [{ term: { shortcode } }] } }, [
        { observed_at: { order: 'desc', unmapped_type: 'date' } },
        { id: 'asc' },
      ]);
    },

    async currentFollowers(accountIds) {
      const stored = await reads.storedFollowers(accountIds);
      return new Map([...stored].map(([id, s]) => [id, s.followers]));
    },

    async storedFollowers(accountIds) {
      const out = new Map<string, StoredFollowers>();
      const ids = [...new Set(accountIds)];
      if (ids.length === 0) return out;
      // A search reading doc values, not a get: a get parses each account's whole stored record
      // (vectors included) to filter it, which cost a post search page ~6 ms at 1M posts.
      const response = await engineCall(() =>
        client.search({
          index: accountsIndex,
          query: { ids: { values: ids } },
          size: ids.length,
          _source: false,
          stored_fields: ['_none_'],
          docvalue_fields: ['id', 'followers_count', { field: 'observed_at', format: 'strict_date_time' }],
          track_total_hits: false,
        }),
      );
      for (const hit of response.hits.hits) {
        const id = firstString(hit, 'id');
        const followers = firstNumber(hit, 'followers_count');
        const observedAt = firstString(hit, 'observed_at');
        if (id !== undefined && followers !== undefined && observedAt !== undefined)
          out.set(id, { followers, observedAt });
      }
      return out;
    },

    async postVectors(postIds) {
      const ids = [...new Set(postIds)];
      if (ids.length === 0) return new Map();
      const response = await engineCall(() =>
        client.search({ ...COMPLETE_RESULTS, index: deps.postVectorsIndex, ...postVectorsBody(ids) }),
      );
      return new Map([...readPostVectors(response.hits.hits)].map(([id, stored]) => [id, stored.vector]));
    },

    findAccountIdByHandle(handle) {
      // Two records can claim a handle until the rename of the former holder is observed:
      // the most recently observed claim is the current holder.
      return firstId(accountsIndex, { bool: { filter: [{ term: { handle: handle.toLowerCase() } }] } }, [
        { handle_observed_at: { order: 'desc', unmapped_type: 'date' } },
        { id: 'asc' },
      ]);
    },

    async examples() {
      const accountId = await firstId(
        accountsIndex,
        {
          bool: {
            filter: [
              { term: { servable: true } },
              { term: { is_private: false } },
              { exists: { field: 'publishing_summary' } },
            ],
          },
        },
        [{ followers_count: { order: 'desc', unmapped_type: 'long' } }, { id: 'asc' }],
      );
      const postId = accountId
        ? await firstId(
            postsIndex,
            {
              bool: {
                filter: [
                  { term: { servable: true } },
                  { term: { 'author.id': accountId } },
                  { term: { enrichment_pending: false } },
                ],
              },
            },
            [{ posted_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
          )
        : null;
      return { accountId, postId };
    },
  };
  return reads;
}
