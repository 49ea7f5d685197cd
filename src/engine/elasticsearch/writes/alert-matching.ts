import type { Client, estypes } from '@elastic/elasticsearch';
import { cosine } from '../../../domain/lookalike.ts';
import { hasVector, type PostRecord } from '../../../domain/records.ts';
import { ServiceUnavailableError } from '../../../internal/errors.ts';
import { stableStringify } from '../../../internal/stable-json.ts';
import { compileQuery } from '../../../percolator/compile.ts';
import { fieldTable, type FieldTable } from '../../../percolator/document.ts';
import { percolate, querySet, type QuerySet, type StandingQuery } from '../../../percolator/percolate.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import { decodeVector } from '../../../text/vector-codec.ts';
import type { AlertMatches, AlertMatching, AlertQuery } from '../../alerts.ts';
import { engineCall } from '../errors.ts';
import { storedPostVectors, type StoredPostVectors } from '../queries/post-vectors.ts';
import { postSearchFilter, postSearchQuery } from '../queries/post-query.ts';
import { createVolatileBounds } from '../queries/volatile-bounds.ts';
import type { WrittenProjections } from '../documents/written-projections.ts';

/** Posts matched at once. */
export const POSTS_PER_BATCH = 1000;

/** How long the posts index's definition, once read, is used without asking again. */
const FIELDS_TTL_MS = 5000;

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

/**
 * Creates the matching role over the posts read alias `postsIndex`: each saved search's engine
 * query, the very one a post search sends (post-query.ts), is evaluated against each post's
 * indexed projection in the process by the percolator (src/percolator), with the index's own
 * mappings and analysis: the engine is asked only for the index's definition (and the accounts in
 * a bound's bucket, volatile-bounds.ts). What stays here is what speaks Elasticsearch: the
 * definition, the queries, the projection.
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
  projections: Pick<WrittenProjections, 'of'>;
  /** The posts' vector documents: a post read back keeps its vectors there only. */
  postVectorsIndex: string;
}): AlertMatching {
  const { client, similarityFloor } = deps;
  const bounds = createVolatileBounds({ client, accountsIndex: deps.accountsIndex });
  let fields: { definition: string; table: FieldTable } | null = null;
  let fieldsAt = -Infinity;
  // Compiling a saved search analyzes its query (language detection, stemming): done once per
  // search object and index definition, not once per batch.
  let compiledFor: FieldTable | null = null;
  let compiled = new WeakMap<AlertQuery, { hasVector: boolean; query: StandingQuery }>();
  const sets = new WeakMap<readonly AlertQuery[], { table: FieldTable; set: QuerySet }>();

  /**
   * The posts index's fields as matching reads them; the same table while its definition is
   * unchanged, which is asked again after {@link FIELDS_TTL_MS} (every job's batch asks, and a
   * definition changes only with a rebuild).
   */
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

  function standing(query: AlertQuery, table: FieldTable): StandingQuery {
    if (compiledFor !== table) {
      compiled = new WeakMap();
      compiledFor = table;
    }
    const hasVector = query.vector !== null && query.vector.length > 0;
    const known = compiled.get(query);
    if (known?.hasVector === hasVector) return known.query;
    const { matched, filtered } = alertClauses(query, similarityFloor);
    const out: StandingQuery = {
      id: query.id,
      vector: query.vector,
      matched: compileQuery(matched, table),
      filtered: filtered ? compileQuery(filtered, table) : null,
    };
    compiled.set(query, { hasVector, query: out });
    return out;
  }

  /**
   * The saved searches with their author ranges over counters and metrics read exactly on the
   * posts' coarse copies (volatile-bounds.ts); the same list when none has such a range, so that
   * its compiled set is kept.
   */
  async function resolved(queries: readonly AlertQuery[]): Promise<readonly AlertQuery[]> {
    const out = await Promise.all(
      queries.map(async (q) => {
        const filter = await bounds.resolve(q.search.filter);
        return filter === q.search.filter ? q : { ...q, search: { ...q.search, filter } };
      }),
    );
    return out.every((q, i) => q === queries[i]) ? queries : out;
  }

  async function compiledSet(queries: readonly AlertQuery[], table: FieldTable): Promise<QuerySet> {
    const known = sets.get(queries);
    if (known?.table === table) return known.set;
    const set = querySet(queries.map((q) => standing(q, table)));
    sets.set(queries, { table, set });
    return set;
  }

  // Near by its head or by one of its passages, as a search's neighbours are (nearestPostsQuery).
  const near =
    similarityFloor === null
      ? undefined
      : (vector: ArrayLike<number>, vectors: ReadonlyArray<ArrayLike<number>>) =>
          vectors.some((v) => v.length === vector.length && cosine(v, vector) >= similarityFloor);

  return {
    async match(records, queries) {
      const out: AlertMatches = new Map();
      if (records.length === 0 || queries.length === 0) return out;
      const table = await currentFields();
      const set = await compiledSet(await resolved(queries), table);
      // Vectors matter only to saved searches by meaning; a post read back has them in its vector document.
      const semantic = near !== undefined && queries.some((q) => q.vector !== null && q.vector.length > 0);
      for (let i = 0; i < records.length; i += POSTS_PER_BATCH) {
        const batch = records.slice(i, i + POSTS_PER_BATCH);
        const apart = semantic
          ? await storedPostVectors(
              client,
              deps.postVectorsIndex,
              batch.filter((r) => hasVector(r.embedding) && r.embedding!.vector === undefined).map((r) => r.id),
              { passages: true },
            )
          : new Map<string, StoredPostVectors>();
        const candidates = batch.map((record: PostRecord) => {
          const stored = apart.get(record.id);
          const vectors = stored
            ? [stored.vector, ...stored.passages]
            : [record.embedding?.vector, ...(record.embedding?.passages ?? [])]
                .filter((v): v is string => v !== undefined && v.length > 0)
                .map(decodeVector);
          // The projection's `record`, vectors and passages are in no field table: never read.
          return { id: record.id, source: deps.projections.of(record), vectors };
        });
        await percolate(candidates, set, table, out, near);
      }
      return out;
    },
  };
}
