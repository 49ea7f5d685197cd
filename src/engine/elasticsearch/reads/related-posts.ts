import type { Client, estypes } from '@elastic/elasticsearch';
import type { FilterNode } from '../../../query/ast.ts';
import type { RelatedEvidence } from '../../../query/related-evidence.ts';
import { unitMean } from '../../../query/relevance-feedback.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { cosineOf } from '../queries/hybrid-windows.ts';
import { relatedPostsQuery } from '../queries/related-query.ts';
import { nearestPosts, type PostVectorLayout } from './nearest-posts.ts';
import { readFeedbackVectors } from './vector-feedback.ts';

/** What a search of the posts related to a query's strong word matches needs. */
interface RelatedSearch {
  layout: PostVectorLayout;
  pit: string;
  keepAlive: string;
  filter: FilterNode;
  evidence: RelatedEvidence | null;
  language: string | null;
  size: number;
  /**
   * The least cosine between a post and the strong hits' mean vector for it to be related by its
   * vector (model-floors.ts, `related`); null: only the posts on their topics are.
   */
  neighbourFloor: number | null;
}

/**
 * The posts related to a query's strong word matches on a search's snapshot, up to `size`, none
 * without evidence: the posts on their topics, in the query's language first (related-query.ts);
 * then, while the page is short of them, the posts nearest the strong hits' mean vector above
 * `neighbourFloor` (the engine's "more like these"), which reaches the posts on the same subject
 * that the fine-grained topics miss and the strong hits whose enrichment is pending. Hits carry
 * only IDs and scores.
 */
export async function relatedPosts(client: Client, options: RelatedSearch): Promise<estypes.SearchHit<unknown>[]> {
  const { evidence } = options;
  if (!evidence) return [];
  const { neighbourFloor } = options;
  // The strong hits' vectors are read beside the topical search, which decides whether they are needed.
  const { layout, pit, keepAlive } = options;
  const stored =
    neighbourFloor === null || evidence.niches.size === 0
      ? null
      : readFeedbackVectors({ client, pit, keepAlive, postsOnly: layout.postsOnly, ids: evidence.sources });
  stored?.catch(() => undefined);
  const topical = evidence.topics.size === 0 ? [] : await onTopics(client, { ...options, evidence });
  if (stored === null || neighbourFloor === null || topical.length >= options.size) return topical;
  const seen = new Set([...topical.map((h) => h._id!), ...evidence.sources]);
  const { vectors } = await stored;
  const near = await nearTheStrongHits(client, {
    ...options,
    evidence,
    neighbourFloor,
    vectors: [...vectors.values()],
  });
  return [...topical, ...near.filter((h) => !seen.has(h._id!))].slice(0, options.size);
}

/** The posts on the strong hits' topics (related-query.ts). */
async function onTopics(client: Client, options: RelatedSearch & { evidence: RelatedEvidence }) {
  const response = await client.search({
    ...COMPLETE_RESULTS,
    pit: { id: options.pit, keep_alive: options.keepAlive },
    ...relatedPostsQuery({ ...options, postsOnly: options.layout.postsOnly }),
    size: options.size,
    _source: false,
    track_total_hits: false,
  });
  return response.hits.hits;
}

/**
 * The posts nearest the unit mean of the strong hits' stored vectors, at `neighbourFloor` or
 * nearer, by authors who share a niche with theirs: vectors group posts by their phrasing as much
 * as by their subject (the demo's Italian workout posts stood 0.78 from a fashion question's strong
 * hits in the same template), and an author's niches are what the service knows of a subject in
 * every language. None when the strong hits' authors have no niche yet; an author of several
 * niches lets the others' posts through (bench/relevance.md, "Posts near the words' best matches").
 */
async function nearTheStrongHits(
  client: Client,
  options: RelatedSearch & { evidence: RelatedEvidence; neighbourFloor: number; vectors: number[][] },
): Promise<estypes.SearchHit<unknown>[]> {
  const { layout, pit, keepAlive, evidence } = options;
  const vector = unitMean(options.vectors);
  if (vector === null) return [];
  const hits = await nearestPosts(client, {
    layout,
    pit,
    keepAlive,
    vector,
    filter: {
      kind: 'and',
      children: [
        options.filter,
        { kind: 'contains', field: 'author.niches', mode: 'any', values: [...evidence.niches] },
      ],
    },
    k: options.size,
    // Twice the window, as a search's own kNN asks (fused-settings.ts, KNN_CANDIDATES).
    candidates: 2 * options.size,
  });
  return hits.filter((h) => cosineOf(h._score ?? 0) >= options.neighbourFloor);
}
