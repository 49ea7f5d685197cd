/**
 * For the relevance benches that re-rank offline (coverage.ts, feedback.ts): the judged queries of
 * both sets, and the two windows a hybrid post search fuses, asked of Elasticsearch as the service
 * asks them: the lexical window (a query tree, by score then id) and the semantic one (kNN under
 * the search's filter, on the posts' vector index beside the posts index).
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { FUSION_WINDOW, KNN_CANDIDATES } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { nearestPostsQuery } from '../../src/engine/elasticsearch/queries/nearest-query.ts';
import { postSearchFilter } from '../../src/engine/elasticsearch/queries/post-query.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { generateObservations, seedPostLabels } from '../../src/seed/generator.ts';
import { rankScores } from './api-search.ts';
import { postServiceId } from './beir-observations.ts';
import { loadCorpus, loadQrels, loadQueries, scifactDir } from './beir.ts';
import { ndcgAtK } from './ndcg.ts';
import { socialQuerySet } from './social-set.ts';
import { postVectorsOf } from '../lib/sides.ts';

/** The page size the benches judge (nDCG@10). */
export const K = 10;

/** A window's hit: the post id, its score, and the named queries it matched (lexical). */
export type Hit = { _id: string; _score: number; matched_queries?: string[] | Record<string, number> };

/** The search body of a lexical window: `query` by score then id, one more than the fusion window. */
const lexicalBody = (query: unknown) => ({
  query,
  sort: [{ _score: { order: 'desc' as const } }, { id: 'asc' as const }],
  size: FUSION_WINDOW + 1,
  _source: false,
});

/** The window requests on `es`. */
export function windowsOn(es: Client) {
  return {
    lexicalWindow: async (index: string, query: unknown): Promise<Hit[]> => {
      const r = await es.search({ index, ...(lexicalBody(query) as object) });
      return r.hits.hits.map((h) => ({ _id: h._id!, _score: h._score ?? 0, matched_queries: h.matched_queries }));
    },
    semanticWindow: async (index: string, search: PostSearch, vector: number[]): Promise<Hit[]> => {
      if (vector.length === 0) return [];
      // On the vector documents, with the post filter as it is: the judged queries filter on
      // nothing but `servable`, which they hold exactly (a post counter they hold coarse: the
      // service's vectorFilter, src/engine/elasticsearch/queries/vector-filter.ts).
      const r = await es.search({
        index: postVectorsOf(index),
        ...nearestPostsQuery({
          vector,
          k: FUSION_WINDOW,
          candidates: KNN_CANDIDATES,
          filter: postSearchFilter(search),
        }),
        size: FUSION_WINDOW,
        _source: false,
      });
      return r.hits.hits.map((h) => ({ _id: h._id!, _score: h._score ?? 0 }));
    },
  };
}

/** A query text (its first 2,000 characters) as the service parses a first page of K. */
export function parsed(text: string): PostSearch & { query: string } {
  const request = parsePostSearchRequest({ post: { query: text.slice(0, 2000) }, limit: K });
  if (request.kind !== 'initial') throw new Error('an initial request');
  return { ...request.search, query: request.search.query! };
}

/** A judged query of either set, with the posts index it is asked on. */
export interface JudgedQuery {
  set: 'social' | 'scifact';
  id: string;
  /** Social: the query kind; SciFact: `scifact`. */
  kind: string;
  text: string;
  index: string;
  /** nDCG@10 of a ranking of post IDs. */
  ndcg(ids: readonly string[]): number;
  judged(id: string): boolean;
}

/**
 * The social set's judged queries (nonsense ones left out) on the posts of SOCIAL_PREFIX (default
 * the one bench/relevance/social.ts loads for seed 5 and 1,500 posts), dataset `size`.
 */
export async function socialQueries(
  es: Client,
  size = { posts: 1500, accounts: 150, seed: 5 },
): Promise<JudgedQuery[]> {
  const index = `${process.env['SOCIAL_PREFIX'] ?? 'relevance-social-5-1500'}-posts`;
  const observations = [...generateObservations(size)];
  const servable = await es.search({ index, query: { term: { servable: true } }, size: 10_000, _source: false });
  const queries = socialQuerySet(observations, new Set(servable.hits.hits.map((h) => h._id!)), seedPostLabels(size));
  return queries
    .filter((q) => q.kind !== 'nonsense' && q.judgments.size > 0)
    .map((q) => ({
      set: 'social',
      id: q.id,
      kind: q.kind,
      text: q.text,
      index,
      ndcg: (ids) => ndcgAtK(rankScores(ids), q.judgments, { k: K }),
      judged: (id) => q.judgments.has(id),
    }));
}

/**
 * SciFact's judged test claims on SCIFACT_INDEX (default the index bench/relevance/harness.ts
 * loads). SCIFACT_AS_QUESTIONS=1: each claim asked as a question ("is it true that … ?"), to see
 * what the question handling does to questions whose every other word is the topic.
 */
export async function scifactQueries(): Promise<JudgedQuery[]> {
  const dir = scifactDir();
  const collection = path.basename(dir);
  const index = process.env['SCIFACT_INDEX'] ?? `relevance-harness-${collection.toLowerCase()}-posts`;
  const qrels = await loadQrels(dir, 'test');
  const docOf = new Map((await loadCorpus(dir)).map((d) => [postServiceId(collection, d.id), d.id]));
  const out: JudgedQuery[] = [];
  for (const [id, claim] of await loadQueries(dir)) {
    const judgments = qrels.get(id);
    if (!judgments) continue;
    out.push({
      set: 'scifact',
      id,
      kind: 'scifact',
      text: process.env['SCIFACT_AS_QUESTIONS'] === '1' ? `is it true that ${claim.replace(/\.\s*$/, '')}?` : claim,
      index,
      ndcg: (ids) => ndcgAtK(rankScores(ids.map((i) => docOf.get(i)!)), judgments, { k: K, queryId: id }),
      judged: () => true,
    });
  }
  return out;
}
