import { z } from 'zod';
import type { AccountRecord, SearchedPost } from '../domain/records.ts';
import type { AccountSearch, PostSearch } from '../query/search-codec.ts';

/** Sort values of the last hit shown (the engine's `search_after` position). */
const sortValues = z.array(z.union([z.string(), z.number(), z.boolean(), z.null()]));

/** A snapshot the engine keeps for the next page, and whether other searches share it. */
const snapshot = { snapshot: z.string().min(1), shared: z.boolean() };

/** Where a search in one engine order (BM25 score, or a sort) stands: after these sort values. */
export const pagedStateSchema = z.strictObject({
  kind: z.literal('paged'),
  ...snapshot,
  after: sortValues,
  /** The query as its first page searched it, misspelt words corrected (account search): every page searches the same. */
  corrected: z.string().min(1).max(4000).optional(),
});

/**
 * Where a search ranked with the query's embedding stands: a position in the fused window, or,
 * past it (hybrid only), sort values of the last BM25 hit shown.
 */
const fusedStateSchema = z.strictObject({
  kind: z.literal('fused'),
  ...snapshot,
  mode: z.enum(['hybrid', 'semantic']),
  /** The query vector, int8-quantized: every page must search with exactly the same one. */
  vector: z.string().min(1),
  /** A question's weights per content word (src/text/question-weights.ts): every page searches BM25 with the same. */
  weights: z.array(z.number().min(0).max(100)).max(32).optional(),
  /** The vector was read as a sentence (FusedRanking.sentence): every page answers under its floor. */
  sentence: z.literal(true).optional(),
  /**
   * The lexical side's words (engine/elasticsearch/queries/query-terms.ts): the query with its misspelt
   * words corrected, when it has any, and each content word's information; every page searches and
   * weighs the same.
   */
  terms: z
    .strictObject({
      corrected: z.string().min(1).max(4000).optional(),
      information: z.array(z.number().min(0).max(100)).max(32).optional(),
      /** No post carries a word of the query: its neighbours answer under the unmatched floor. */
      unmatched: z.literal(true).optional(),
    })
    .optional(),
  offset: z.int().min(0).nullable(),
  after: sortValues.nullable(),
});

/**
 * Where a search for what is like a reference stands (`similar_to`): a position in the window of
 * its nearest neighbours, searched again on every page with the same quantized vector.
 */
export const similarStateSchema = z.strictObject({
  kind: z.literal('similar'),
  ...snapshot,
  vector: z.string().min(1),
  /** The reference, never a result. */
  exclude: z.string().min(1),
  offset: z.int().min(0),
});

/**
 * Where a paged search stands, carried inside cursors. Versioned with the cursor and checked when
 * a cursor is decoded, so a state of an older shape is refused, never misread.
 */
export const searchStateSchema = z.discriminatedUnion('kind', [pagedStateSchema, fusedStateSchema, similarStateSchema]);

/** Where an account search stands: paged, in or past a fused window, or in a window of similar accounts. */
export const accountSearchStateSchema = z.discriminatedUnion('kind', [
  pagedStateSchema,
  fusedStateSchema,
  similarStateSchema,
]);

export type PagedState = z.infer<typeof pagedStateSchema>;
export type FusedState = z.infer<typeof fusedStateSchema>;
export type SimilarState = z.infer<typeof similarStateSchema>;
export type AccountSearchState = z.infer<typeof accountSearchStateSchema>;
export type SearchState = z.infer<typeof searchStateSchema>;

/** Which side of a fused ranking retrieved a result (its fusion inputs). */
export type Retrieval = 'lexical' | 'semantic' | 'both';

/** One page of search results. */
export interface SearchPage<R, S extends SearchState = SearchState> {
  records: R[];
  /** Fused rankings only: which side retrieved each record, by id. */
  retrievedBy?: ReadonlyMap<string, Retrieval>;
  /** Searches by similarity only: each record's cosine similarity to the reference, by id. */
  similarity?: ReadonlyMap<string, number>;
  /**
   * The query as the lexical side searched it, when it corrected words no post (account) carries
   * (the same on every page: the cursor carries it).
   */
  correctedQuery?: string;
  /** Exact: true only when at least one more result exists. */
  hasMore: boolean;
  /** Continuation state when `hasMore`, else null. */
  state: S | null;
}

/** The size of a page and how long the engine keeps its snapshot for the next one. */
interface PageSize {
  limit: number;
  keepAliveSeconds: number;
}

/**
 * How a first page of posts ranks. `lexical`: BM25 with a query, the sort without. `fused`: with
 * the query's embedding, fused with BM25 (`hybrid`) or alone (`semantic`). The search service
 * decides; continuations follow the kind of their state.
 */
export type PostRanking =
  | { kind: 'lexical' }
  | SimilarRanking
  | {
      kind: 'fused';
      mode: FusedState['mode'];
      /** The query embedding; a promise lets the engine start the lexical side while the model works. */
      vector: ArrayLike<number> | Promise<ArrayLike<number>>;
      /** A question's weights per content word (src/text/question-weights.ts); absent or null: uniform. */
      termWeights?: Promise<readonly number[] | null>;
      /** Whether the vector was read as a sentence (a question's weighing run): its own floor applies; absent: no. */
      sentence?: Promise<boolean>;
      /**
       * The embedding of another text, as the query's was made: a query whose misspelt words the
       * lexical side corrected is read by the model as corrected. Absent: the query's vector serves.
       */
      embed?: (text: string) => Promise<ArrayLike<number>>;
    };

/** The ranking of a first page ranked with the query's embedding. */
export type FusedRanking = Extract<PostRanking, { kind: 'fused' }>;

/**
 * A first page ranked by similarity to a reference (`similar_to`): its vector's nearest neighbours,
 * the reference itself left out.
 */
export interface SimilarRanking {
  kind: 'similar';
  vector: ArrayLike<number>;
  exclude: string;
}

/** A first page (with its ranking) or the next page of a search. */
export type PostPage = PageSize & ({ state: null; ranking: PostRanking } | { state: SearchState });

/**
 * A first page of accounts ranked with the query's embedding: the accounts' own text's vectors fused
 * with BM25 (`hybrid`) or alone (`semantic`); `embed` reads the query as the lexical side corrected it.
 */
export type AccountFusedRanking = Pick<FusedRanking, 'kind' | 'mode' | 'vector' | 'embed'>;

/** How a first page of accounts ranks: by its query or sort, with the query's embedding, or by similarity to a reference. */
export type AccountRanking = { kind: 'lexical' } | AccountFusedRanking | SimilarRanking;

/** A first page (with its ranking) or the next page of an account search. */
export type AccountPage = PageSize & ({ state: null; ranking: AccountRanking } | { state: AccountSearchState });

/** What the search operations (spec 4.1, 4.2) need of the engine. */
export interface SearchEngine {
  /**
   * Servable posts matching the filters, in relevance order with a query, else in `sort` order
   * (default newest first). Every page of one search reads the same snapshot. Throws
   * ExpiredCursorError when the snapshot of `state` is gone.
   */
  searchPosts(search: PostSearch, page: PostPage): Promise<SearchPage<SearchedPost>>;
  /**
   * Servable, non-private accounts matching the filters and, with a posts scope, authoring at
   * least N matching posts; relevance order with a query, else `sort` (default most followed
   * first). Same snapshot and expiry rules as {@link searchPosts}.
   */
  searchAccounts(search: AccountSearch, page: AccountPage): Promise<SearchPage<AccountRecord, AccountSearchState>>;
}
