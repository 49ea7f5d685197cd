import type { Client, estypes } from '@elastic/elasticsearch';
import type { AccountRecord } from '../../../domain/records.ts';
import { fuseHybrid } from '../../../query/fusion.ts';
import type { AccountSearch } from '../../../query/search-codec.ts';
import type { AccountFusedRanking, FusedState, SearchPage } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { accountSearchFilter, accountSearchQuery, accountSearchSort, EXACT_HANDLE } from '../queries/account-query.ts';
import { nearestQuery } from '../queries/nearest-query.ts';
import { SEARCH_SOURCE } from '../queries/post-query.ts';
import { dequantizeVector, quantizeVector } from '../vectors.ts';
import { FUSION_WINDOW, KNN_CANDIDATES } from './fused-search.ts';
import { firstPage, nextPage } from './paged-search.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

type Query = estypes.QueryDslQueryContainer;

/** An account search's text query, scoring, with the filters computed on the page's snapshot beside it. */
function scored(search: AccountSearch, refined: Query[]): Query {
  const query = accountSearchQuery(search);
  return refined.length > 0 ? { bool: { must: [query], filter: refined } } : query;
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
    .filter((h) => options.floor === null || cosine(h.score) >= options.floor);
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

/** A cosine kNN score is (1 + cosine) / 2. */
function cosine(score: number): number {
  return 2 * score - 1;
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
 * through every account that states one of its words.
 */
export async function fusedAccountSearch(deps: {
  client: Client;
  snapshots: SnapshotPool;
  visibility: VisibilityEpoch;
  index: string | string[];
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
  // Never below the similarity floor (posts: hybrid-windows.ts, floorOf).
  const unmatchedFloor =
    deps.unmatchedFloor === undefined || deps.unmatchedFloor === null || deps.similarityFloor === null
      ? (deps.unmatchedFloor ?? deps.similarityFloor)
      : Math.max(deps.similarityFloor, deps.unmatchedFloor);

  /** BM25's hits in the search's order: its window (ids only), or records past `after`, `not` left out. */
  const lexical = (pit: string, refined: Query[], size: number, past?: { after: estypes.SortResults; not: string[] }) =>
    client.search<{ record: AccountRecord }>({
      ...COMPLETE_RESULTS,
      pit: { id: pit, keep_alive: keepAlive },
      query:
        past && past.not.length > 0
          ? { bool: { must: [scored(search, refined)], must_not: [{ ids: { values: past.not } }] } }
          : scored(search, refined),
      sort,
      size,
      _source: past ? SEARCH_SOURCE : false,
      track_total_hits: false,
      ...(past ? { search_after: past.after } : {}),
    });

  async function window(pit: string, refined: Query[]): Promise<Window> {
    const filter = [...accountSearchFilter(search), ...refined];
    // BM25's window and the hit past it: the lexical side's floor (fusion.ts, fuseHybrid).
    const [hits, nearest] = await Promise.all([
      mode === 'hybrid' ? lexical(pit, refined, FUSION_WINDOW + 1).then((r) => r.hits.hits) : [],
      quantized.then((vector) => accountNeighbours(client, { pit, keepAlive, filter, vector, floor: null })),
    ]);
    const bm25 = hits.slice(0, FUSION_WINDOW);
    // A query no account here states a word of is nonsense or another language to the model
    // unless its neighbours are near indeed: it answers under the unmatched floor, as posts do.
    const floor = mode === 'hybrid' && bm25.length === 0 ? unmatchedFloor : deps.similarityFloor;
    const fused = fuseHybrid(
      bm25.map((h) => ({
        id: h._id!,
        score: h._score ?? 0,
        // The account whose handle the query is comes first, as in a lexical search.
        tier: matched(h.matched_queries, EXACT_HANDLE) ? 1 : 0,
      })),
      nearest.map((n) => ({ ...n, cosine: cosine(n.score) })),
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
      if (after === null) return { shown, next };
    } else {
      const filter = [...accountSearchFilter(search), ...refined];
      neighbours = (
        await accountNeighbours(client, {
          pit,
          keepAlive,
          filter,
          vector: await quantized,
          floor: deps.similarityFloor,
        })
      ).map((n) => n.id);
    }
    if (after === null) return { shown, next };
    const room = page.limit - shown.length;
    const beyond = (await lexical(pit, refined, room + 1, { after, not: neighbours })).hits.hits;
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
  return {
    records: shown,
    hasMore: next !== null,
    state: next === null ? null : { kind: 'fused', snapshot: pit, shared, mode, vector: await quantized, ...next },
  };
}
