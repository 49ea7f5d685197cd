import { errors, type Client, type estypes } from '@elastic/elasticsearch';
import { ExpiredCursorError, ServiceUnavailableError } from '../../../internal/errors.ts';
import type { PagedState, SearchPage } from '../../search.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { COMPLETE_RESULTS, isLostNode, translateEngineError } from '../errors.ts';
import { SEARCH_SOURCE } from '../queries/post-query.ts';
import type { Snapshot, SnapshotPool } from './snapshot-pool.ts';

/** A point in time's index deleted (a rebuild's swap), or being deleted (measured in the drills). */
const INDEX_GONE = /index_not_found|no_shard_available_action_exception|Analyzer is closed|index_closed_exception/i;

/**
 * True when the engine no longer knows a point in time, or no longer holds its index: after an
 * alias swap deletes the old index, a search on a point in time over it answers 503
 * `no_shard_available_action_exception` rather than 404, or, while the deletion is under way,
 * 400 "this Analyzer is closed" (measured in test/drills/rebuild-under-load.test.ts).
 */
export function isMissingSnapshot(error: unknown): boolean {
  if (!(error instanceof errors.ResponseError)) return false;
  const text = JSON.stringify(error.body ?? '');
  return (
    error.statusCode === 404 ||
    /search_context_missing|point in time|No search context/i.test(text) ||
    INDEX_GONE.test(text)
  );
}

/**
 * True when the engine forgot a point in time's context on a shard whose index lives on: a node
 * restarted (its contexts die with the process), a shard copy moved, or the context was closed.
 * Its keep-alive is the cursor's lifetime, checked before the engine is asked, so it is not the
 * keep-alive. A point in time over a deleted index (a rebuild's swap) answers
 * `index_not_found_exception` instead (both measured on 9.4.3, 2026-11-30).
 */
export function isForgottenContext(error: unknown): boolean {
  if (!(error instanceof errors.ResponseError)) return false;
  const text = JSON.stringify(error.body ?? '');
  return /search_context_missing_exception/.test(text) && !INDEX_GONE.test(text);
}

/** The 410 detail of a cursor whose snapshot is gone. */
export const EXPIRED =
  'This cursor has expired (its result snapshot is gone); start the search again from the first page.';

type Pool = { snapshots: SnapshotPool; visibility: VisibilityEpoch };

/**
 * The first page, on the node's recent shared snapshot when there is one. The visibility epoch is
 * read while that search runs (no round trip added); if it is newer than the snapshot's tag, some
 * caller's writes may be missing and the page runs again on a snapshot opened after the read.
 * A snapshot that is gone (index rebuilt, node restarted) or lost a node is dropped and the page
 * runs on a new one, once more if a node leaves between the open and the search.
 */
export async function firstPage<T>(
  pool: Pool,
  index: string | string[],
  keepAliveSeconds: number,
  run: (pit: string) => Promise<T>,
): Promise<{ pit: string; shared: boolean; response: T }> {
  const { snapshots } = pool;
  const readEpoch = () => pool.visibility.current();
  const attempt = async (snapshot: Snapshot) => ({
    pit: snapshot.pit,
    shared: snapshot.shared,
    response: await run(snapshot.pit),
  });
  // Null when the snapshot is unusable (and forgotten); any other failure is the page's.
  const unlessGone = (snapshot: Snapshot) => (error: unknown) => {
    if (isLostNode(error)) snapshots.nodeLost(index, snapshot.pit);
    else if (isMissingSnapshot(error)) snapshots.discard(index, snapshot.pit);
    else throw error;
    return null;
  };
  const fresh = async (epoch: string | null) => {
    const first = await snapshots.open(index, epoch, keepAliveSeconds);
    return (
      (await attempt(first).catch(unlessGone(first))) ??
      (await attempt(await snapshots.open(index, epoch, keepAliveSeconds)))
    );
  };
  try {
    const recent = await snapshots.recent(index);
    if (!recent) return await fresh(await readEpoch());
    // Dispatch the search first, then read the epoch while the engine works.
    const result = attempt(recent).catch(unlessGone(recent));
    const [done, current] = await Promise.all([result, readEpoch()]);
    if (done && current !== null && current === recent.epoch) return done;
    return await fresh(current);
  } catch (error) {
    throw unavailable(error);
  }
}

/** A failure that outlived the retries: nodes still leaving or an index swapped twice is a 503 (retry), not a 500. */
function unavailable(error: unknown) {
  return isLostNode(error) || isMissingSnapshot(error)
    ? new ServiceUnavailableError(
        'The search engine is changing (a node left, or an index was rebuilt); retry shortly.',
        { cause: error },
      )
    : translateEngineError(error);
}

/**
 * A next page on the cursor's snapshot. When the snapshot lost a node or the engine forgot part of
 * it (a node restarted, a shard moved: the data lives on), the page continues from the same
 * position on a new snapshot of the index instead of failing: a result that changed since the
 * first page may then move across pages, which beats making the client start again. A snapshot
 * whose index is gone (rebuilt and swapped) is a 410.
 */
export async function nextPage<T>(
  snapshots: SnapshotPool,
  index: string | string[],
  state: { snapshot: string; shared: boolean },
  keepAliveSeconds: number,
  run: (pit: string) => Promise<T>,
): Promise<{ pit: string; shared: boolean; response: T }> {
  try {
    return { pit: state.snapshot, shared: state.shared, response: await run(state.snapshot) };
  } catch (error) {
    if (!isLostNode(error) && !isForgottenContext(error))
      throw isMissingSnapshot(error) ? new ExpiredCursorError(EXPIRED) : translateEngineError(error);
    snapshots.nodeLost(index, state.snapshot);
  }
  try {
    const snapshot = await snapshots.open(index, null, keepAliveSeconds);
    return { pit: snapshot.pit, shared: false, response: await run(snapshot.pit) };
  } catch (error) {
    throw unavailable(error);
  }
}

/**
 * Runs one page of a search over a point in time (PIT): the first page takes one from the pool,
 * each next page extends it. All pages of a search therefore see one snapshot, so paging never
 * repeats or skips a result while documents are indexed or updated, relevance-ordered results
 * included. `limit + 1` hits are fetched so `hasMore` is exact. `sort` must end with a unique
 * tie-breaker.
 */
export async function pagedSearch<R>(deps: {
  client: Client;
  snapshots: SnapshotPool;
  visibility: VisibilityEpoch;
  index: string | string[];
  query: estypes.QueryDslQueryContainer;
  /** Extra filters computed on the page's snapshot (e.g. from an aggregation), ANDed with `query` without scoring. */
  refine?: (pit: string) => Promise<estypes.QueryDslQueryContainer[]>;
  sort: estypes.SortCombinations[];
  page: { limit: number; keepAliveSeconds: number; state: PagedState | null };
}): Promise<SearchPage<R, PagedState>> {
  const { client, page } = deps;
  const keepAlive = `${page.keepAliveSeconds}s`;
  let after: estypes.SortResults | undefined;

  const run = async (pit: string) => {
    const refined = deps.refine ? await deps.refine(pit) : [];
    return client.search<{ record: R }>({
      ...COMPLETE_RESULTS,
      pit: { id: pit, keep_alive: keepAlive },
      // The query scores (a relevance order reads its scores); the refinements only filter.
      query: refined.length > 0 ? { bool: { must: [deps.query], filter: refined } } : deps.query,
      sort: deps.sort,
      size: page.limit + 1,
      _source: SEARCH_SOURCE,
      track_total_hits: false,
      ...(after ? { search_after: after } : {}),
    });
  };

  let pit: string;
  let shared: boolean;
  let response: estypes.SearchResponse<{ record: R }>;
  if (page.state === null) {
    ({ pit, shared, response } = await firstPage(deps, deps.index, page.keepAliveSeconds, run));
  } else {
    after = page.state.after;
    ({ pit, shared, response } = await nextPage(deps.snapshots, deps.index, page.state, page.keepAliveSeconds, run));
  }
  const hits = response.hits.hits;
  const hasMore = hits.length > page.limit;
  const shown = hits.slice(0, page.limit);
  const nextPit = response.pit_id ?? pit;
  if (!hasMore && !shared) {
    // Free a private snapshot now rather than at keep-alive expiry.
    void client.closePointInTime({ id: nextPit }).catch(() => undefined);
  }
  return {
    records: shown.map((h) => h._source!.record),
    hasMore,
    state: hasMore ? { kind: 'paged', snapshot: nextPit, shared, after: shown.at(-1)!.sort! } : null,
  };
}
