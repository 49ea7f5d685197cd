import type { Client, estypes } from '@elastic/elasticsearch';
import { isBareWord, queryEntities } from '../../../query/entities.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import type { PostSearch } from '../../../query/search-codec.ts';
import type { PostRanking, SimilarRanking } from '../../search.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { FUSION_WINDOW, KNN_CANDIDATES } from './fused-settings.ts';
import { readAsSearched } from './fused-search.ts';
import type { FusedSettings } from './fused-settings.ts';
import { dequantizeVector, quantizeVector } from '../vectors.ts';
import { hybridWindows } from '../queries/hybrid-windows.ts';
import { nearestPosts, onPosts, similarPostsWindow, type PostVectorLayout } from './nearest-posts.ts';
import { postSearchFilter, postSearchProbes, postSearchQuery } from '../queries/post-query.ts';
import { correctedPostQuery, planLexicalSide, probedInformation, probing, termProbes } from '../queries/query-terms.ts';
import { similarWindow } from './similar-search.ts';
import { usesVectorFeedback, vectorFromFeedback } from './vector-feedback.ts';
import { relatedPosts } from './related-posts.ts';
import { CLASSIFIED_FIELDS } from '../queries/related-query.ts';
import { createVolatileBounds } from '../queries/volatile-bounds.ts';

type Query = estypes.QueryDslQueryContainer;

/** A query of exactly a search's results, built on the snapshot it runs on (its kNN windows are searched there). */
export type ResultsQuery = (pit: string) => Promise<Query>;

/** The filter and exactly the window a `similar_to` search shows (same kNN, same quantized vector). */
export async function similarOnly(
  client: Client,
  options: { pit: string; keepAliveSeconds: number; field: string; filter: Query[]; ranking: SimilarRanking },
): Promise<Query> {
  const hits = await similarWindow(client, {
    pit: options.pit,
    keepAlive: `${options.keepAliveSeconds}s`,
    field: options.field,
    filter: options.filter,
    vector: quantizeVector(options.ranking.vector),
    exclude: options.ranking.exclude,
  });
  return { bool: { filter: [...options.filter, { ids: { values: hits.map((h) => h._id!) } }] } };
}

/** What the results of post searches need: the fused searches' settings, which they count as searched. */
export interface PostResultsDeps extends FusedSettings {
  client: Client;
  /** The posts and their vector documents: results are built on a snapshot of both. */
  layout: PostVectorLayout;
  accountsIndex: string;
}

/**
 * The posts a post search returns across all its pages, as one query: what facets and counts
 * count. Lexical ranking (or no query): every match of the search's query. Similar: the window of
 * the reference's neighbours. Hybrid: every BM25 match plus the semantic window the first page
 * fuses (the same kNN with the same quantized vector, the same relevance floor and vector
 * feedback, on the same snapshot); semantic: that window alone. Author bounds over facts posts
 * keep coarse are read exactly first (volatile-bounds.ts), as the search reads them.
 */
export function createPostResults(deps: PostResultsDeps) {
  const { client } = deps;
  const bounds = createVolatileBounds({ client, accountsIndex: deps.accountsIndex });

  /** The semantic window of a fused ranking, and the BM25 matches beside it (hybrid). */
  async function fused(
    search: PostSearch & { query: string },
    ranking: Extract<PostRanking, { kind: 'fused' }>,
    keepAliveSeconds: number,
  ): Promise<ResultsQuery> {
    const filter = postSearchFilter(search);
    const query = search.query;
    // The search's lexical side (query-terms.ts): its words corrected and weighed as the search's.
    const plan =
      deps.queryTerms === true && ranking.mode === 'hybrid' && (queryEntities(query).length === 0 || isBareWord(query))
        ? await planLexicalSide(client, deps.layout.posts, query, analyzeQuery(query).language)
        : null;
    // Ranked as the search ranks it: a question's words at their weights (question-weights.ts).
    const termWeights = (await ranking.termWeights) ?? null;
    const planned = { ...search, query: plan?.text ?? query };
    const lexical = postSearchQuery(planned, { termWeights });
    const probes = postSearchProbes(planned, plan && probing(plan) ? termProbes(plan.terms) : []);
    // Read as the search read it: the corrected text's vector when its words were corrected.
    const read = readAsSearched(ranking, Promise.resolve(plan ?? { corrected: false, text: query }));
    const vector = read.vector.then((v) => dequantizeVector(quantizeVector(v)));
    vector.catch(() => undefined);
    read.sentence.catch(() => undefined);
    const analysis = analyzeQuery(query);
    // As the search: a query the model cannot read counts the posts related to its strong word matches.
    const related = plan !== null && !analysis.semanticReadable;
    /** The search's lexical window (and the hit past it), as its fusion reads it. */
    const lexicalWindow = (pit: string, keepAlive: string) =>
      client.search({
        ...COMPLETE_RESULTS,
        pit: { id: pit, keep_alive: keepAlive },
        query: onPosts(deps.layout, lexical),
        ...(probes ? { post_filter: probes } : {}),
        sort: [{ _score: { order: 'desc' } }, { id: 'asc' }],
        size: FUSION_WINDOW + 1,
        _source: false,
        ...(related || probes ? { docvalue_fields: CLASSIFIED_FIELDS } : {}),
        track_total_hits: false,
      });
    return async (pit: string): Promise<Query> => {
      const keepAlive = `${keepAliveSeconds}s`;
      if (related) {
        const windows = hybridWindows({
          mode: ranking.mode,
          window: FUSION_WINDOW,
          similarityFloor: deps.similarityFloor,
          semanticReadable: false,
          information: probedInformation(plan),
          related,
        });
        const evidence = windows.evidence((await lexicalWindow(pit, keepAlive)).hits.hits);
        const shown = await relatedPosts(client, {
          layout: deps.layout,
          pit,
          keepAlive,
          filter: search.filter,
          evidence,
          language: analysis.language,
          size: FUSION_WINDOW,
          neighbourFloor: deps.relatedFloor ?? null,
        });
        const window: Query = { bool: { filter: [...filter, { ids: { values: shown.map((h) => h._id!) } }] } };
        return onPosts(deps.layout, { bool: { should: [lexical, window], minimum_should_match: 1 } });
      }
      const queryVector = await vector;
      // A query the model cannot read (an empty vector) has no neighbours, as in the search.
      if (queryVector.length === 0)
        return ranking.mode === 'semantic' ? { match_none: {} } : onPosts(deps.layout, lexical);
      const neighbours = (v: number[]) =>
        nearestPosts(client, {
          layout: deps.layout,
          pit,
          keepAlive,
          vector: v,
          filter: search.filter,
          k: FUSION_WINDOW,
          candidates: KNN_CANDIDATES,
        });
      const semanticReadable = analysis.semanticReadable;
      const windows = hybridWindows({
        mode: ranking.mode,
        window: FUSION_WINDOW,
        similarityFloor: deps.similarityFloor,
        ...(deps.unmatchedFloor !== undefined && { unmatchedFloor: deps.unmatchedFloor }),
        ...(deps.sentenceFloor !== undefined && { sentenceFloor: deps.sentenceFloor }),
        sentence: await read.sentence,
        unmatched: plan?.unmatched === true,
        semanticReadable,
        information: plan ? probedInformation(plan) : null,
      });
      let knn = await neighbours(queryVector);
      // The search's vector feedback (vector-feedback.ts), so that the window is the search's own.
      if (usesVectorFeedback(query, ranking.mode, semanticReadable, deps.vectorFeedback)) {
        const fusedWindow = windows.fuse((await lexicalWindow(pit, keepAlive)).hits.hits, knn);
        const moved = await vectorFromFeedback({
          client,
          pit,
          keepAlive,
          postsOnly: deps.layout.postsOnly,
          query: queryVector,
          fused: fusedWindow,
        });
        if (moved) knn = await neighbours(dequantizeVector(quantizeVector(moved)));
      }
      // Exactly the neighbours the search shows: above the relevance floor, and none when the
      // model cannot read the query's language (hybrid-windows.ts).
      const shown = windows.shownNeighbours(knn);
      const window: Query = { bool: { filter: [...filter, { ids: { values: shown } }] } };
      const results: Query =
        ranking.mode === 'semantic' ? window : { bool: { should: [lexical, window], minimum_should_match: 1 } };
      return onPosts(deps.layout, results);
    };
  }

  return {
    bounds,
    /** The query of `asked`'s results under `ranking`, to build on the snapshot the count runs on. */
    async resultsOf(asked: PostSearch, ranking: PostRanking, keepAliveSeconds: number): Promise<ResultsQuery> {
      const search = { ...asked, filter: await bounds.resolve(asked.filter) };
      if (ranking.kind === 'similar') {
        const filter = postSearchFilter(search);
        return async (pit) => {
          const hits = await similarPostsWindow(client, {
            layout: deps.layout,
            pit,
            keepAlive: `${keepAliveSeconds}s`,
            filter: search.filter,
            vector: quantizeVector(ranking.vector),
            exclude: ranking.exclude,
          });
          return onPosts(deps.layout, { bool: { filter: [...filter, { ids: { values: hits.map((h) => h._id!) } }] } });
        };
      }
      if (ranking.kind === 'lexical' || search.query === null) {
        // The words the search searched: corrected as its first page corrects them.
        const corrected =
          search.query !== null && deps.queryTerms === true
            ? await correctedPostQuery(client, deps.layout.posts, search.query)
            : null;
        const query = onPosts(
          deps.layout,
          postSearchQuery(corrected === null ? search : { ...search, query: corrected }),
        );
        return async () => query;
      }
      return fused({ ...search, query: search.query }, ranking, keepAliveSeconds);
    },
  };
}

/** Exactly a post search's results, as {@link createPostResults} builds them. */
export type PostResults = ReturnType<typeof createPostResults>;
