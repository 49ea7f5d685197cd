import type { Client, estypes } from '@elastic/elasticsearch';
import type { PostRecord } from '../../../domain/records.ts';
import type { PostSearch } from '../../../query/search-codec.ts';
import { isBareWord, queryEntities } from '../../../query/entities.ts';
import { analyzeQuery, type QueryAnalysis } from '../../../text/languages.ts';
import { hybridWindows } from '../queries/hybrid-windows.ts';
import type { FusedRanking, FusedState } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { dequantizeVector, quantizeVector } from '../vectors.ts';
import { nearestPosts, onPosts, type PostVectorLayout } from './nearest-posts.ts';
import { relatedPosts } from './related-posts.ts';
import { CLASSIFIED_FIELDS } from '../queries/related-query.ts';
import {
  PREFETCHED_NEIGHBOURS,
  readFeedbackVectors,
  usesVectorFeedback,
  vectorFromFeedback,
} from './vector-feedback.ts';
import { postSearchProbes, postSearchQuery, SEARCH_SOURCE } from '../queries/post-query.ts';
import {
  carriedPlan,
  planLexicalSide,
  probedInformation,
  probing,
  termProbes,
  type LexicalPlan,
} from '../queries/query-terms.ts';
import { FUSION_WINDOW, KNN_CANDIDATES, type FusedSettings } from './fused-settings.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

/** A hit of either side, its record in `_source` when asked. */
export type Hit = estypes.SearchHit<{ record: PostRecord }>;

/** What a post search ranked with the query's embedding needs (fused-search.ts). */
export type FusedDeps = FusedSettings & {
  client: Client;
  snapshots: SnapshotPool;
  /** The posts and their vector documents: pages run on a snapshot of both. */
  layout: PostVectorLayout;
  visibility: VisibilityEpoch;
  search: PostSearch & { query: string };
  /** A first page ranked with the query's embedding, or the next page of such a search. */
  page: { limit: number; keepAliveSeconds: number } & ({ state: null; ranking: FusedRanking } | { state: FusedState });
};

/**
 * One search's inputs to its retrievals, settled once per request: the query's vector, word
 * weights and lexical plan (promises on a first page, the cursor's values on later ones), and
 * what the query is (readable by the model, or answered by the related posts of its words).
 */
export interface FusedContext {
  deps: FusedDeps;
  keepAlive: string;
  state: Pick<FusedState, 'mode' | 'offset' | 'after'>;
  analysis: QueryAnalysis;
  /** A query the model cannot read: its strong word matches' related posts stand in for the neighbours. */
  related: boolean;
  /** A first page that moves the query vector toward its first fused results (vector-feedback.ts). */
  feedback: boolean;
  quantized: Promise<string>;
  weights: Promise<readonly number[] | null>;
  sentence: Promise<boolean>;
  plan: Promise<LexicalPlan>;
  /** BM25's query and its word probes, once the plan and the weights are in. */
  lexical: Promise<{ query: estypes.QueryDslQueryContainer; probes: estypes.QueryDslQueryContainer | undefined }>;
}

/** The fused search's context (see {@link FusedContext}); `read` embeds a first page's query as searched. */
export function fusedContext(
  deps: FusedDeps,
  read: (
    ranking: FusedRanking,
    plan: Promise<LexicalPlan>,
  ) => { vector: Promise<ArrayLike<number>>; sentence: Promise<boolean> },
): FusedContext {
  const { client, page, search, layout } = deps;
  const analysis = analyzeQuery(search.query);
  const mode = page.state === null ? page.ranking.mode : page.state.mode;
  // The query's words as the index knows them (query-terms.ts): their information for the fusion,
  // and corrections of words no post carries. Not for exact entities, which rank as they always
  // did; a bare word (also looked up as a tag) is corrected when no post carries it.
  const weighsTerms =
    deps.queryTerms === true &&
    mode === 'hybrid' &&
    (queryEntities(search.query).length === 0 || isBareWord(search.query));
  const unplanned = { text: search.query, terms: null, information: null, corrected: false };
  let inputs: Pick<FusedContext, 'state' | 'quantized' | 'weights' | 'sentence' | 'plan'>;
  if (page.state === null) {
    // BM25 waits for the index's statistics of the query's words (one small request, while the
    // model embeds the query); a word no post carries costs the suggester's request too.
    const plan = weighsTerms
      ? planLexicalSide(client, layout.posts, search.query, analysis.language)
      : Promise.resolve(unplanned);
    const asSearched = read(page.ranking, plan);
    inputs = {
      state: { mode: page.ranking.mode, offset: 0, after: null },
      weights: page.ranking.termWeights ?? Promise.resolve(null),
      plan,
      quantized: asSearched.vector.then(quantizeVector),
      sentence: asSearched.sentence,
    };
  } else {
    inputs = {
      state: page.state,
      quantized: Promise.resolve(page.state.vector),
      weights: Promise.resolve(page.state.weights ?? null),
      sentence: Promise.resolve(page.state.sentence === true),
      plan: Promise.resolve(weighsTerms ? carriedPlan(search.query, page.state.terms ?? {}) : unplanned),
    };
  }
  // A question's BM25 also waits for its word weights (the model's, question-weights.ts).
  const lexical = Promise.all([inputs.plan, inputs.weights]).then(([p, w]) => {
    const planned = { ...search, query: p.text };
    return {
      query: postSearchQuery(planned, { termWeights: w }),
      probes: postSearchProbes(planned, probing(p) ? termProbes(p.terms) : []),
    };
  });
  // Unhandled until awaited; a lexical failure must not leave them dangling.
  inputs.quantized.catch(() => undefined);
  inputs.sentence.catch(() => undefined);
  lexical.catch(() => undefined);
  return {
    deps,
    keepAlive: `${page.keepAliveSeconds}s`,
    analysis,
    related: weighsTerms && !analysis.semanticReadable,
    // The cursor carries the moved vector, so later pages re-run exactly the final kNN.
    feedback:
      page.state === null &&
      usesVectorFeedback(search.query, inputs.state.mode, analysis.semanticReadable, deps.vectorFeedback),
    lexical,
    ...inputs,
  };
}

/**
 * The fusion of the plan's words: their information, and the floor of a query no post has a word
 * of (and of a vector read as a sentence).
 */
export async function windowsOf(ctx: FusedContext): Promise<ReturnType<typeof hybridWindows>> {
  const [p, asSentence] = [await ctx.plan, await ctx.sentence];
  return hybridWindows({
    mode: ctx.state.mode,
    window: FUSION_WINDOW,
    similarityFloor: ctx.deps.similarityFloor,
    ...(ctx.deps.unmatchedFloor !== undefined && { unmatchedFloor: ctx.deps.unmatchedFloor }),
    ...(ctx.deps.sentenceFloor !== undefined && { sentenceFloor: ctx.deps.sentenceFloor }),
    sentence: asSentence,
    unmatched: p.unmatched === true,
    semanticReadable: ctx.analysis.semanticReadable,
    information: probedInformation(p),
    related: ctx.related,
  });
}

/** BM25's window on the snapshot: one hit past it, whose score is the lexical normalization's floor (fuseHybrid). */
export async function lexicalWindow(
  ctx: FusedContext,
  pit: string,
): Promise<estypes.SearchResponse<{ record: PostRecord }>> {
  const { query, probes } = await ctx.lexical;
  return ctx.deps.client.search<{ record: PostRecord }>({
    ...COMPLETE_RESULTS,
    pit: { id: pit, keep_alive: ctx.keepAlive },
    query: onPosts(ctx.deps.layout, query),
    ...(probes ? { post_filter: probes } : {}),
    sort: LEXICAL_SORT,
    size: FUSION_WINDOW + 1,
    _source: false,
    // The hits' classifications: what the related posts relate to, and how specific each probed word is.
    ...(ctx.related || probes ? { docvalue_fields: CLASSIFIED_FIELDS } : {}),
    ...(ctx.related && probes ? { include_named_queries_score: true } : {}),
    track_total_hits: false,
  });
}

/** BM25's order: score, then ID (the tail past the window pages on it). */
export const LEXICAL_SORT: estypes.SortCombinations[] = [{ _score: { order: 'desc' } }, { id: 'asc' }];

/** The semantic side's hits, the vector the cursor carries, and records it already read for the page. */
export interface SemanticSide {
  hits: estypes.SearchHit[];
  q: string;
  records: Promise<Map<string, PostRecord>>;
}

const NO_RECORDS = () => Promise.resolve(new Map<string, PostRecord>());

/**
 * The query's neighbours; on a first page with feedback, the window asked again with the vector
 * moved toward the first fusion's best results. A query the model cannot read has an empty
 * vector: no neighbours at all (src/embedding).
 */
export async function neighbourSide(
  ctx: FusedContext,
  pit: string,
  q: string,
  lexical: Promise<estypes.SearchResponse<{ record: PostRecord }> | null>,
): Promise<SemanticSide> {
  const { client, layout, search, page } = ctx.deps;
  const vector = dequantizeVector(q);
  if (vector.length === 0) return { hits: [], q, records: NO_RECORDS() };
  const knn = (v: number[]) =>
    nearestPosts(client, {
      layout,
      pit,
      keepAlive: ctx.keepAlive,
      vector: v,
      filter: search.filter,
      k: FUSION_WINDOW,
      candidates: KNN_CANDIDATES,
    });
  const first = await knn(vector);
  if (!ctx.feedback) return { hits: first, q, records: NO_RECORDS() };
  // Their vectors are mostly among the first neighbours', read while BM25 still runs.
  const on = { client, pit, keepAlive: ctx.keepAlive, postsOnly: layout.postsOnly };
  const ids = first.slice(0, PREFETCHED_NEIGHBOURS).map((h) => h._id!);
  const prefetched = readFeedbackVectors({ ...on, ids });
  prefetched.catch(() => undefined);
  const lexicalHits = (await lexical)?.hits.hits ?? [];
  const fused = (await windowsOf(ctx)).fuse(lexicalHits, first);
  // Beside the final kNN, the records of the first fusion's page, which the final one mostly shows.
  const records = postRecords(
    client,
    { pit, keepAlive: ctx.keepAlive, layout },
    fused.slice(0, page.limit).map((f) => f.id),
  );
  records.catch(() => undefined);
  const moved = await vectorFromFeedback({ ...on, query: vector, fused, prefetched });
  if (!moved) return { hits: first, q, records };
  // Quantized as the cursor will carry it, so every page asks the same vector bit for bit.
  const movedQ = quantizeVector(moved);
  return { hits: await knn(dequantizeVector(movedQ)), q: movedQ, records };
}

/** Or the posts related to the strong word matches of a query the model cannot read (related-posts.ts). */
export async function relatedSide(
  ctx: FusedContext,
  pit: string,
  lexical: Promise<estypes.SearchResponse<{ record: PostRecord }> | null>,
): Promise<SemanticSide> {
  const evidence = (await windowsOf(ctx)).evidence((await lexical)?.hits.hits ?? []);
  const window = {
    layout: ctx.deps.layout,
    pit,
    keepAlive: ctx.keepAlive,
    filter: ctx.deps.search.filter,
    language: ctx.analysis.language,
    size: FUSION_WINDOW,
    neighbourFloor: ctx.deps.relatedFloor ?? null,
  };
  return {
    hits: await relatedPosts(ctx.deps.client, { ...window, evidence }),
    q: await ctx.quantized,
    records: NO_RECORDS(),
  };
}

/** The records of window hits, read on the same snapshot of posts and their vectors. */
export async function postRecords(
  client: Client,
  on: { pit: string; keepAlive: string; layout: PostVectorLayout },
  ids: string[],
): Promise<Map<string, PostRecord>> {
  if (ids.length === 0) return new Map();
  const response = await client.search<{ record: PostRecord }>({
    ...COMPLETE_RESULTS,
    pit: { id: on.pit, keep_alive: on.keepAlive },
    query: onPosts(on.layout, { ids: { values: ids } }),
    size: ids.length,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
  return new Map(response.hits.hits.map((h) => [h._id!, h._source!.record]));
}
