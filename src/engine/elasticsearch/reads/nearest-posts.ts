import type { Client, estypes } from '@elastic/elasticsearch';
import type { FilterNode } from '../../../query/ast.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { nearestPostsQuery, nearestQuery } from '../queries/nearest-query.ts';
import { postSearchFilter } from '../queries/post-query.ts';
import { vectorFilter } from '../queries/vector-filter.ts';
import { dequantizeVector } from '../vectors.ts';
import { SIMILAR_CANDIDATES, SIMILAR_WINDOW } from './similar-search.ts';

type Query = estypes.QueryDslQueryContainer;

/**
 * Where posts and their vectors are (documents/vector-projection.ts). A search that reads both
 * opens one point in time over both indices, so that its pages and its kNN windows see one
 * snapshot; every request on it but a kNN's then names the documents it means ({@link onPosts}).
 */
export interface PostVectorLayout {
  /** The posts index's read alias. */
  posts: string;
  /** The vector documents' read alias. */
  vectors: string;
  /** Matches the posts' own documents, and no vector document (the posts' concrete index names). */
  postsOnly: Query;
}

/** The indices a snapshot of a search that reads vectors spans. */
export function postSnapshotIndices(layout: PostVectorLayout): string[] {
  return [layout.posts, layout.vectors];
}

/** `query` over the posts' own documents only (a vector document has the same ID and filter facts). */
export function onPosts(layout: PostVectorLayout, query: Query): Query {
  return { bool: { must: [query], filter: [layout.postsOnly] } };
}

/**
 * How many more neighbours a checked window asks for (vector-filter.ts): a bound inside a
 * counter's bucket lets through up to that bucket's posts, which the check then removes. ×4 kept
 * recall@50 at 0.996 where ×2 gave 0.927, for +4.6 ms (bench/steady-state.md, "The vector split:
 * what a search pays").
 */
const CHECKED_WINDOW_FACTOR = 4;

/**
 * A query's nearest posts by head or best passage (nearestPostsQuery) among those a post filter
 * (`filter`, author bounds already resolved) and `servable` admit, on a snapshot spanning both
 * indices: the kNN runs on the vector documents under the filter as they can answer it
 * (vector-filter.ts); where that is wider than the filter, a larger window is asked and checked
 * against the whole filter on the posts, in one more request, and cut to `k`. Hits carry only
 * IDs and scores.
 */
export async function nearestPosts(
  client: Client,
  options: {
    layout: PostVectorLayout;
    pit: string;
    keepAlive: string;
    vector: number[];
    filter: FilterNode;
    k: number;
    candidates: number;
    /** A post left out (a `similar_to` search's reference). */
    exclude?: string;
    /** Nearest by head alone (`similar_to` a post compares heads), not by head or best passage. */
    headOnly?: boolean;
  },
): Promise<estypes.SearchHit<unknown>[]> {
  const { node, checked } = vectorFilter(options.filter);
  const k = checked ? options.k * CHECKED_WINDOW_FACTOR : options.k;
  const candidates = checked ? Math.max(options.candidates, 2 * k) : options.candidates;
  const pit = { id: options.pit, keep_alive: options.keepAlive };
  // Not the posts' documents (a posts index built before the split still holds vectors), nor the reference.
  const excluded: Query[] = [
    options.layout.postsOnly,
    ...(options.exclude ? [{ ids: { values: [options.exclude] } }] : []),
  ];
  const filter: Query[] = [...postSearchFilter({ filter: node }), { bool: { must_not: excluded } }];
  const shape = { vector: options.vector, k, candidates, filter };
  const hits = (
    await client.search({
      ...COMPLETE_RESULTS,
      pit,
      ...(options.headOnly ? nearestQuery({ field: 'embedding', ...shape }) : nearestPostsQuery(shape)),
      size: k,
      _source: false,
      track_total_hits: false,
    })
  ).hits.hits;
  if (!checked || hits.length === 0) return hits;
  const passing = await client.search({
    ...COMPLETE_RESULTS,
    pit,
    query: {
      bool: {
        filter: [
          options.layout.postsOnly,
          { ids: { values: hits.map((h) => h._id!) } },
          ...postSearchFilter({ filter: options.filter }),
        ],
      },
    },
    size: hits.length,
    _source: false,
    track_total_hits: false,
  });
  const kept = new Set(passing.hits.hits.map((h) => h._id!));
  return hits.filter((h) => kept.has(h._id!)).slice(0, options.k);
}

/**
 * The window of a `similar_to` search of posts on a snapshot of both indices: up to
 * {@link SIMILAR_WINDOW} posts nearest to the quantized `vector` by head, among those `filter`
 * admits, the reference left out, in order of similarity (kNN scores). Facets count exactly these.
 */
export function similarPostsWindow(
  client: Client,
  options: {
    layout: PostVectorLayout;
    pit: string;
    keepAlive: string;
    filter: FilterNode;
    vector: string;
    exclude: string;
  },
): Promise<estypes.SearchHit<unknown>[]> {
  return nearestPosts(client, {
    layout: options.layout,
    pit: options.pit,
    keepAlive: options.keepAlive,
    vector: dequantizeVector(options.vector),
    filter: options.filter,
    k: SIMILAR_WINDOW,
    candidates: SIMILAR_CANDIDATES,
    exclude: options.exclude,
    headOnly: true,
  });
}
