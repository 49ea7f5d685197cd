import type { Client, estypes } from '@elastic/elasticsearch';
import { cosine } from '../../domain/lookalike.ts';
import type { PostRecord, SearchedPost } from '../../domain/records.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { analyzeQuery } from '../../text/languages.ts';
import type { AlertMatches, AlertMatching, AlertQuery } from '../alerts.ts';
import { COMPLETE_RESULTS, engineCall } from './errors.ts';
import { decodeVector } from '../../text/vector-codec.ts';
import { postSearchFilter, postSearchQuery } from './post-query.ts';
import { createVolatileBounds } from './volatile-bounds.ts';
import { projectPost } from './projection.ts';

/** Posts asked about at once: the scratch index holds one batch. */
export const POSTS_PER_BATCH = 1000;
/**
 * Saved searches per engine search: each is a named clause of one query over the batch, and a
 * post's `matched_queries` says which it satisfies. Fewer, larger searches cost less: for 1,000
 * saved searches and 1,000 posts, a pass took 1.43–1.86 s with 25 per search, 1.35–1.81 s with 100,
 * 1.25–1.51 s with 250 (bench/alerts.md, "How the searches are put to the engine"); 100 keeps a
 * group of long queries under the engine's clause limit (a group past it is split, below).
 */
const SEARCHES_PER_QUERY = 100;
/** Engine searches per `_msearch` request. */
const QUERIES_PER_REQUEST = 20;
/** The scratch index's shape (scratchDoc, no `_source`): an index of another shape is recreated. */
const SCRATCH_SHAPE = 2;
/** Clause names: a saved search satisfied, or (semantic searches) only its filters satisfied. */
const MATCHED = 'alert:';
const FILTERED = 'alert-filters:';

/**
 * The engine clauses of one saved search. `matched`: the filters, and with a query its lexical
 * match (the search's own, entity tiers included). `filtered`, for a search whose query has a
 * vector the similarity floor applies to: the filters alone; a post in it but not in `matched`
 * matches when its vector lies within the floor (SEARCH_SIMILARITY_FLOOR), the rule a hybrid
 * search applies before it ranks, computed exactly in the pass. Without a floor or a vector, only
 * the lexical side decides: "any post at all" is no alert.
 */
export function alertClauses(
  query: AlertQuery,
  similarityFloor: number | null,
): { matched: estypes.QueryDslQueryContainer; filtered: estypes.QueryDslQueryContainer | null } {
  const { search } = query;
  const filter = postSearchFilter(search);
  if (search.query === null) return { matched: { bool: { filter } }, filtered: null };
  // An empty vector: the model cannot read the query (src/embedding), so only its words decide.
  const semantic =
    query.vector !== null &&
    query.vector.length > 0 &&
    similarityFloor !== null &&
    analyzeQuery(search.query).semanticReadable;
  return {
    matched: { bool: { filter, should: [postSearchQuery(search)], minimum_should_match: 1 } },
    filtered: semantic ? { bool: { filter } } : null,
  };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * A post as the scratch index holds it: its searched fields only. Neither the stored record (the
 * hits are IDs) nor the vector (the similarity floor is computed in the pass): indexing the vector
 * built a vector graph for every batch, and took 1.45–1.57 s of a 2.8–3.5 s pass against 0.31–0.35 s
 * without (1,000 posts, bench/alerts.md, "How the searches are put to the engine").
 */
function scratchDoc(record: PostRecord): Record<string, unknown> {
  const { record: _stored, embedding: _vector, ...searched } = projectPost(record);
  return searched;
}

/** What the pass asks about: the posts in `index`, with their vectors. */
interface Batch {
  index: string;
  /** The posts of this batch: anything else the index holds is not asked about. */
  ids: ReadonlySet<string>;
  size: number;
  vectors: ReadonlyMap<string, ArrayLike<number>>;
}

/**
 * Creates the matching role over the posts read alias `postsIndex`. The posts asked about (as they
 * are now, or their earlier versions) are copied into `scratchIndex`, a one-shard index with the
 * posts index's mappings and analysis that holds one batch at a time, asked, and removed.
 *
 * Why a copy (measured, 1,000 saved searches against 1,000 posts of the 1M-post index, the engine
 * alone, bench/alerts.md, "How the searches are put to the engine"): the same named clauses asked
 * of the posts index behind an `ids` filter took 2.6–2.9 s, one search per saved search over the
 * copy 1.9–2.7 s, grouped over the copy 1.7–2.0 s (the copy included).
 */
export function createAlertMatching(deps: {
  client: Client;
  postsIndex: string;
  accountsIndex: string;
  scratchIndex: string;
  similarityFloor: number | null;
}): AlertMatching {
  const { client, similarityFloor } = deps;
  const bounds = createVolatileBounds({ client, accountsIndex: deps.accountsIndex });

  /**
   * The saved searches with their author ranges over counters and metrics read exactly on the
   * posts' coarse copies (volatile-bounds.ts), once per pass; the same objects when they have none.
   */
  function resolved(queries: readonly AlertQuery[]): Promise<AlertQuery[]> {
    return Promise.all(
      queries.map(async (q) => {
        const filter = await bounds.resolve(q.search.filter);
        return filter === q.search.filter ? q : { ...q, search: { ...q.search, filter } };
      }),
    );
  }

  /** The engine search of a group of saved searches, each a clause (or two) named after it. */
  const groupSearch = (group: readonly AlertQuery[], batch: Batch): estypes.MsearchRequestItem => ({
    query: {
      bool: {
        should: group.flatMap((q) => {
          const { matched, filtered } = alertClauses(q, similarityFloor);
          const named = [{ bool: { filter: [matched], _name: `${MATCHED}${q.id}` } }];
          if (filtered) named.push({ bool: { filter: [filtered], _name: `${FILTERED}${q.id}` } });
          return named;
        }),
        minimum_should_match: 1,
      },
    },
    size: batch.size,
    _source: false,
    track_total_hits: false,
  });

  /** Which posts of the batch each of `queries` satisfies, added to `matched` and `filtered`. */
  async function askGroups(
    batch: Batch,
    queries: readonly AlertQuery[],
    found: { matched: AlertMatches; filtered: AlertMatches },
    perQuery = SEARCHES_PER_QUERY,
  ): Promise<void> {
    const add = (map: AlertMatches, id: string, postId: string) => {
      const posts = map.get(id) ?? new Set<string>();
      posts.add(postId);
      map.set(id, posts);
    };
    for (const request of chunks(chunks(queries, perQuery), QUERIES_PER_REQUEST)) {
      const searches = request.flatMap((group) => [
        { index: batch.index, ...COMPLETE_RESULTS },
        groupSearch(group, batch),
      ]);
      const response = await engineCall(() => client.msearch({ searches }));
      for (const [i, answer] of response.responses.entries()) {
        const group = request[i]!;
        if ('error' in answer) {
          // A group too large for the engine (its clause limit: long queries expand to many
          // clauses) is asked in halves, down to one saved search.
          if (group.length > 1) {
            const half = Math.ceil(group.length / 2);
            await askGroups(batch, group.slice(0, half), found, half);
            await askGroups(batch, group.slice(half), found, half);
            continue;
          }
          throw new ServiceUnavailableError(`The search engine failed a saved search: ${answer.error.type}`);
        }
        for (const hit of answer.hits.hits) {
          if (!batch.ids.has(hit._id!)) continue;
          const names = Array.isArray(hit.matched_queries)
            ? hit.matched_queries
            : Object.keys(hit.matched_queries ?? {});
          for (const name of names) {
            if (name.startsWith(MATCHED)) add(found.matched, name.slice(MATCHED.length), hit._id!);
            else if (name.startsWith(FILTERED)) add(found.filtered, name.slice(FILTERED.length), hit._id!);
          }
        }
      }
    }
  }

  /** Every query's matches in one batch: the engine's clauses, then the similarity floor here. */
  async function matchBatch(batch: Batch, queries: readonly AlertQuery[], out: AlertMatches): Promise<void> {
    const found = { matched: out, filtered: new Map() as AlertMatches };
    await askGroups(batch, queries, found);
    for (const query of queries) {
      const candidates = found.filtered.get(query.id);
      if (!candidates || !query.vector || similarityFloor === null) continue;
      for (const postId of candidates) {
        const vector = batch.vectors.get(postId);
        if (!vector || vector.length !== query.vector.length) continue;
        if (cosine(vector, query.vector) < similarityFloor) continue;
        const posts = out.get(query.id) ?? new Set<string>();
        posts.add(postId);
        out.set(query.id, posts);
      }
    }
  }

  /** The records of `ids` as they are now, whole (vectors included); absent when unknown. */
  async function currentRecords(ids: readonly string[]): Promise<PostRecord[]> {
    const response = await engineCall(() =>
      client.mget<{ record: PostRecord }>({ index: deps.postsIndex, ids: [...ids], realtime: true }),
    );
    return response.docs.flatMap((doc) => ('found' in doc && doc.found && doc._source ? [doc._source.record] : []));
  }

  /** Copies `records` into the scratch index a batch at a time, asks every query, and clears it. */
  async function matchRecords(
    records: readonly PostRecord[],
    queries: readonly AlertQuery[],
    out: AlertMatches,
  ): Promise<void> {
    await ensureScratchIndex();
    await clearLeftovers();
    for (const batch of chunks(records, POSTS_PER_BATCH)) {
      const operations = batch.flatMap((r) => [{ index: { _index: deps.scratchIndex, _id: r.id } }, scratchDoc(r)]);
      const written = await engineCall(() => client.bulk({ operations, refresh: true }));
      if (written.errors) throw new ServiceUnavailableError('The search engine could not index posts to match.');
      const vectors = new Map(
        batch.flatMap((r) => (r.embedding?.vector ? [[r.id, decodeVector(r.embedding.vector)] as const] : [])),
      );
      try {
        const ids = new Set(batch.map((r) => r.id));
        await matchBatch({ index: deps.scratchIndex, ids, size: batch.length, vectors }, queries, out);
      } finally {
        // Cleared by ID (by-query deletion is not in every engine build); what a crash leaves
        // behind is cleared by the next pass (clearLeftovers).
        await client
          .bulk({
            operations: batch.map((r) => ({ delete: { _index: deps.scratchIndex, _id: r.id } })),
            refresh: true,
          })
          .catch(() => undefined);
      }
    }
  }

  /**
   * Removes what a pass that crashed mid-batch left in the scratch index: those posts would take
   * places in every search's hits (sized to the batch) and are no part of the batch. Passes run
   * one at a time (the `alerts` queue's deduplication), so nothing else is using the index.
   */
  async function clearLeftovers(): Promise<void> {
    for (;;) {
      const response = await engineCall(() =>
        client.search({ index: deps.scratchIndex, size: 10_000, _source: false, track_total_hits: false }),
      );
      const ids = response.hits.hits.map((h) => h._id!);
      if (ids.length === 0) return;
      await engineCall(() =>
        client.bulk({ operations: ids.map((_id) => ({ delete: { _index: deps.scratchIndex, _id } })), refresh: true }),
      );
    }
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
    const meta = current?.mappings?._meta as { source?: string; shape?: number } | undefined;
    if (meta?.source === concrete && meta.shape === SCRATCH_SHAPE) return;
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
        mappings: {
          ...definition.mappings,
          _source: { enabled: false },
          _meta: { ...definition.mappings?._meta, source: concrete, shape: SCRATCH_SHAPE },
        },
      }),
    );
  }

  return {
    async matchCurrent(postIds, queries) {
      const out: AlertMatches = new Map();
      if (postIds.length === 0 || queries.length === 0) return out;
      const asked = await resolved(queries);
      for (const ids of chunks(postIds, POSTS_PER_BATCH)) await matchRecords(await currentRecords(ids), asked, out);
      return out;
    },

    async matchVersions(records, queries) {
      const out: AlertMatches = new Map();
      if (records.length > 0 && queries.length > 0) await matchRecords(records, await resolved(queries), out);
      return out;
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
