import type { Client, estypes } from '@elastic/elasticsearch';
import type { PostRecord } from '../../../domain/records.ts';
import { queryEntities } from '../../../query/entities.ts';
import { isQuestion } from '../../../text/question-weights.ts';
import type { TieredFusedId } from '../../../query/fusion.ts';
import { FEEDBACK_WEIGHT, feedbackShares, feedbackVector } from '../../../query/relevance-feedback.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { SEARCH_SOURCE } from '../queries/post-query.ts';
import { postVectorsBody, readPostVectors } from '../queries/post-vectors.ts';

/**
 * Which hybrid searches use vector feedback (config SEARCH_VECTOR_FEEDBACK): `on` (the default)
 * every one, `questions` those phrased as questions (src/text/question-weights.ts), `off` none.
 */
export type VectorFeedback = 'off' | 'questions' | 'on';

/**
 * Whether a hybrid search moves its query vector toward its first fused results before the final
 * kNN (src/query/relevance-feedback.ts): as the policy says, only when the model reads the query
 * (a query it cannot read has no semantic evidence to correct), and never for a query with exact
 * entities (`#tag`, `@handle`, a quoted phrase, a bare word looked up as a tag), which rank
 * exactly as before. Every such query by default: a question's phrasing pulls its vector toward
 * posts phrased alike, a claim's toward abstracts of another subject, and the documents the first
 * fusion ranks highest, each as much as its score, pull it back toward what the query is about
 * (bench/relevance.md, "Questions phrased in the asker's own words").
 */
export function usesVectorFeedback(
  query: string,
  mode: 'hybrid' | 'semantic',
  semanticReadable: boolean,
  policy: VectorFeedback = 'off',
): boolean {
  if (policy === 'off' || (policy === 'questions' && !isQuestion(query))) return false;
  return mode === 'hybrid' && semanticReadable && queryEntities(query).length === 0;
}

/**
 * The feedback vector of a first fused window: the query vector moved toward the stored vectors of
 * its 3 best results (FEEDBACK_DOCUMENTS), each weighing its fused score times its share
 * ({@link feedbackShares}: a result near the cut counts in part, on both sides of it), read from
 * their vector documents on the same snapshot (queries/post-vectors.ts), unit length. Null — no feedback — when none of them has a vector,
 * and when BM25 matched nothing: the first results are then neighbours alone, and feedback would
 * only amplify them (on a second social set, seed 7, "xkq zzt brrp" is answered with 4 Japanese
 * posts the model cannot read; moved toward them, with 8).
 *
 * Beside it, on the same snapshot, a search reads the records of `records` (the first window's
 * best ids, which the final page mostly shows again), so that the page does not wait for another
 * request to read them; `records` answers those found, without their vectors.
 */
export async function vectorFromFeedback(deps: {
  client: Client;
  pit: string;
  keepAlive: string;
  /** Matches the posts' own documents on a snapshot that spans their vector documents too. */
  postsOnly: estypes.QueryDslQueryContainer;
  query: readonly number[];
  fused: readonly TieredFusedId[];
  records?: readonly string[];
}): Promise<{ vector: number[] | null; records: Map<string, PostRecord> }> {
  const none = { vector: null, records: new Map<string, PostRecord>() };
  if (!deps.fused.some((f) => f.lexical !== null)) return none;
  const shares = feedbackShares(deps.fused.map((f) => f.score));
  const counted = deps.fused.map((f, i) => ({ id: f.id, weight: shares[i]! * f.score })).filter((f) => f.weight > 0);
  const ids = counted.map((f) => f.id);
  if (ids.length === 0 || deps.query.length === 0) return none;
  // The records and the vectors at once (two searches rather than one multi-search: a lost
  // snapshot fails each as a search, which is what the page's retry reads).
  const on = { pit: { id: deps.pit, keep_alive: deps.keepAlive }, ...COMPLETE_RESULTS };
  const asked = deps.records ?? [];
  const [recordsAnswer, vectorsAnswer] = await Promise.all([
    asked.length === 0
      ? null
      : deps.client.search<{ record: PostRecord }>({
          ...on,
          query: { bool: { filter: [{ ids: { values: [...asked] } }, deps.postsOnly] } },
          size: asked.length,
          _source: SEARCH_SOURCE,
          track_total_hits: false,
        }),
    deps.client.search({ ...on, ...postVectorsBody(ids, { scope: { bool: { must_not: [deps.postsOnly] } } }) }),
  ]);
  const records = new Map<string, PostRecord>();
  for (const hit of recordsAnswer?.hits.hits ?? []) {
    const record = hit._source?.record;
    if (record) records.set(hit._id!, record);
  }
  const stored = readPostVectors(vectorsAnswer.hits.hits);
  const documents = counted.flatMap((f) => {
    const vector = stored.get(f.id)?.vector;
    return vector?.length === deps.query.length ? [{ vector, weight: f.weight }] : [];
  });
  return {
    vector: documents.length > 0 ? feedbackVector(deps.query, documents, FEEDBACK_WEIGHT) : null,
    records,
  };
}
