import type { Client, estypes } from '@elastic/elasticsearch';
import type { AccountRecord } from '../../../domain/records.ts';
import { fuseHybrid } from '../../../query/fusion.ts';
import type { AccountSearch } from '../../../query/search-codec.ts';
import type { AccountFusedRanking, FusedState, SearchPage } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import {
  correctableWords,
  correctQuery,
  MAX_CORRECTED_WORDS,
  type AgreementQuestions,
} from '../../../text/correctable-words.ts';
import { holdsEnglishWord } from '../../../text/english-words.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import { isBareWord, queryEntities } from '../../../query/entities.ts';
import { SILENT_CORRECTION } from '../../spelling.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { accountSearchFilter, accountSearchQuery, accountSearchSort, EXACT_HANDLE } from '../queries/account-query.ts';
import { cosineOf } from '../queries/hybrid-windows.ts';
import {
  ACCOUNT_VOCABULARY,
  carriedCounts,
  carrierAggregation,
  carrierCounts,
  closestWords,
  wordCounts,
  POST_WORDS,
  type CountAggregations,
  type IndexedCorrection,
} from '../queries/spelling.ts';
import { nearestQuery } from '../queries/nearest-query.ts';
import { SEARCH_SOURCE } from '../queries/post-query.ts';
import { dequantizeVector, quantizeVector } from '../vectors.ts';
import { FUSION_WINDOW, KNN_CANDIDATES } from './fused-settings.ts';
import { firstPage, nextPage } from './paged-search.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

type Query = estypes.QueryDslQueryContainer;

/** An account search's text query matching `words`, scoring, with the filters computed on the page's snapshot. */
function scored(search: AccountSearch, words: string, refined: Query[]): Query {
  const query = accountSearchQuery(search, words);
  return refined.length > 0 ? { bool: { must: [query], filter: refined } } : query;
}

/** The distinct words of `query` a correction may touch (src/text/correctable-words.ts), in `language`. */
function correctableKeys(query: string, language: string): string[] {
  return [...new Set(correctableWords(query, language).map((w) => w.key))].slice(0, MAX_CORRECTED_WORDS);
}

/**
 * `query` with its words that no account a search can return carries (in a name or description, as
 * written or as another inflection) corrected to the accounts' closest word, as a post query's
 * lexical side corrects words no post carries (src/engine/spelling.ts, SILENT_CORRECTION: the
 * engine's closest word alone, carried by two accounts or more); null when nothing is corrected,
 * or when a lookup fails (the query is then searched as typed). A word servable posts carry (in
 * any inflection) is a word of the corpus, not a misspelling, and stays as typed: accounts state
 * far fewer words than posts ("rescue dog story" is no "store"). A query of exact entities is
 * searched as typed. `carried`: each word's accounts, when a search already counted them (a count
 * of zero is checked again); else one request counts them. Then, only for a word none carries, one
 * on `where.posts`, and two more on the accounts for a word no post carries either.
 */
export async function correctedAccountQuery(
  client: Client,
  where: { accounts: string; posts: string },
  query: string,
  carried?: ReadonlyMap<string, number>,
): Promise<string | null> {
  // Exact entities (a quote, @handle, #tag) are searched as typed; a bare word is corrected.
  if (queryEntities(query).length > 0 && !isBareWord(query)) return null;
  const { language } = analyzeQuery(query);
  const keys = correctableKeys(query, language);
  const closest = async (unknown: string[]) => {
    // Posts first: most words a query has that no account states are words of the corpus all the
    // same, in some inflection ("who posts about …"), and one count settles them without the
    // suggester's two requests.
    const inPosts = await carrierCounts(client, where.posts, unknown, POST_WORDS, language);
    const misspelt = unknown.filter((word) => (inPosts.get(word) ?? 0) === 0);
    if (misspelt.length === 0) return new Map<string, IndexedCorrection>();
    return closestWords(client, where.accounts, misspelt, SILENT_CORRECTION, language, ACCOUNT_VOCABULARY);
  };
  try {
    if (keys.length === 0) return null;
    const counts = carried ?? (await carrierCounts(client, where.accounts, keys, ACCOUNT_VOCABULARY, language));
    const unknown = new Set(keys.filter((key) => (counts.get(key) ?? 0) === 0));
    if (unknown.size === 0) return null;
    // Whether the rest of the query agrees with a correction, read from the posts: an account's
    // few words rarely hold two of a query's, a corpus's posts do.
    const agreement = (asked: AgreementQuestions) =>
      wordCounts(client, where.posts, asked, SILENT_CORRECTION, POST_WORDS, language);
    const engine = { closest, counts: agreement };
    return (await correctQuery(query, language, engine, (key) => unknown.has(key)))?.text ?? null;
  } catch {
    return null;
  }
}

/**
 * The query's vector as the lexical side searched it: when that side corrected its words, the
 * corrected text's (`ranking.embed`), else the query's own (posts: readAsSearched, fused-search.ts).
 */
export function accountVectorAsSearched(
  ranking: AccountFusedRanking,
  corrected: string | null,
): Promise<ArrayLike<number>> {
  const typed = Promise.resolve(ranking.vector);
  if (corrected === null || !ranking.embed) return typed;
  // Unused: its failure must not go unhandled (it would end the process).
  typed.catch(() => undefined);
  return ranking.embed(corrected);
}

/** Whether a hit's `matched_queries` (names, or names with scores) name `name`. */
function matched(queries: estypes.SearchHit['matched_queries'], name: string): boolean {
  return Array.isArray(queries) ? queries.includes(name) : queries !== undefined && name in queries;
}

/**
 * The accounts nearest the query vector by their own text's vector (`embedding`: who the account
 * is and what it publishes, src/text/embedding-text.ts) under every filter, at or above the
 * similarity floor, in order of similarity.
 */
export async function accountNeighbours(
  client: Client,
  options: { pit: string; keepAlive: string; filter: Query[]; vector: string; floor: number | null },
): Promise<Array<{ id: string; score: number }>> {
  const vector = dequantizeVector(options.vector);
  // A query the model cannot read has an empty vector, and no neighbours.
  if (vector.length === 0) return [];
  const response = await client.search({
    ...COMPLETE_RESULTS,
    pit: { id: options.pit, keep_alive: options.keepAlive },
    ...nearestQuery({
      field: 'embedding',
      vector,
      k: FUSION_WINDOW,
      candidates: KNN_CANDIDATES,
      filter: { bool: { filter: options.filter } },
    }),
    size: FUSION_WINDOW,
    _source: false,
    track_total_hits: false,
  });
  return response.hits.hits
    .map((h) => ({ id: h._id!, score: h._score ?? 0 }))
    .filter((h) => options.floor === null || cosineOf(h.score) >= options.floor);
}

/** Whether any document on the snapshot matches every one of `filter`. */
export async function anyAccount(client: Client, pit: string, filter: Query[]): Promise<boolean> {
  const response = await client.search({
    ...COMPLETE_RESULTS,
    pit: { id: pit },
    query: { bool: { filter } },
    size: 0,
    track_total_hits: 1,
  });
  const total = response.hits.total;
  return (typeof total === 'number' ? total : (total?.value ?? 0)) > 0;
}

/** The fused window of a first or a within-window page, and where BM25's own window ended. */
interface Window {
  ids: string[];
  /** The neighbours in it: never shown again past the window. */
  neighbours: string[];
  /** Sort values of BM25's last hit when its window was full (more matches follow it); else null. */
  lexicalEnd: estypes.SortResults | null;
}

/**
 * `account.query` ranked with the query's embedding: BM25's top {@link FUSION_WINDOW} and the
 * nearest accounts by their own text's vector (at or above the similarity floor), both under every
 * filter and the publishing scope, fused as posts are (min–max, equal weights: fusion.ts), or the
 * neighbours alone (`semantic`). Every page searches the same snapshot with the cursor's quantized
 * vector, so the fused order is the same on every page; past the window a hybrid search continues
 * with BM25's remaining matches (less the neighbours the window showed), so a query still pages
 * through every account that states one of its words. A hybrid first page corrects the query's
 * words no account carries on the lexical side (lexicalWindow) and searches the neighbours with the
 * corrected text's vector; every page searches what it searched (the cursor's `terms.corrected` and
 * vector).
 */
export async function fusedAccountSearch(deps: {
  client: Client;
  snapshots: SnapshotPool;
  visibility: VisibilityEpoch;
  index: string | string[];
  /** Where a first page's misspelt words are corrected (the accounts' and posts' read aliases); null: never corrected. */
  correctIn: { accounts: string; posts: string } | null;
  search: AccountSearch & { query: string };
  refine?: (pit: string) => Promise<Query[]>;
  similarityFloor: number | null;
  /** The floor when no account the search can return states a word of the query (posts: hybrid-windows.ts); absent: similarityFloor. */
  unmatchedFloor?: number | null;
  page: { limit: number; keepAliveSeconds: number } & (
    { state: null; ranking: AccountFusedRanking } | { state: FusedState }
  );
}): Promise<SearchPage<AccountRecord, FusedState>> {
  const { client, page, search } = deps;
  const keepAlive = `${page.keepAliveSeconds}s`;
  const mode = page.state === null ? page.ranking.mode : page.state.mode;
  // BM25 starts at once; the neighbours wait for the model's vector (a first page's promise).
  const quantized =
    page.state === null
      ? Promise.resolve(page.ranking.vector).then(quantizeVector)
      : Promise.resolve(page.state.vector);
  // Settled here too, so that a model failure surfaces from the page, not as an unhandled rejection.
  quantized.catch(() => undefined);
  const sort = accountSearchSort(search);
  // The words BM25 searches: as typed, or as a hybrid first page corrected them (lexicalWindow).
  let searched = page.state?.terms?.corrected ?? search.query;
  const correctIn = page.state === null && mode === 'hybrid' ? deps.correctIn : null;
  // The text the lexical side corrected the query to, or null, as soon as it knows (lexicalWindow).
  let settleCorrection: (text: string | null) => void = () => undefined;
  const correction = new Promise<string | null>((resolve) => (settleCorrection = resolve));
  // The vector the neighbours are searched with, on every page: the query's, or, when its words were
  // corrected, the corrected text's (posts: readAsSearched in fused-search.ts).
  const ranking = page.state === null ? page.ranking : null;
  const used =
    ranking?.embed && correctIn
      ? correction.then((text) =>
          text === null ? quantized : accountVectorAsSearched(ranking, text).then(quantizeVector),
        )
      : quantized;
  used.catch(() => undefined);
  // Never below the similarity floor (posts: hybrid-windows.ts, floorOf).
  const unmatchedFloor =
    deps.unmatchedFloor === undefined || deps.unmatchedFloor === null || deps.similarityFloor === null
      ? (deps.unmatchedFloor ?? deps.similarityFloor)
      : Math.max(deps.similarityFloor, deps.unmatchedFloor);

  /** BM25's hits in the search's order: its window (ids only), or records past `after`, `not` left out. */
  const lexical = (
    pit: string,
    words: string,
    refined: Query[],
    size: number,
    past?: { after: estypes.SortResults; not: string[] },
    aggs?: Record<string, estypes.AggregationsAggregationContainer>,
  ) => {
    const query = scored(search, words, refined);
    return client.search<{ record: AccountRecord }, CountAggregations>({
      ...COMPLETE_RESULTS,
      pit: { id: pit, keep_alive: keepAlive },
      query:
        past && past.not.length > 0 ? { bool: { must: [query], must_not: [{ ids: { values: past.not } }] } } : query,
      sort,
      size,
      _source: past ? SEARCH_SOURCE : false,
      track_total_hits: false,
      ...(past ? { search_after: past.after } : {}),
      ...(aggs && { aggs }),
    });
  };

  /**
   * BM25's window and the hit past it (the lexical side's floor: fusion.ts, fuseHybrid). A hybrid
   * first page searches the query as typed and counts, among its matches, the accounts carrying
   * each of its words; only when one has none is a correction looked up, and BM25 asked again with
   * it ({@link correctedAccountQuery}). So a query with no misspelling waits for nothing more.
   */
  async function lexicalWindow(pit: string, refined: Query[]) {
    const language = correctIn && analyzeQuery(search.query).language;
    const keys = language ? correctableKeys(search.query, language) : [];
    const count = language && keys.length > 0 ? carrierAggregation(keys, ACCOUNT_VOCABULARY, language) : null;
    // Nothing to correct: the neighbours need not wait for BM25.
    if (!count || !correctIn) settleCorrection(null);
    try {
      const typed = await lexical(pit, searched, refined, FUSION_WINDOW + 1, undefined, count?.aggs);
      if (!count || !correctIn) return typed.hits.hits;
      const carried = carriedCounts(keys, typed.aggregations);
      if (keys.every((key) => (carried.get(key) ?? 0) > 0)) return typed.hits.hits;
      const corrected = await correctedAccountQuery(client, correctIn, search.query, carried);
      if (corrected === null) return typed.hits.hits;
      searched = corrected;
      // The model reads the corrected text while BM25 searches it.
      settleCorrection(corrected);
      return (await lexical(pit, corrected, refined, FUSION_WINDOW + 1)).hits.hits;
    } finally {
      // Settled once: a later call changes nothing.
      settleCorrection(null);
    }
  }

  async function window(pit: string, refined: Query[]): Promise<Window> {
    const filter = [...accountSearchFilter(search), ...refined];
    const [hits, nearest] = await Promise.all([
      mode === 'hybrid' ? lexicalWindow(pit, refined) : [],
      used.then((vector) => accountNeighbours(client, { pit, keepAlive, filter, vector, floor: null })),
    ]);
    const bm25 = hits.slice(0, FUSION_WINDOW);
    // A query no account here states a word of is nonsense or another language to the model
    // unless its neighbours are near indeed: it answers under the unmatched floor, as posts do
    // (not when its words are English: query-terms.ts).
    const unstated = mode === 'hybrid' && bm25.length === 0 && !holdsEnglishWord(analyzeQuery(searched).content);
    const floor = unstated ? unmatchedFloor : deps.similarityFloor;
    const fused = fuseHybrid(
      bm25.map((h) => ({
        id: h._id!,
        score: h._score ?? 0,
        // The account whose handle the query is comes first, as in a lexical search.
        tier: matched(h.matched_queries, EXACT_HANDLE) ? 1 : 0,
      })),
      nearest.map((n) => ({ ...n, cosine: cosineOf(n.score) })),
      {
        lexicalWeight: mode === 'hybrid' ? 0.5 : 0,
        similarityFloor: floor,
        semanticEvidence: true,
        lexicalFloor: hits.length > FUSION_WINDOW ? (hits[FUSION_WINDOW]!._score ?? 0) : 0,
      },
    );
    const lexicalIds = new Set(bm25.map((h) => h._id!));
    return {
      ids: fused.map((f) => f.id),
      neighbours: fused.filter((f) => !lexicalIds.has(f.id)).map((f) => f.id),
      lexicalEnd: hits.length > FUSION_WINDOW ? bm25.at(-1)!.sort! : null,
    };
  }

  async function records(pit: string, ids: string[]): Promise<AccountRecord[]> {
    if (ids.length === 0) return [];
    const response = await client.search<{ record: AccountRecord }>({
      ...COMPLETE_RESULTS,
      pit: { id: pit, keep_alive: keepAlive },
      query: { ids: { values: ids } },
      size: ids.length,
      _source: SEARCH_SOURCE,
      track_total_hits: false,
    });
    const byId = new Map(response.hits.hits.map((h) => [h._id!, h._source!.record]));
    return ids.map((id) => byId.get(id)).filter((r): r is AccountRecord => r !== undefined);
  }

  const run = async (pit: string) => {
    const refined = deps.refine ? await deps.refine(pit) : [];
    const offset = page.state === null ? 0 : page.state.offset;
    let shown: AccountRecord[] = [];
    let next: Pick<FusedState, 'offset' | 'after'> | null = null;
    let after: estypes.SortResults | null = page.state?.after ?? null;
    let neighbours: string[];
    if (offset !== null) {
      const fused = await window(pit, refined);
      const slice = fused.ids.slice(offset, offset + page.limit + 1);
      shown = await records(pit, slice.slice(0, page.limit));
      if (slice.length > page.limit) return { shown, next: { offset: offset + page.limit, after: null } };
      // The window ends on this page: BM25's remaining matches follow it (hybrid).
      after = fused.lexicalEnd;
      neighbours = fused.neighbours;
    } else {
      const filter = [...accountSearchFilter(search), ...refined];
      neighbours = (
        await accountNeighbours(client, {
          pit,
          keepAlive,
          filter,
          vector: await used,
          floor: deps.similarityFloor,
        })
      ).map((n) => n.id);
    }
    if (after === null) return { shown, next };
    const room = page.limit - shown.length;
    const beyond = (await lexical(pit, searched, refined, room + 1, { after, not: neighbours })).hits.hits;
    shown = [...shown, ...beyond.slice(0, room).map((h) => h._source!.record)];
    if (beyond.length > room) next = { offset: null, after: room > 0 ? beyond[room - 1]!.sort! : after };
    return { shown, next };
  };

  const { pit, shared, response } =
    page.state === null
      ? await firstPage(deps, deps.index, page.keepAliveSeconds, run)
      : await nextPage(deps.snapshots, deps.index, page.state, page.keepAliveSeconds, run);
  const { shown, next } = response;
  if (next === null && !shared) void client.closePointInTime({ id: pit }).catch(() => undefined);
  const corrected = searched !== search.query ? searched : undefined;
  return {
    records: shown,
    hasMore: next !== null,
    ...(corrected !== undefined && { correctedQuery: corrected }),
    state:
      next === null
        ? null
        : {
            kind: 'fused',
            snapshot: pit,
            shared,
            mode,
            vector: await used,
            ...(corrected !== undefined && { terms: { corrected } }),
            ...next,
          },
  };
}
