import type { Client, estypes } from '@elastic/elasticsearch';
import type { SimilarityEvidence, PostSimilarity } from '../../matches.ts';
import { COMPLETE_RESULTS, engineCall, translateEngineError } from '../errors.ts';
import { nearestQuery } from '../queries/nearest-query.ts';

/** Topics counted per account: enough for what two accounts share to show. */
const TOPICS_PER_ACCOUNT = 50;

/** The evidence of `similar_to` account searches, from the posts index. */
/** The `authors` aggregation's answer: each author's top topics. */
type Buckets = { buckets: Array<{ key: string; topics: { buckets: Array<{ key: string }> } }> };

export function createSimilarityEvidence(deps: {
  client: Client;
  postsIndex: string;
  /** The posts' vector documents (documents/vector-projection.ts): they hold `author.id` and `status` too. */
  vectorsIndex: string;
}): SimilarityEvidence {
  const { client } = deps;
  const available = { term: { status: 'available' } };
  return {
    async accountTopics(accountIds) {
      const out = new Map<string, string[]>(accountIds.map((id) => [id, []]));
      if (accountIds.length === 0) return out;
      const response = await engineCall(() =>
        client.search<unknown, { authors?: Buckets }>({
          ...COMPLETE_RESULTS,
          index: deps.postsIndex,
          size: 0,
          track_total_hits: false,
          query: { bool: { filter: [{ terms: { 'author.id': [...accountIds] } }, available] } },
          aggs: {
            authors: {
              terms: { field: 'author.id', size: accountIds.length },
              aggs: { topics: { terms: { field: 'topics', size: TOPICS_PER_ACCOUNT } } },
            },
          },
        }),
      );
      for (const bucket of response.aggregations?.authors?.buckets ?? []) {
        out.set(
          bucket.key,
          bucket.topics.buckets.map((t) => t.key),
        );
      }
      return out;
    },

    async closestPosts(accountIds, vector, n) {
      const out = new Map<string, PostSimilarity[]>(accountIds.map((id) => [id, []]));
      if (accountIds.length === 0) return out;
      const searches = accountIds.flatMap((id): estypes.MsearchRequestItem[] => [
        // In a multi-search the header line carries the request parameters.
        { index: deps.vectorsIndex, ...COMPLETE_RESULTS },
        {
          ...nearestQuery({
            field: 'embedding',
            vector: [...vector],
            k: n,
            candidates: Math.max(20, n * 5),
            filter: { bool: { filter: [{ term: { 'author.id': id } }, available, { term: { servable: true } }] } },
          }),
          size: n,
          _source: false,
          track_total_hits: false,
        },
      ]);
      const response = await engineCall(() => client.msearch({ searches }));
      response.responses.forEach((answer, i) => {
        if ('error' in answer) throw translateEngineError(answer.error);
        // A cosine kNN score is (1 + cosine) / 2.
        out.set(
          accountIds[i]!,
          answer.hits.hits.map((h) => ({ id: h._id!, similarity: 2 * (h._score ?? 0.5) - 1 })),
        );
      });
      return out;
    },
  };
}
