import type { Client, estypes } from '@elastic/elasticsearch';
import type { FilterNode } from '../../../query/ast.ts';
import type { RelatedEvidence } from '../../../query/related-evidence.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { relatedPostsQuery } from '../queries/related-query.ts';
import type { PostVectorLayout } from './nearest-posts.ts';

/**
 * The posts related to a query's strong word matches on a search's snapshot (related-query.ts):
 * up to `size`, in the query's language first; none without evidence. Hits carry only IDs and scores.
 */
export async function relatedPosts(
  client: Client,
  options: {
    layout: PostVectorLayout;
    pit: string;
    keepAlive: string;
    filter: FilterNode;
    evidence: RelatedEvidence | null;
    language: string | null;
    size: number;
  },
): Promise<estypes.SearchHit<unknown>[]> {
  const { evidence } = options;
  if (!evidence) return [];
  const { query, sort } = relatedPostsQuery({ ...options, postsOnly: options.layout.postsOnly, evidence });
  const response = await client.search({
    ...COMPLETE_RESULTS,
    pit: { id: options.pit, keep_alive: options.keepAlive },
    query,
    sort,
    size: options.size,
    _source: false,
    track_total_hits: false,
  });
  return response.hits.hits;
}
