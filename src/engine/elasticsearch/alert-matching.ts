import type { Client, estypes } from '@elastic/elasticsearch';
import { cosine } from '../../domain/lookalike.ts';
import type { PostRecord, SearchedPost } from '../../domain/records.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { stableStringify } from '../../internal/stable-json.ts';
import { analyzeQuery } from '../../text/languages.ts';
import { decodeVector } from '../../text/vector-codec.ts';
import type { AlertMatches, AlertMatching, AlertQuery } from '../alerts.ts';
import { engineCall } from './errors.ts';
import {
  chooseKeys,
  compileMemoryQuery,
  fieldTable,
  MemoryDoc,
  textReads,
  triggerPaths,
  type FieldTable,
  type MemoryQuery,
} from './memory-query.ts';
import { postSearchFilter, postSearchQuery } from './post-query.ts';
import { createVolatileBounds } from './volatile-bounds.ts';
import { createWrittenProjections, type WrittenProjections } from './written-projections.ts';

/** Posts read and matched at once. */
export const POSTS_PER_BATCH = 1000;

/**
 * The engine queries of one saved search. `matched`: the filters, and with a query its lexical
 * match (the search's own, entity tiers included). `filtered`, for a search whose query has a
 * vector the similarity floor applies to: the filters alone; a post in it but not in `matched`
 * matches when its vector lies within the floor (SEARCH_SIMILARITY_FLOOR), the rule a hybrid
 * search applies before it ranks. Without a floor or a vector, only the lexical side decides:
 * "any post at all" is no alert.
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

/** A saved search compiled for in-memory matching (memory-query.ts). */
interface CompiledSearch {
  id: string;
  vector: ArrayLike<number> | null;
  matched: MemoryQuery;
  filtered: MemoryQuery | null;
}

/** Saved searches compiled against one field table, with the keyword fields and words their documents must offer. */
interface CompiledSet {
  table: FieldTable;
  searches: CompiledSearch[];
  keywordPaths: Set<string>;
  text: { paths: Set<string>; words: Set<string> };
}

/** One post of a batch, as matching reads it. */
interface BatchPost {
  id: string;
  doc: MemoryDoc;
  keys: Array<Iterable<string>>;
  /** The head's vector, then the passages' (a long post), as a search's neighbours read them. */
  vectors: Array<ArrayLike<number>>;
}

/**
 * Creates the matching role over the posts read alias `postsIndex`. Each saved search's engine
 * query, the very one a post search sends (post-query.ts), is evaluated against each post's
 * indexed projection in the process (memory-query.ts), with the index's own mappings and analysis:
 * the engine is asked only for the posts and the index's definition.
 *
 * Why not the engine (bench/alerts.md): copying each batch into a scratch index and asking it 100
 * saved searches per search cost 1.1–1.5 s per 1,000 posts and 1,000 saved searches, engine and
 * process together more CPU than the intake itself; the percolator, which answers this question
 * inside the engine, is not in every build.
 */
export function createAlertMatching(deps: {
  client: Client;
  postsIndex: string;
  accountsIndex: string;
  similarityFloor: number | null;
  /** The projections the posts' writes made (engine.ts shares its posts store's). */
  projections?: Pick<WrittenProjections, 'of'>;
}): AlertMatching {
  const { client, similarityFloor } = deps;
  const projections = deps.projections ?? createWrittenProjections();
  const bounds = createVolatileBounds({ client, accountsIndex: deps.accountsIndex });
  let fields: { definition: string; table: FieldTable } | null = null;
  // Compiling a saved search analyzes its query (language detection, stemming): done once per
  // search object and index definition, not once per pass.
  let compiledFor: FieldTable | null = null;
  let compiled = new WeakMap<AlertQuery, { hasVector: boolean; search: CompiledSearch }>();

  /**
   * The posts index's fields as matching reads them; the same table while its definition is
   * unchanged, which is asked again after {@link FIELDS_TTL_MS} (matching at the write asks for
   * every job's batch, and a definition changes only with a rebuild).
   */
  let fieldsAt = -Infinity;
  async function currentFields(): Promise<FieldTable> {
    if (fields && performance.now() - fieldsAt < FIELDS_TTL_MS) return fields.table;
    const answer = await engineCall(() => client.indices.get({ index: deps.postsIndex }));
    const definition = Object.values(answer)[0];
    if (!definition?.mappings?.properties) throw new ServiceUnavailableError('The posts index is not installed.');
    const key = stableStringify([definition.mappings.properties, definition.settings?.index?.analysis ?? {}]);
    if (fields?.definition !== key)
      fields = {
        definition: key,
        table: fieldTable(definition.mappings.properties, definition.settings?.index?.analysis),
      };
    fieldsAt = performance.now();
    return fields.table;
  }

  function compile(query: AlertQuery, table: FieldTable): CompiledSearch {
    if (compiledFor !== table) {
      compiled = new WeakMap();
      compiledFor = table;
    }
    const hasVector = query.vector !== null && query.vector.length > 0;
    const known = compiled.get(query);
    if (known?.hasVector === hasVector) return known.search;
    const { matched, filtered } = alertClauses(query, similarityFloor);
    const search: CompiledSearch = {
      id: query.id,
      vector: query.vector,
      matched: compileMemoryQuery(matched, table),
      filtered: filtered ? compileMemoryQuery(filtered, table) : null,
    };
    compiled.set(query, { hasVector, search });
    return search;
  }

  /**
   * The saved searches with their author ranges over counters and metrics read exactly on the
   * posts' coarse copies (volatile-bounds.ts), once per pass; the same objects when they have none.
   */
  async function resolved(queries: readonly AlertQuery[]): Promise<readonly AlertQuery[]> {
    const out = await Promise.all(
      queries.map(async (q) => {
        const filter = await bounds.resolve(q.search.filter);
        return filter === q.search.filter ? q : { ...q, search: { ...q.search, filter } };
      }),
    );
    // The same list when no search has such a range: its compiled form is kept (compiledSet).
    return out.every((q, i) => q === queries[i]) ? queries : out;
  }

  /** Which posts of `batch` each search matches, added to `out`. */
  async function matchBatch(
    batch: readonly BatchPost[],
    searches: readonly CompiledSearch[],
    out: AlertMatches,
  ): Promise<void> {
    // Each search is tried only on the posts carrying one of its necessary keys, chosen as the
    // ones fewest posts of this batch carry.
    const counts = new Map<string, number>();
    for (const post of batch)
      for (const keys of post.keys) for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    const count = (key: string) => counts.get(key) ?? 0;
    // Searches by their index in `searches`.
    const byKey = new Map<string, number[]>();
    const everywhere: number[] = [];
    searches.forEach((search, index) => {
      const lexical = chooseKeys(search.matched.triggers, count);
      const semantic = search.filtered ? chooseKeys(search.filtered.triggers, count) : { keys: [], cost: 0 };
      if (!lexical || !semantic) {
        everywhere.push(index);
        return;
      }
      for (const key of new Set([...lexical.keys, ...semantic.keys])) {
        if (!counts.has(key)) continue;
        const list = byKey.get(key);
        if (list) list.push(index);
        else byKey.set(key, [index]);
      }
    });
    // A post's candidates, each once: marked with the post's ordinal rather than gathered in a set
    // per post.
    const marks = new Int32Array(searches.length);
    const candidates: number[] = [];
    let slice = performance.now();
    for (let ordinal = 1; ordinal <= batch.length; ordinal++) {
      const post = batch[ordinal - 1]!;
      slice = await yieldAfter(slice);
      candidates.length = 0;
      for (const index of everywhere) {
        marks[index] = ordinal;
        candidates.push(index);
      }
      for (const keys of post.keys)
        for (const key of keys) {
          const listed = byKey.get(key);
          if (listed)
            for (const index of listed)
              if (marks[index] !== ordinal) {
                marks[index] = ordinal;
                candidates.push(index);
              }
        }
      for (const index of candidates) {
        const search = searches[index]!;
        if (matches(search, post)) add(out, search.id, post.id);
      }
    }
  }

  function matches(search: CompiledSearch, post: BatchPost): boolean {
    if (search.matched.matches(post.doc)) return true;
    const query = search.vector;
    if (!search.filtered || !query || similarityFloor === null) return false;
    // Near by its head or by one of its passages, as a search's neighbours are (nearestPostsQuery).
    const near = post.vectors.filter((v) => v.length === query.length);
    if (near.length === 0 || !search.filtered.matches(post.doc)) return false;
    return near.some((v) => cosine(v, query) >= similarityFloor);
  }

  /** The records of `ids` as they are now, whole (vectors included); absent when unknown. */
  async function currentRecords(ids: readonly string[]): Promise<PostRecord[]> {
    const response = await engineCall(() =>
      client.mget<{ record: PostRecord }>({ index: deps.postsIndex, ids: [...ids], realtime: true }),
    );
    return response.docs.flatMap((doc) => ('found' in doc && doc.found && doc._source ? [doc._source.record] : []));
  }

  /** A set of queries compiled, with what documents must offer them; kept per query list (matching at the write asks per job). */
  const sets = new WeakMap<readonly AlertQuery[], CompiledSet>();
  async function compiledSet(queries: readonly AlertQuery[]): Promise<CompiledSet> {
    const table = await currentFields();
    const known = sets.get(queries);
    if (known?.table === table) return known;
    const searches = queries.map((q) => compile(q, table));
    const keywordPaths = new Set<string>();
    for (const search of searches) {
      triggerPaths(search.matched.triggers, keywordPaths);
      if (search.filtered) triggerPaths(search.filtered.triggers, keywordPaths);
    }
    // Documents hold only the tokens some search looks up: a post's keys are then the few its
    // text shares with the searches, not every word it has (bench/alerts.md).
    const text = textReads(searches.flatMap((s) => (s.filtered ? [s.matched, s.filtered] : [s.matched])));
    const set = { table, searches, keywordPaths, text };
    sets.set(queries, set);
    return set;
  }

  /** Every query's matches among `records`, a batch at a time. */
  async function matchRecords(
    records: readonly PostRecord[],
    queries: readonly AlertQuery[],
    out: AlertMatches,
  ): Promise<void> {
    const { table, searches, keywordPaths, text } = await compiledSet(queries);
    for (const batch of chunks(records, POSTS_PER_BATCH)) {
      const posts: BatchPost[] = [];
      let slice = performance.now();
      for (const record of batch) {
        slice = await yieldAfter(slice);
        // The projection's `record`, vectors and passages are in no field table: never read.
        const doc = new MemoryDoc(projections.of(record), table, text.words);
        const stored = record.embedding ? [record.embedding.vector, ...(record.embedding.passages ?? [])] : [];
        const vectors = stored.filter((v) => v.length > 0).map(decodeVector);
        posts.push({ id: record.id, doc, keys: doc.keySets(keywordPaths, text.paths), vectors });
      }
      await matchBatch(posts, searches, out);
    }
  }

  return {
    async matchCurrent(postIds, queries) {
      const matches: AlertMatches = new Map();
      const posts = new Map<string, SearchedPost>();
      if (postIds.length === 0 || queries.length === 0) return { matches, posts };
      const asked = await resolved(queries);
      for (const ids of chunks(postIds, POSTS_PER_BATCH)) {
        const records = await currentRecords(ids);
        await matchRecords(records, asked, matches);
        for (const { media_enrichment: _media, ...post } of records) posts.set(post.id, post);
      }
      return { matches, posts };
    },

    async matchVersions(records, queries) {
      const out: AlertMatches = new Map();
      if (records.length > 0 && queries.length > 0) await matchRecords(records, await resolved(queries), out);
      return out;
    },
  };
}

/**
 * Lets the event loop run when the current slice has lasted `SLICE_MS`: the pass shares its
 * process with the intake's worker, whose Redis and engine calls time out behind a long
 * synchronous stretch. Returns the start of the current slice.
 */
async function yieldAfter(sliceStart: number): Promise<number> {
  if (performance.now() - sliceStart < SLICE_MS) return sliceStart;
  await new Promise<void>((resolve) => setImmediate(resolve));
  return performance.now();
}

/** How long the posts index's definition, once read, is used without asking again. */
const FIELDS_TTL_MS = 5000;

/** Longest synchronous stretch of a pass, in milliseconds. */
const SLICE_MS = 20;

function add(map: AlertMatches, id: string, postId: string): void {
  const posts = map.get(id);
  if (posts) posts.add(postId);
  else map.set(id, new Set([postId]));
}
