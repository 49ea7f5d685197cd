import type { Client, estypes } from '@elastic/elasticsearch';
import type { PostRecord, SearchedPost } from '../../domain/records.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { analyzeQuery } from '../../text/languages.ts';
import type { AlertMatches, AlertMatching, AlertQuery } from '../alerts.ts';
import { COMPLETE_RESULTS, engineCall } from './errors.ts';
import { postSearchFilter, postSearchQuery } from './post-query.ts';
import { projectPost } from './projection.ts';

/**
 * Posts asked about at once: the batch is copied into the scratch index, where every saved search
 * runs against exactly these posts (the kNN side is exact: they are all its candidates).
 */
export const POSTS_PER_BATCH = 1000;
/** Saved searches per `_msearch` request. */
const SEARCHES_PER_REQUEST = 200;

/**
 * The engine query of "does one of the posts in the scratch index satisfy this saved search": the
 * filters, and with a query its lexical match (the search's own, entity tiers included) or a cosine
 * similarity of at least the floor, the same rules a hybrid search applies before it ranks (the
 * floor: config SEARCH_SIMILARITY_FLOOR). Without a floor or a vector, only the lexical side
 * decides: "any post at all" is no alert. `batch`: how many posts the scratch index holds.
 */
export function alertQuery(
  query: AlertQuery,
  batch: number,
  similarityFloor: number | null,
): estypes.QueryDslQueryContainer {
  const { search } = query;
  const filter = postSearchFilter(search);
  if (search.query === null) return { bool: { filter } };
  const should: estypes.QueryDslQueryContainer[] = [postSearchQuery(search)];
  if (query.vector && similarityFloor !== null && analyzeQuery(search.query).semanticReadable) {
    should.push({
      knn: {
        field: 'embedding',
        query_vector: Array.from(query.vector),
        num_candidates: Math.max(1, batch),
        similarity: similarityFloor,
        filter,
      },
    });
  }
  return { bool: { filter, should, minimum_should_match: 1 } };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Creates the matching role over the posts read alias `postsIndex`. Posts are asked about in
 * `scratchIndex`, a one-shard index with the posts index's mappings and analysis that holds one
 * batch at a time: the current versions of the batch's posts, then their earlier versions.
 *
 * Why a copy rather than an `ids` filter on the posts index (measured, 2,000 new posts against
 * 10,000 saved searches, bench/alerts.md): each of the 20,000 searches carried the batch's 1,000
 * IDs, and matching took 45.3 s of a 51 s pass; copying the batch once makes every search a query
 * over 1,000 documents with nothing to look up.
 */
export function createAlertMatching(deps: {
  client: Client;
  postsIndex: string;
  scratchIndex: string;
  similarityFloor: number | null;
}): AlertMatching {
  const { client } = deps;

  /** Which of the `count` posts in the scratch index each query matches, added to `out`. */
  async function matchScratch(count: number, queries: readonly AlertQuery[], out: AlertMatches): Promise<void> {
    for (const queryChunk of chunks(queries, SEARCHES_PER_REQUEST)) {
      const searches: estypes.MsearchRequestItem[] = queryChunk.flatMap((q) => [
        { index: deps.scratchIndex, ...COMPLETE_RESULTS },
        { query: alertQuery(q, count, deps.similarityFloor), size: count, _source: false, track_total_hits: false },
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

  /** Copies `records` into the scratch index a batch at a time, asks every query, and clears it. */
  async function matchRecords(records: readonly PostRecord[], queries: readonly AlertQuery[]): Promise<AlertMatches> {
    const out: AlertMatches = new Map();
    await ensureScratchIndex();
    for (const batch of chunks(records, POSTS_PER_BATCH)) {
      const operations = batch.flatMap((r) => [{ index: { _index: deps.scratchIndex, _id: r.id } }, projectPost(r)]);
      const written = await engineCall(() => client.bulk({ operations, refresh: true }));
      if (written.errors) throw new ServiceUnavailableError('The search engine could not index posts to match.');
      try {
        await matchScratch(batch.length, queries, out);
      } finally {
        // Cleared by ID (by-query deletion is not in every engine build); a batch left behind by a
        // crash is replaced by ID or cleared with the index when the posts index is rebuilt.
        await client
          .bulk({
            operations: batch.map((r) => ({ delete: { _index: deps.scratchIndex, _id: r.id } })),
            refresh: true,
          })
          .catch(() => undefined);
      }
    }
    return out;
  }

  /** The scratch index, with the posts index's mappings and analysis (recreated after a rebuild). */
  async function ensureScratchIndex(): Promise<void> {
    const source = await engineCall(() => client.indices.get({ index: deps.postsIndex }));
    const [concrete, definition] = Object.entries(source)[0] ?? [];
    if (!concrete || !definition) throw new ServiceUnavailableError('The posts index is not installed.');
    const existing = await engineCall(() =>
      client.indices.get({ index: deps.scratchIndex, ignore_unavailable: true, allow_no_indices: true }),
    );
    const current = Object.values(existing)[0];
    if ((current?.mappings?._meta as { source?: string } | undefined)?.source === concrete) return;
    if (current) await engineCall(() => client.indices.delete({ index: deps.scratchIndex }));
    const analysis = definition.settings?.index?.analysis;
    await engineCall(() =>
      client.indices.create({
        index: deps.scratchIndex,
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

  /** The records of `ids` as they are now, whole (vectors included); absent when unknown. */
  async function currentRecords(ids: readonly string[]): Promise<PostRecord[]> {
    const out: PostRecord[] = [];
    for (const chunk of chunks(ids, POSTS_PER_BATCH)) {
      const response = await engineCall(() =>
        client.mget<{ record: PostRecord }>({ index: deps.postsIndex, ids: chunk, realtime: true }),
      );
      for (const doc of response.docs) if ('found' in doc && doc.found && doc._source) out.push(doc._source.record);
    }
    return out;
  }

  return {
    async matchCurrent(postIds, queries) {
      if (postIds.length === 0 || queries.length === 0) return new Map();
      return matchRecords(await currentRecords(postIds), queries);
    },

    async matchVersions(records, queries) {
      if (records.length === 0 || queries.length === 0) return new Map();
      return matchRecords(records, queries);
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
