import type { AlertQuery } from '../../engine/alerts.ts';
import type { PostSearch } from '../../query/search-request.ts';
import type { AlertStore, SavedSearchRecord } from './alert-store.ts';
import { decodeQueryVector, encodeQueryVector } from './query-vector.ts';

/** Every saved search, and the query the engine is asked for each, in the same order. */
export interface SearchSetSnapshot {
  searches: SavedSearchRecord[];
  queries: AlertQuery[];
}

/** The alert query of a stored saved search. */
function queryOf(record: SavedSearchRecord): AlertQuery {
  return {
    id: record.id,
    search: JSON.parse(record.search) as PostSearch,
    vector: record.vector ? decodeQueryVector(record.vector) : null,
  };
}

/**
 * Creates the worker's view of the saved searches, shared by the matching at a write and the
 * matching pass: read again only when a version of their set changes (10,000 of them are ~15 MB
 * to read, and they change far less often than posts are written), each search's query object
 * kept while its stored search and vector are unchanged (the engine compiles a query once per
 * object: language detection, stemming, ~0.8 ms each; a new version of the set, any search
 * created or deleted, would otherwise recompile them all). A search created while the model was
 * not ready gets its query embedded here, once the model is.
 */
export function createSearchSet(deps: {
  store: Pick<AlertStore, 'allSearches' | 'searchesVersion' | 'updateSearchVector'>;
  /** Embeds the query of a saved search created while the model was not ready. */
  embedQuery?: ((text: string) => Promise<ArrayLike<number> | null>) | undefined;
}): { current(): Promise<SearchSetSnapshot> } {
  let cached: { version: string; snapshot: SearchSetSnapshot } | null = null;
  let loading: { version: string; load: Promise<SearchSetSnapshot> } | null = null;
  let known = new Map<string, { stored: string; query: AlertQuery }>();

  async function queriesOf(searches: SavedSearchRecord[]): Promise<AlertQuery[]> {
    const kept = new Map<string, { stored: string; query: AlertQuery }>();
    const queries = searches.map((record) => {
      const stored = `${record.search}\n${record.vector ?? ''}`;
      const previous = known.get(record.id);
      const query = previous?.stored === stored ? previous.query : queryOf(record);
      kept.set(record.id, { stored, query });
      return query;
    });
    known = kept;
    if (!deps.embedQuery) return queries;
    for (const query of queries) {
      if (query.vector || query.search.query === null) continue;
      const vector = await deps.embedQuery(query.search.query).catch(() => null);
      if (!vector) continue;
      query.vector = vector;
      await deps.store.updateSearchVector(query.id, encodeQueryVector(vector));
    }
    return queries;
  }

  return {
    async current() {
      const version = await deps.store.searchesVersion();
      if (cached?.version === version) return cached.snapshot;
      // Concurrent jobs asking for a new version read and compile it once.
      if (loading?.version !== version) {
        const load = (async () => {
          const searches = await deps.store.allSearches();
          const snapshot = { searches, queries: await queriesOf(searches) };
          cached = { version, snapshot };
          return snapshot;
        })();
        loading = { version, load };
        void load
          .catch(() => undefined)
          .finally(() => {
            if (loading?.load === load) loading = null;
          });
      }
      return loading.load;
    },
  };
}

/** The worker's saved searches (search-set.ts). */
export type SearchSet = ReturnType<typeof createSearchSet>;
