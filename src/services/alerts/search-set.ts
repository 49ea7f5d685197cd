import type { Logger } from 'pino';
import type { AlertQuery } from '../../engine/alerts.ts';
import { storedSavedSearchSchema } from '../../query/alert-request.ts';
import { decodeVector, encodeVector } from '../../text/vector-codec.ts';
import type { SavedSearchRecord, SearchStore } from './search-store.ts';

/** Every saved search that reads, and the query the engine is asked for each, in the same order. */
export interface SearchSetSnapshot {
  searches: SavedSearchRecord[];
  queries: AlertQuery[];
}

/**
 * Creates the worker's view of the saved searches, shared by every writer's matching and the
 * recovery pass: read again only when the version of their set changes (10,000 of them are ~15 MB
 * to read, and they change far less often than posts are written), each search's query read from
 * its stored scope by the schema that validated it (storedSavedSearchSchema) and kept while its
 * scope and vector are unchanged (the engine compiles a query once per object: language
 * detection, stemming, ~0.8 ms each). A stored scope that no longer reads (a grammar changed under
 * it) is logged once and left out. A search created while the model was not ready gets its query
 * embedded here, once the model is.
 */
export function createSearchSet(deps: {
  store: Pick<SearchStore, 'all' | 'version' | 'setVector'>;
  /** Embeds the query of a saved search created while the model was not ready. */
  embedQuery?: ((text: string) => Promise<ArrayLike<number> | null>) | undefined;
  logger?: Pick<Logger, 'error'> | undefined;
}): { current(): Promise<SearchSetSnapshot> } {
  let cached: { version: string; snapshot: SearchSetSnapshot } | null = null;
  let loading: { version: string; load: Promise<SearchSetSnapshot> } | null = null;
  let known = new Map<string, { stored: string; query: AlertQuery | null }>();

  function queryOf(record: SavedSearchRecord): AlertQuery | null {
    const parsed = storedSavedSearchSchema.safeParse({ post: record.post });
    if (parsed.success)
      return { id: record.id, search: parsed.data, vector: record.vector ? decodeVector(record.vector) : null };
    deps.logger?.error(
      { saved_search: record.id, reason: parsed.error.issues[0]?.message },
      'a saved search no longer reads: it matches nothing until it is created again',
    );
    return null;
  }

  async function snapshotOf(records: SavedSearchRecord[]): Promise<SearchSetSnapshot> {
    const kept = new Map<string, { stored: string; query: AlertQuery | null }>();
    const searches: SavedSearchRecord[] = [];
    const queries: AlertQuery[] = [];
    for (const record of records) {
      const stored = `${JSON.stringify(record.post)}\n${record.vector ?? ''}`;
      const previous = known.get(record.id);
      const query = previous?.stored === stored ? previous.query : queryOf(record);
      kept.set(record.id, { stored, query });
      if (!query) continue;
      searches.push(record);
      queries.push(query);
    }
    known = kept;
    if (deps.embedQuery)
      for (const query of queries) {
        if (query.vector || query.search.query === null) continue;
        const vector = await deps.embedQuery(query.search.query).catch(() => null);
        if (!vector) continue;
        query.vector = vector;
        await deps.store.setVector(query.id, encodeVector(Float32Array.from(vector)));
      }
    return { searches, queries };
  }

  return {
    async current() {
      const version = await deps.store.version();
      if (cached?.version === version) return cached.snapshot;
      // Concurrent jobs asking for a new version read and compile it once.
      if (loading?.version !== version) {
        const load = (async () => {
          const snapshot = await snapshotOf(await deps.store.all());
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
