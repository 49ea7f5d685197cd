import type { Client, estypes } from '@elastic/elasticsearch';
import type { SearchedPost } from '../../domain/records.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { analyzeQuery } from '../../text/languages.ts';
import type { AlertMatches, AlertMatching, AlertQuery } from '../alerts.ts';
import { COMPLETE_RESULTS, engineCall, refreshAll } from './errors.ts';
import { postSearchFilter, postSearchQuery } from './post-query.ts';
import { projectPost } from './projection.ts';

/**
 * Posts per search of the pass: an `ids` filter of this many terms keeps each search small
 * (the engine scores only these documents), and a kNN side over them is exact (they are all
 * its candidates).
 */
export const POSTS_PER_SEARCH = 1000;
/** Saved searches per `_msearch` request. */
const SEARCHES_PER_REQUEST = 200;

/**
 * The engine query of "does one of these posts satisfy this saved search": the filters, and with a
 * query its lexical match (the search's own, entity tiers included) or a cosine similarity of at
 * least the floor, the same rules a hybrid search applies before it ranks (the floor: config
 * SEARCH_SIMILARITY_FLOOR). Without a floor or a vector, only the lexical side decides: "any post
 * at all" is no alert.
 */
export function alertQuery(
  query: AlertQuery,
  ids: readonly string[],
  similarityFloor: number | null,
): estypes.QueryDslQueryContainer {
  const only: estypes.QueryDslQueryContainer = { ids: { values: [...ids] } };
  const { search } = query;
  if (search.query === null) return { bool: { filter: [only, ...postSearchFilter(search)] } };
  const should: estypes.QueryDslQueryContainer[] = [postSearchQuery(search)];
  if (query.vector && similarityFloor !== null && analyzeQuery(search.query).semanticReadable) {
    should.push({
      knn: {
        field: 'embedding',
        query_vector: Array.from(query.vector),
        num_candidates: Math.max(1, ids.length),
        similarity: similarityFloor,
        filter: [only, ...postSearchFilter(search)],
      },
    });
  }
  return { bool: { filter: [only], should, minimum_should_match: 1 } };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Creates the matching role over the posts read alias `postsIndex`; versions go to `versionsIndex`. */
export function createAlertMatching(deps: {
  client: Client;
  postsIndex: string;
  versionsIndex: string;
  similarityFloor: number | null;
}): AlertMatching {
  const { client } = deps;

  async function match(index: string, ids: readonly string[], queries: readonly AlertQuery[]): Promise<AlertMatches> {
    const out: AlertMatches = new Map();
    for (const idChunk of chunks(ids, POSTS_PER_SEARCH)) {
      for (const queryChunk of chunks(queries, SEARCHES_PER_REQUEST)) {
        const searches: estypes.MsearchRequestItem[] = queryChunk.flatMap((q) => [
          { index, ...COMPLETE_RESULTS },
          {
            query: alertQuery(q, idChunk, deps.similarityFloor),
            size: idChunk.length,
            _source: false,
            track_total_hits: false,
          },
        ]);
        const response = await engineCall(() => client.msearch({ searches }));
        response.responses.forEach((answer, i) => {
          if ('error' in answer)
            throw new ServiceUnavailableError(`The search engine failed a saved search: ${answer.error.type}`);
          const id = queryChunk[i]!.id;
          const found = out.get(id) ?? new Set<string>();
          for (const hit of answer.hits.hits) found.add(hit._id!);
          if (found.size > 0) out.set(id, found);
        });
      }
    }
    return out;
  }

  /** The versions index, with the posts index's mappings and analysis (recreated after a rebuild). */
  async function ensureVersionsIndex(): Promise<void> {
    const source = await engineCall(() => client.indices.get({ index: deps.postsIndex }));
    const [concrete, definition] = Object.entries(source)[0] ?? [];
    if (!concrete || !definition) throw new ServiceUnavailableError('The posts index is not installed.');
    const existing = await engineCall(() =>
      client.indices.get({ index: deps.versionsIndex, ignore_unavailable: true, allow_no_indices: true }),
    );
    const current = Object.values(existing)[0];
    if ((current?.mappings?._meta as { source?: string } | undefined)?.source === concrete) return;
    if (current) await engineCall(() => client.indices.delete({ index: deps.versionsIndex }));
    const analysis = definition.settings?.index?.analysis;
    await engineCall(() =>
      client.indices.create({
        index: deps.versionsIndex,
        settings: {
          number_of_shards: 1,
          number_of_replicas: 0,
          refresh_interval: '-1',
          ...(analysis ? { analysis } : {}),
        },
        mappings: { ...definition.mappings, _meta: { ...definition.mappings?._meta, source: concrete } },
      }),
    );
  }

  return {
    async matchCurrent(postIds, queries) {
      if (postIds.length === 0 || queries.length === 0) return new Map();
      await refreshAll(client, deps.postsIndex);
      return match(deps.postsIndex, postIds, queries);
    },

    async matchVersions(records, queries) {
      if (records.length === 0 || queries.length === 0) return new Map();
      await ensureVersionsIndex();
      const operations = records.flatMap((r) => [{ index: { _index: deps.versionsIndex, _id: r.id } }, projectPost(r)]);
      const written = await engineCall(() => client.bulk({ operations, refresh: true }));
      if (written.errors) throw new ServiceUnavailableError('The search engine could not index earlier post versions.');
      try {
        return await match(
          deps.versionsIndex,
          records.map((r) => r.id),
          queries,
        );
      } finally {
        // The versions are only asked about once (by-query deletion is not in every engine build).
        await client
          .bulk({
            operations: records.map((r) => ({ delete: { _index: deps.versionsIndex, _id: r.id } })),
            refresh: true,
          })
          .catch(() => undefined);
      }
    },

    async posts(ids) {
      if (ids.length === 0) return new Map();
      const response = await engineCall(() =>
        client.mget<{ record: SearchedPost }>({
          index: deps.postsIndex,
          ids: [...ids],
          _source_excludes: ['record.embedding', 'record.media_enrichment'],
        }),
      );
      const out = new Map<string, SearchedPost>();
      for (const doc of response.docs)
        if ('found' in doc && doc.found && doc._source) out.set(doc._id, doc._source.record);
      return out;
    },
  };
}
