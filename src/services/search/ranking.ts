import type { PostRanking, SimilarRanking } from '../../engine/search.ts';
import type { AccountSearch, PostSearch } from '../../query/search-request.ts';
import type { References } from './references.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { queryEntities } from '../../query/entities.ts';
import { questionTermWeights } from '../../text/question-weights.ts';

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

/**
 * The one place that decides how a first page of a post search ranks: fused with the query's
 * embedding when the policy asks for it and the model serves, else lexical (the model being off
 * or broken must not take search down). Continuations follow the kind of their cursor's state.
 */
export async function rankingFor(policy: RankingPolicy | undefined, query: string | null): Promise<PostRanking> {
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
  const vector = embedder.embedQuery(query).catch((cause: unknown) => {
    policy.logger?.warn({ err: cause }, 'query embedding failed');
    throw new ServiceUnavailableError('The embedding model failed on this query; retry shortly.', { cause });
  });
  // Not a query with exact entities (`#tag`, `@handle`, quoted phrase): those rank as they always did.
  const weighted = policy.mode === 'hybrid' && policy.questionWeights === true && queryEntities(query).length === 0;
  if (!weighted) return { kind: 'fused', mode: policy.mode, vector };
  // A question's words weighted by how much of it the model says each carries (BM25 waits for
  // them: one run of the model for all its texts); null at once for any other query
  // (question-weights.ts), and uniform, as for any query, if the model fails on them.
  const termWeights = questionTermWeights(query, (texts) => embedder.embedQueriesTogether(texts)).catch(() => null);
  return { kind: 'fused', mode: policy.mode, vector, termWeights };
}

/** The ranking of a post search's first page: by likeness to its `similar_to` reference, else as the policy says. */
export async function postRankingOf(
  search: PostSearch,
  deps: { ranking?: RankingPolicy; references: References },
): Promise<PostRanking> {
  if (search.similarTo === undefined) return rankingFor(deps.ranking, search.query);
  const reference = await deps.references.post(search.similarTo);
  return { kind: 'similar', vector: reference.vector, exclude: reference.record.id };
}

/** The ranking of an account search's first page: by likeness with `similar_to`, else the search's own. */
export async function accountRankingOf(
  search: AccountSearch,
  deps: { references: References },
): Promise<{ kind: 'lexical' } | SimilarRanking> {
  if (search.similarTo === undefined) return { kind: 'lexical' };
  const reference = await deps.references.account(search.similarTo);
  return { kind: 'similar', vector: reference.vector, exclude: reference.record.id };
}
