import type { AccountRecord, PostRecord } from '../../domain/records.ts';
import type {
  AccountFusedRanking,
  AccountRanking,
  FusedRanking,
  PostRanking,
  SimilarRanking,
} from '../../engine/search.ts';
import type { AccountSearch, PostSearch } from '../../query/search-codec.ts';
import type { Reference, References } from './references.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { queryEntities } from '../../query/entities.ts';
import { analyzeQuery } from '../../text/languages.ts';
import { readQuestion } from '../../text/question-weights.ts';

/** What ranking by meaning needs of the embedder (see src/embedding). */
export interface QueryEmbedder {
  status(): { state: 'off' | 'loading' | 'ready' | 'failed' };
  ready(): Promise<void>;
  embedQuery(text: string): Promise<Float32Array>;
  embedQueriesTogether(texts: readonly string[]): Promise<Float32Array[]>;
}

/** How `post.query` ranks (config SEARCH_RANKING) and the embedder that makes it semantic. */
export interface RankingPolicy {
  mode: 'hybrid' | 'lexical' | 'semantic';
  embedder: QueryEmbedder;
  /** Whether a question's words are weighted by the model (config SEARCH_QUESTION_WEIGHTS; absent: no). */
  questionWeights?: boolean;
  logger?: { warn(obj: object, msg?: string): void };
}

/** A query's embedding; a failure of the model is a 503 (logged once per query), never a lexical fallback mid-search. */
function embedWith(policy: RankingPolicy, text: string): Promise<Float32Array> {
  return policy.embedder.embedQuery(text).catch((cause: unknown) => {
    policy.logger?.warn({ err: cause }, 'query embedding failed');
    throw new ServiceUnavailableError('The embedding model failed on this query; retry shortly.', { cause });
  });
}

/**
 * The one place that decides how a first page of a post search ranks: fused with the query's
 * embedding when the policy asks for it and the model serves, else lexical (the model being off
 * or broken must not take search down). Continuations follow the kind of their cursor's state.
 */
export async function rankingFor(
  policy: RankingPolicy | undefined,
  query: string | null,
): Promise<{ kind: 'lexical' } | FusedRanking> {
  if (query === null || !policy || policy.mode === 'lexical') return { kind: 'lexical' };
  const { embedder } = policy;
  const state = embedder.status().state;
  if (state === 'off' || state === 'failed') return { kind: 'lexical' };
  if (state === 'loading') {
    try {
      await embedder.ready();
    } catch {
      return { kind: 'lexical' };
    }
  }
  // Not awaited: the engine runs its lexical side while the model works.
  const embed = () => embedWith(policy, query);
  // Not a query with exact entities (`#tag`, `@handle`, quoted phrase): those rank as they always did.
  const weighted = policy.mode === 'hybrid' && policy.questionWeights === true && queryEntities(query).length === 0;
  // The query as the lexical side corrected it, embedded as the query would have been.
  const corrected = (text: string) => embedWith(policy, text);
  if (!weighted) return { kind: 'fused', mode: policy.mode, vector: embed(), embed: corrected };
  // A question's words weighted by how much of it the model says each carries, and its vector,
  // from one run of the model (BM25 waits for the weights); null at once for any other query
  // (question-weights.ts), which is embedded alone, as is a question if that run fails (its
  // words then weigh uniformly, as any query's).
  const reading = readQuestion(query, (texts) => embedder.embedQueriesTogether(texts)).catch(() => null);
  const vector = reading.then((read) => read?.vector ?? embed());
  return {
    kind: 'fused',
    mode: policy.mode,
    vector,
    termWeights: reading.then((read) => read?.weights ?? null),
    // The weighing run reads its texts as sentences (src/embedding, Prompts.sentence): its vector
    // answers under the floor calibrated for that reading.
    sentence: reading.then((read) => read !== null),
    embed: corrected,
  };
}

/**
 * A search by similarity to a reference (`similar_to`). Its reference is resolved when first asked
 * for (by the ranking of a first page, or by the evidence of `matches`), once per page: every
 * asker gets that one.
 */
export interface SimilarSearch<R> {
  kind: 'similar';
  reference(): Promise<Reference<R>>;
}

/** What a first page of posts is ranked by: BM25 or a sort, the query's embedding, or similarity to a reference. */
export type PostSearchKind = { kind: 'lexical' } | FusedRanking | SimilarSearch<PostRecord>;

/** What an account search is ranked by: its query or sort, with the query's embedding (a first page), or similarity to a reference. */
export type AccountSearchKind = { kind: 'lexical' } | AccountFusedRanking | SimilarSearch<AccountRecord>;

function similar<R>(resolve: () => Promise<Reference<R>>): SimilarSearch<R> {
  let resolved: Promise<Reference<R>> | undefined;
  return { kind: 'similar', reference: () => (resolved ??= resolve()) };
}

/**
 * Whether a post search ranks by similarity, the one place that reads its `similar_to`. All a next
 * page needs to know: its order follows its cursor's state, and only a similar search's evidence needs
 * more (its reference).
 */
export function postSimilar(search: PostSearch, deps: { references: References }): SimilarSearch<PostRecord> | null {
  const { similarTo } = search;
  return similarTo === undefined ? null : similar(() => deps.references.post(similarTo));
}

/** The kind of a post search's first page: by similarity to its `similar_to` reference, else as the policy says. */
export async function postSearchKind(
  search: PostSearch,
  deps: { ranking?: RankingPolicy; references: References },
): Promise<PostSearchKind> {
  return postSimilar(search, deps) ?? rankingFor(deps.ranking, search.query);
}

/**
 * Whether an account search ranks by similarity, the one place that reads its `similar_to`; as for
 * posts, a next page's order follows its cursor's state.
 */
export function accountSimilar(
  search: AccountSearch,
  deps: { references: References },
): SimilarSearch<AccountRecord> | null {
  const { similarTo } = search;
  return similarTo === undefined ? null : similar(() => deps.references.account(similarTo));
}

/**
 * The kind of an account search's first page: by similarity to its `similar_to` reference; else
 * with the query's embedding as the policy says for posts (the accounts' own text's vectors), or
 * lexical. The query is embedded as any query (no question weighing: an account has no question
 * to answer). A query of exact entities (`@handle`, `#tag`, a quoted phrase) looks up what it
 * names, and one the model cannot read is read by its words: both rank lexically.
 */
export async function accountSearchKind(
  search: AccountSearch,
  deps: { references: References; ranking?: RankingPolicy },
): Promise<AccountSearchKind> {
  const similarSearch = accountSimilar(search, deps);
  if (similarSearch) return similarSearch;
  // A query the model cannot read (another language, surely detected) ranks by its words, as a
  // post query's neighbours then do not count (hybrid-windows.ts).
  if (search.query === null || queryEntities(search.query).length > 0 || !analyzeQuery(search.query).semanticReadable)
    return { kind: 'lexical' };
  const ranking = await rankingFor(deps.ranking && { ...deps.ranking, questionWeights: false }, search.query);
  if (ranking.kind !== 'fused') return ranking;
  const { mode, vector, embed } = ranking;
  return { kind: 'fused', mode, vector, ...(embed && { embed }) };
}

/** The engine's ranking of a similar search: its reference's vector, the reference itself left out. */
async function similarRanking<R extends { id: string }>(kind: SimilarSearch<R>): Promise<SimilarRanking> {
  const { record, vector } = await kind.reference();
  return { kind: 'similar', vector, exclude: record.id };
}

/** The engine's ranking of a first page of posts of this kind. */
export async function postRankingOf(kind: PostSearchKind): Promise<PostRanking> {
  return kind.kind === 'similar' ? similarRanking(kind) : kind;
}

/** The engine's ranking of a first page of accounts of this kind. */
export async function accountRankingOf(kind: AccountSearchKind): Promise<AccountRanking> {
  return kind.kind === 'similar' ? similarRanking(kind) : kind;
}
