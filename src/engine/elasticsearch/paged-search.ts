import { errors, type Client, type estypes } from '@elastic/elasticsearch';
import { ExpiredCursorError } from '../../errors.ts';
import type { PageRequest, SearchPage } from '../engine.ts';
import { engineCall, translateEngineError } from './errors.ts';

interface PitState {
  pit: string;
  after: estypes.SortResults;
}

function isPitState(state: unknown): state is PitState {
  const s = state as Partial<PitState> | null;
  return typeof s?.pit === 'string' && Array.isArray(s.after);
}

function isMissingSnapshot(error: unknown): boolean {
  if (!(error instanceof errors.ResponseError)) return false;
  const text = JSON.stringify(error.body ?? '');
  return error.statusCode === 404 || /search_context_missing|point in time|No search context/i.test(text);
}

const EXPIRED = 'This cursor has expired (its result snapshot is gone); start the search again from the first page.';

/**
 * Runs one page of a search over a point in time (PIT): the first page opens it, each next page
 * extends it, the last page closes it. All pages of a search therefore see one snapshot, so paging
 * never repeats or skips a result while documents are indexed or updated, relevance-ordered
 * results included. `limit + 1` hits are fetched so `hasMore` is exact. `sort` must end with a
 * unique tie-breaker.
 */
export async function pagedSearch<R>(deps: {
  client: Client;
  index: string | string[];
  query: estypes.QueryDslQueryContainer;
  /** Extra filters computed on the page's snapshot (e.g. from an aggregation), ANDed with `query`. */
  refine?: (pit: string) => Promise<estypes.QueryDslQueryContainer[]>;
  sort: estypes.SortCombinations[];
  page: PageRequest;
}): Promise<SearchPage<R>> {
  const { client, page } = deps;
  const keepAlive = `${page.keepAliveSeconds}s`;
  let pit: string;
  let after: estypes.SortResults | undefined;
  if (page.state === null) {
    pit = (await engineCall(() => client.openPointInTime({ index: deps.index, keep_alive: keepAlive }))).id;
  } else {
    if (!isPitState(page.state)) throw new ExpiredCursorError(EXPIRED);
    pit = page.state.pit;
    after = page.state.after;
  }
  let response: estypes.SearchResponse<{ record: R }>;
  try {
    const refined = deps.refine ? await deps.refine(pit) : [];
    response = await client.search<{ record: R }>({
      pit: { id: pit, keep_alive: keepAlive },
      query: refined.length > 0 ? { bool: { filter: [deps.query, ...refined] } } : deps.query,
      sort: deps.sort,
      size: page.limit + 1,
      track_total_hits: false,
      ...(after ? { search_after: after } : {}),
    });
  } catch (error) {
    if (page.state !== null && isMissingSnapshot(error)) throw new ExpiredCursorError(EXPIRED);
    throw translateEngineError(error);
  }
  const hits = response.hits.hits;
  const hasMore = hits.length > page.limit;
  const shown = hits.slice(0, page.limit);
  const nextPit = response.pit_id ?? pit;
  if (!hasMore) {
    // Free the snapshot now rather than at keep-alive expiry.
    void client.closePointInTime({ id: nextPit }).catch(() => undefined);
  }
  return {
    records: shown.map((h) => h._source!.record),
    hasMore,
    state: hasMore ? { pit: nextPit, after: shown.at(-1)!.sort! } : null,
  };
}
