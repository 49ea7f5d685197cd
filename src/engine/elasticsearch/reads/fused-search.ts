import type { estypes } from '@elastic/elasticsearch';
import type { PostRecord } from '../../../domain/records.ts';
import type { FusedRanking, FusedState, Retrieval, SearchPage } from '../../search.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { postSnapshotIndices } from './nearest-posts.ts';
import { firstPage, nextPage } from './paged-search.ts';
import { SEARCH_SOURCE } from '../queries/post-query.ts';
import type { LexicalPlan } from '../queries/query-terms.ts';
import { FUSION_WINDOW } from './fused-settings.ts';
import {
  fusedContext,
  LEXICAL_SORT,
  lexicalWindow,
  neighbourSide,
  postRecords,
  relatedSide,
  windowsOf,
  type FusedContext,
  type FusedDeps,
  type Hit,
} from './fused-sides.ts';

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
export async function fusedPostSearch(deps: FusedDeps): Promise<SearchPage<PostRecord, FusedState>> {
  const { client, page, layout } = deps;
  const ctx = fusedContext(deps, readAsSearched);
  const snapshotIndices = postSnapshotIndices(layout);
  const run = (pit: string) => fusedWindow(ctx, pit);
  const {
    pit,
    shared,
    response: result,
  } = page.state === null
    ? await firstPage(deps, snapshotIndices, page.keepAliveSeconds, run)
    : await nextPage(deps.snapshots, snapshotIndices, page.state, page.keepAliveSeconds, run);

  const fromWindow = result.ids.slice(0, page.limit);
  const fromTail = result.tail.slice(0, page.limit - fromWindow.length);
  const records = [...fromWindow.map((id) => result.records.get(id)), ...fromTail.map((h) => h._source?.record)].filter(
    (r): r is PostRecord => r !== undefined,
  );
  const hasMore = result.ids.length + result.tail.length > page.limit;
  if (!hasMore && !shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
  const plan = await ctx.plan;
  const next = hasMore ? await nextState(ctx, { pit, shared, q: result.q, plan, fromWindow, fromTail }) : null;
  return {
    records,
    hasMore,
    state: next,
    retrievedBy: retrievals(records, result.sides),
    ...(plan.corrected ? { correctedQuery: plan.text } : {}),
  };
}

/**
 * One page's retrievals on a snapshot: BM25's window and the semantic side (the neighbours, or the
 * related posts), fused; past the window, BM25's matches in its order; the records to show.
 */
async function fusedWindow(ctx: FusedContext, pit: string) {
  const { client, page, layout } = ctx.deps;
  const { state } = ctx;
  const inWindow = state.offset !== null;
  // BM25 starts at once; the kNN side as soon as the query vector is there (on a first page
  // the model is still working), so the slower of the two sets the latency, not their sum.
  // Past the window too when the related posts are asked again: the tail leaves out those shown.
  const lexical =
    state.mode === 'hybrid' && (inWindow || ctx.related) ? lexicalWindow(ctx, pit) : Promise.resolve(null);
  const semantic = ctx.related
    ? relatedSide(ctx, pit, lexical)
    : ctx.quantized.then((q) => neighbourSide(ctx, pit, q, lexical));
  const [lexicalResponse, semanticResponse] = await Promise.all([lexical, semantic]);
  const semanticHits = semanticResponse.hits;
  const lexicalHits = lexicalResponse?.hits.hits ?? [];
  const want = page.limit + 1;

  // From the fused window.
  let ids: string[] = [];
  let fusedLength = 0;
  if (state.offset !== null) {
    const fused = (await windowsOf(ctx)).fuse(lexicalHits, semanticHits);
    fusedLength = fused.length;
    ids = fused.slice(state.offset, state.offset + want).map((f) => f.id);
  }
  // Past it, in BM25 order (hybrid only, and only when BM25's window was full).
  const tailStart =
    state.offset !== null
      ? lexicalHits.length > FUSION_WINDOW
        ? lexicalHits[FUSION_WINDOW - 1]!.sort
        : null
      : state.after;
  const tail =
    state.mode === 'hybrid' && ids.length < want && tailStart
      ? await lexicalTail(ctx, pit, { after: tailStart, size: want - ids.length, semanticHits })
      : [];
  const read = await semanticResponse.records;
  const records = await postRecords(
    client,
    { pit, keepAlive: ctx.keepAlive, layout },
    ids.slice(0, page.limit).filter((id) => !read.has(id)),
  );
  for (const [id, record] of read) records.set(id, record);
  // The semantic side retrieved only the neighbours it may show (above the similarity floor).
  const sides = {
    lexical: new Set(lexicalHits.map((h) => h._id!)),
    semantic: new Set((await windowsOf(ctx)).shownNeighbours(semanticHits)),
  };
  return { ids, tail, fusedLength, records, sides, q: semanticResponse.q };
}

/** BM25's matches past its window, in its order, minus the neighbours the window showed (those under the floor were not shown). */
async function lexicalTail(
  ctx: FusedContext,
  pit: string,
  from: { after: estypes.SortResults; size: number; semanticHits: estypes.SearchHit[] },
): Promise<Hit[]> {
  const response = await ctx.deps.client.search<{ record: PostRecord }>({
    ...COMPLETE_RESULTS,
    pit: { id: pit, keep_alive: ctx.keepAlive },
    query: {
      bool: {
        must: [(await ctx.lexical).query],
        filter: [ctx.deps.layout.postsOnly],
        must_not: [{ ids: { values: (await windowsOf(ctx)).shownNeighbours(from.semanticHits) } }],
      },
    },
    sort: LEXICAL_SORT,
    search_after: from.after,
    size: from.size,
    _source: SEARCH_SOURCE,
    track_total_hits: false,
  });
  return response.hits.hits;
}

/** The cursor of the next page: every page searches the same words with the same weights and vector. */
async function nextState(
  ctx: FusedContext,
  at: { pit: string; shared: boolean; q: string; plan: LexicalPlan; fromWindow: string[]; fromTail: Hit[] },
): Promise<FusedState> {
  const { text, information, corrected, unmatched } = at.plan;
  const termWeights = await ctx.weights;
  const terms = {
    ...(corrected ? { corrected: text } : {}),
    ...(information ? { information } : {}),
    ...(unmatched === true ? { unmatched } : {}),
  };
  const common = {
    kind: 'fused',
    snapshot: at.pit,
    shared: at.shared,
    mode: ctx.state.mode,
    vector: at.q,
    ...(termWeights ? { weights: [...termWeights] } : {}),
    ...((await ctx.sentence) ? { sentence: true as const } : {}),
    ...(Object.keys(terms).length > 0 ? { terms } : {}),
  } as const;
  return at.fromTail.length > 0
    ? { ...common, offset: null, after: at.fromTail.at(-1)!.sort! }
    : { ...common, offset: (ctx.state.offset ?? 0) + at.fromWindow.length, after: null };
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
