import type { Client, estypes } from '@elastic/elasticsearch';
import type { PostRecord } from '../../../domain/records.ts';
import type { PostSearch } from '../../../query/search-codec.ts';
import { isBareWord, queryEntities } from '../../../query/entities.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import { hybridWindows } from '../queries/hybrid-windows.ts';
import type { FusedRanking, FusedState, Retrieval, SearchPage } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { dequantizeVector, quantizeVector } from '../vectors.ts';
import { nearestPosts, onPosts, postSnapshotIndices, type PostVectorLayout } from './nearest-posts.ts';
import { relatedPosts } from './related-posts.ts';
import { CLASSIFIED_FIELDS } from '../queries/related-query.ts';
import {
  PREFETCHED_NEIGHBOURS,
  readFeedbackVectors,
  usesVectorFeedback,
  vectorFromFeedback,
} from './vector-feedback.ts';
import { firstPage, nextPage } from './paged-search.ts';
import { postSearchProbes, postSearchQuery, SEARCH_SOURCE } from '../queries/post-query.ts';
import {
  carriedPlan,
  planLexicalSide,
  probedInformation,
  probing,
  termProbes,
  type LexicalPlan,
} from '../queries/query-terms.ts';
import type { FusedSettings } from './fused-settings.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

/**
 * How many hits each retriever contributes to the fused ranking: 2.5 default pages. A wider window
 * costs BM25 its top-k pruning (at 1M posts, 100 instead of 50 adds ~10 ms to every hybrid
 * search) for no measurable quality (SciFact nDCG@10 0.7192 at 100, 0.7173 at 50;
 * bench/relevance.md, "Fusion: why min–max convex combination at equal weights"). Results past it
 * continue in BM25 order.
 */
export const FUSION_WINDOW = 50;
/** HNSW candidates per shard: twice the window, for recall with the int8 index. */
export const KNN_CANDIDATES = 100;

type Hit = estypes.SearchHit<{ record: PostRecord }>;

/**
 * Post search ranked with the query's embedding: `semantic` orders the vector neighbours alone;
 * `hybrid` fuses them with BM25 (see fuseConvex). Both retrievals run concurrently on the
 * page's point in time under the same filters (the kNN `filter` applies during the graph search,
 * so filters never drop relevant results). Pages re-run the retrievals on that snapshot with the
 * cursor's quantized vector, which makes the fused order identical on every page.
 *
 * Hybrid results past the fused window continue in BM25 order (the lexical matches beyond
 * BM25's own window, minus those the window already showed), so a query still pages through
 * every lexical match; semantic results end with the window.
 */
export async function fusedPostSearch(
  deps: FusedSettings & {
    client: Client;
    snapshots: SnapshotPool;
    /** The posts and their vector documents: pages run on a snapshot of both. */
    layout: PostVectorLayout;
    visibility: VisibilityEpoch;
    search: PostSearch & { query: string };
    /** A first page ranked with the query's embedding, or the next page of such a search. */
    page: { limit: number; keepAliveSeconds: number } & (
      { state: null; ranking: FusedRanking } | { state: FusedState }
    );
  },
): Promise<SearchPage<PostRecord, FusedState>> {
  const { client, page, search, layout } = deps;
  const keepAlive = `${page.keepAliveSeconds}s`;
  const snapshotIndices = postSnapshotIndices(layout);
  const lexicalSort: estypes.SortCombinations[] = [{ _score: { order: 'desc' } }, { id: 'asc' }];

  let state: Pick<FusedState, 'mode' | 'offset' | 'after'>;
  let quantized: Promise<string>;
  let weights: Promise<readonly number[] | null>;
  let sentence: Promise<boolean>;
  let plan: Promise<LexicalPlan>;
  const analysis = analyzeQuery(search.query);
  const semanticReadable = analysis.semanticReadable;
  // The query's words as the index knows them (query-terms.ts): their information for the fusion,
  // and corrections of words no post carries. Not for exact entities, which rank as they always
  // did; a bare word (also looked up as a tag) is corrected when no post carries it.
  const mode = page.state === null ? page.ranking.mode : page.state.mode;
  const weighsTerms =
    deps.queryTerms === true &&
    mode === 'hybrid' &&
    (queryEntities(search.query).length === 0 || isBareWord(search.query));
  // A query the model cannot read: its strong word matches' related posts stand in for the
  // neighbours (src/query/related-evidence.ts), on every page, from the same lexical window.
  const related = weighsTerms && !semanticReadable;
  if (page.state === null) {
    state = { mode: page.ranking.mode, offset: 0, after: null };
    weights = page.ranking.termWeights ?? Promise.resolve(null);
    // BM25 waits for the index's statistics of the query's words (one small request, while the
    // model embeds the query); a word no post carries costs the suggester's request too.
    plan = weighsTerms
      ? planLexicalSide(client, layout.posts, search.query, analysis.language)
      : Promise.resolve({ text: search.query, terms: null, information: null, corrected: false });
    const read = readAsSearched(page.ranking, plan);
    quantized = read.vector.then(quantizeVector);
    sentence = read.sentence;
  } else {
    state = page.state;
    quantized = Promise.resolve(page.state.vector);
    weights = Promise.resolve(page.state.weights ?? null);
    sentence = Promise.resolve(page.state.sentence === true);
    plan = Promise.resolve(
      weighsTerms
        ? carriedPlan(search.query, page.state.terms ?? {})
        : { text: search.query, terms: null, information: null, corrected: false },
    );
  }
  // A question's BM25 also waits for its word weights (the model's, question-weights.ts).
  const lexicalSearch = Promise.all([plan, weights]).then(([p, w]) => {
    const planned = { ...search, query: p.text };
    return {
      query: postSearchQuery(planned, { termWeights: w }),
      probes: postSearchProbes(planned, probing(p) ? termProbes(p.terms) : []),
    };
  });
  const lexicalQuery = lexicalSearch.then((l) => l.query);
  // Unhandled until awaited below; a lexical failure must not leave them dangling.
  quantized.catch(() => undefined);
  sentence.catch(() => undefined);
  lexicalSearch.catch(() => undefined);
  lexicalQuery.catch(() => undefined);

  const knn = (pit: string, vector: number[]) =>
    nearestPosts(client, {
      layout,
      pit,
      keepAlive,
      vector,
      filter: search.filter,
      k: FUSION_WINDOW,
      candidates: KNN_CANDIDATES,
    });
  const lexical = async (pit: string) => {
    const { probes } = await lexicalSearch;
    return {
      ...COMPLETE_RESULTS,
      pit: { id: pit, keep_alive: keepAlive },
      query: onPosts(layout, await lexicalQuery),
      ...(probes ? { post_filter: probes } : {}),
      sort: lexicalSort,
      // One past the window: its score is the lexical normalization's floor (fuseHybrid).
      size: FUSION_WINDOW + 1,
      _source: false,
      // The hits' classifications: what the related posts relate to, and how specific each probed word is.
      ...(related || probes ? { docvalue_fields: CLASSIFIED_FIELDS } : {}),
      ...(related && probes ? { include_named_queries_score: true } : {}),
      track_total_hits: false,
    };
  };
  // The fusion of the plan's words: their information, and the floor of a query no post has a word of
  // (and of a vector read as a sentence).
  const windowsOf = (p: LexicalPlan, asSentence: boolean) =>
    hybridWindows({
      mode: state.mode,
      window: FUSION_WINDOW,
      similarityFloor: deps.similarityFloor,
      ...(deps.unmatchedFloor !== undefined && { unmatchedFloor: deps.unmatchedFloor }),
      ...(deps.sentenceFloor !== undefined && { sentenceFloor: deps.sentenceFloor }),
      sentence: asSentence,
      unmatched: p.unmatched === true,
      semanticReadable,
      information: probedInformation(p),
      related,
    });
  // A first page moves the query vector toward its first fused results (vector-feedback.ts); the
  // cursor carries the moved vector, so later pages re-run exactly the final kNN.
  const feedback =
    page.state === null && usesVectorFeedback(search.query, state.mode, semanticReadable, deps.vectorFeedback);

  const run = async (pit: string) => {
    const inWindow = state.offset !== null;
    // BM25 starts at once; the kNN side as soon as the query vector is there (on a first page
    // the model is still working), so the slower of the two sets the latency, not their sum.
    // Past the window too when the related posts are asked again: the tail leaves out those shown.
    const lexicalSearch =
      state.mode === 'hybrid' && (inWindow || related)
        ? lexical(pit).then((body) => client.search<{ record: PostRecord }>(body))
        : Promise.resolve(null);
    const none = Promise.resolve(new Map<string, PostRecord>());
    // A query the model cannot read has an empty vector: no neighbours at all (src/embedding).
    const neighbours = async (q: string) => {
      const vector = dequantizeVector(q);
      if (vector.length === 0) {
        const hits: Hit[] = [];
        return { hits, q, records: none };
      }
      const first = await knn(pit, vector);
      if (!feedback) return { hits: first, q, records: none };
      // The first fusion's best results move the vector; the window is asked again with it. Their
      // vectors are mostly among the first neighbours', read while BM25 still runs.
      const postsOnly = layout.postsOnly;
      const ids = first.slice(0, PREFETCHED_NEIGHBOURS).map((h) => h._id!);
      const prefetched = readFeedbackVectors({ client, pit, keepAlive, postsOnly, ids });
      prefetched.catch(() => undefined);
      const lexicalHits = (await lexicalSearch)?.hits.hits ?? [];
      const fused = windowsOf(await plan, await sentence).fuse(lexicalHits, first);
      // Beside the final kNN, the records of the first fusion's page, which the final one mostly shows.
      const records = postRecords(
        client,
        { pit, keepAlive, layout },
        fused.slice(0, page.limit).map((f) => f.id),
      );
      records.catch(() => undefined);
      const moved = await vectorFromFeedback({ client, pit, keepAlive, postsOnly, query: vector, fused, prefetched });
      if (!moved) return { hits: first, q, records };
      // Quantized as the cursor will carry it, so every page asks the same vector bit for bit.
      const movedQ = quantizeVector(moved);
      return { hits: await knn(pit, dequantizeVector(movedQ)), q: movedQ, records };
    };
    // Or the posts related to the strong word matches of a query the model cannot read.
    const relatedSide = async () => {
      const evidence = windowsOf(await plan, await sentence).evidence((await lexicalSearch)?.hits.hits ?? []);
      const window = {
        layout,
        pit,
        keepAlive,
        filter: search.filter,
        language: analysis.language,
        size: FUSION_WINDOW,
        neighbourFloor: deps.relatedFloor ?? null,
      };
      return { hits: await relatedPosts(client, { ...window, evidence }), q: await quantized, records: none };
    };
    const semanticSearch = related ? relatedSide() : quantized.then(neighbours);
    const [lexicalResponse, semanticResponse] = await Promise.all([lexicalSearch, semanticSearch]);
    const semanticHits = semanticResponse.hits;
    const lexicalHits = lexicalResponse?.hits.hits ?? [];
    const want = page.limit + 1;

    // From the fused window.
    let ids: string[] = [];
    let fusedLength = 0;
    if (state.offset !== null) {
      const fused = windowsOf(await plan, await sentence).fuse(lexicalHits, semanticHits);
      fusedLength = fused.length;
      ids = fused.slice(state.offset, state.offset + want).map((f) => f.id);
    }
    // Past it, in BM25 order (hybrid only, and only when BM25's window was full).
    let tail: Hit[] = [];
    const tailStart =
      state.offset !== null
        ? lexicalHits.length > FUSION_WINDOW
          ? lexicalHits[FUSION_WINDOW - 1]!.sort
          : null
        : state.after;
    if (state.mode === 'hybrid' && ids.length < want && tailStart) {
      const tailResponse = await client.search<{ record: PostRecord }>({
        ...COMPLETE_RESULTS,
        pit: { id: pit, keep_alive: keepAlive },
        // Minus the neighbours the window showed (those under the floor were not shown).
        query: {
          bool: {
            must: [await lexicalQuery],
            filter: [layout.postsOnly],
            must_not: [{ ids: { values: windowsOf(await plan, await sentence).shownNeighbours(semanticHits) } }],
          },
        },
        sort: lexicalSort,
        search_after: tailStart,
        size: want - ids.length,
        _source: SEARCH_SOURCE,
        track_total_hits: false,
      });
      tail = tailResponse.hits.hits;
    }
    const read = await semanticResponse.records;
    const records = await postRecords(
      client,
      { pit, keepAlive, layout },
      ids.slice(0, page.limit).filter((id) => !read.has(id)),
    );
    for (const [id, record] of read) records.set(id, record);
    // The semantic side retrieved only the neighbours it may show (above the similarity floor).
    const sides = {
      lexical: new Set(lexicalHits.map((h) => h._id!)),
      semantic: new Set(windowsOf(await plan, await sentence).shownNeighbours(semanticHits)),
    };
    return { ids, tail, fusedLength, records, sides, q: semanticResponse.q };
  };

  let pit: string;
  let shared: boolean;
  let result: Awaited<ReturnType<typeof run>>;
  if (page.state === null) {
    ({ pit, shared, response: result } = await firstPage(deps, snapshotIndices, page.keepAliveSeconds, run));
  } else {
    ({
      pit,
      shared,
      response: result,
    } = await nextPage(deps.snapshots, snapshotIndices, page.state, page.keepAliveSeconds, run));
  }

  const fromWindow = result.ids.slice(0, page.limit);
  const fromTail = result.tail.slice(0, page.limit - fromWindow.length);
  const records = [...fromWindow.map((id) => result.records.get(id)), ...fromTail.map((h) => h._source?.record)].filter(
    (r): r is PostRecord => r !== undefined,
  );
  const hasMore = result.ids.length + result.tail.length > page.limit;
  if (!hasMore && !shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
  const { text, information, corrected, unmatched } = await plan;
  let next: FusedState | null = null;
  if (hasMore) {
    const termWeights = await weights;
    // Every page searches the same words with the same weights.
    const terms = {
      ...(corrected ? { corrected: text } : {}),
      ...(information ? { information } : {}),
      ...(unmatched === true ? { unmatched } : {}),
    };
    const common = {
      kind: 'fused',
      snapshot: pit,
      shared,
      mode: state.mode,
      vector: result.q,
      ...(termWeights ? { weights: [...termWeights] } : {}),
      ...((await sentence) ? { sentence: true as const } : {}),
      ...(Object.keys(terms).length > 0 ? { terms } : {}),
    } as const;
    next =
      fromTail.length > 0
        ? { ...common, offset: null, after: fromTail.at(-1)!.sort! }
        : { ...common, offset: (state.offset ?? 0) + fromWindow.length, after: null };
  }
  return {
    records,
    hasMore,
    state: next,
    retrievedBy: retrievals(records, result.sides),
    ...(corrected ? { correctedQuery: text } : {}),
  };
}

/**
 * The query's vector as the lexical side searched it: when that side corrected misspelt words, the
 * model reads the corrected text (typed, two slips in a row read as another language: "sourdugh
 * startr" ranked Spanish cooking posts first), as any query, not a question read as a sentence.
 * Else the query's own vector; its kNN waits for the plan's lookup as BM25 does (the model mostly
 * takes longer).
 */
export function readAsSearched(
  ranking: FusedRanking,
  plan: Promise<Pick<LexicalPlan, 'text' | 'corrected'>>,
): { vector: Promise<ArrayLike<number>>; sentence: Promise<boolean> } {
  const typed = Promise.resolve(ranking.vector);
  const asTyped = ranking.sentence ?? Promise.resolve(false);
  const { embed } = ranking;
  if (!embed) return { vector: typed, sentence: asTyped };
  // Unused when the corrected text is read: its failure must not go unhandled (it would end the process).
  typed.catch(() => undefined);
  const corrected = plan.then((p) => (p.corrected ? p.text : null));
  return {
    vector: corrected.then((text) => (text === null ? typed : embed(text))),
    sentence: corrected.then((text) => (text === null ? asTyped : false)),
  };
}

/** Which side retrieved each record: the fusion inputs, or BM25 past the window. */
function retrievals(
  records: PostRecord[],
  sides: { lexical: Set<string>; semantic: Set<string> },
): Map<string, Retrieval> {
  return new Map(
    records.map((r) => {
      const semantic = sides.semantic.has(r.id);
      // Past the window, results come from BM25 alone.
      const lexical = sides.lexical.has(r.id) || !semantic;
      return [r.id, lexical && semantic ? 'both' : semantic ? 'semantic' : 'lexical'];
    }),
  );
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
