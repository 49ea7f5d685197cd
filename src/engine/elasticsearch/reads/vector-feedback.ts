import type { Client, estypes } from '@elastic/elasticsearch';
import { queryEntities } from '../../../query/entities.ts';
import { isQuestion } from '../../../text/question-weights.ts';
import type { TieredFusedId } from '../../../query/fusion.ts';
import { FEEDBACK_WEIGHT, feedbackShares, feedbackVector } from '../../../query/relevance-feedback.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
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
 * How many of a first kNN's neighbours have their vectors read while BM25 still runs
 * ({@link readFeedbackVectors}): the fused best 3 lie among the first 10 neighbours for 83–89 % of
 * questions and 77 % of SciFact's claims (bench/relevance.md, "A question's first page, stage by
 * stage"), so the feedback mostly needs no read of its own after the fusion.
 */
export const PREFETCHED_NEIGHBOURS = 10;

/** Posts' stored vectors read for feedback: which posts were asked, and the vectors of those that have one. */
export interface FeedbackVectors {
  asked: ReadonlySet<string>;
  vectors: ReadonlyMap<string, number[]>;
}

/** The stored vectors of `ids`, from their vector documents on the snapshot (queries/post-vectors.ts). */
export async function readFeedbackVectors(deps: {
  client: Client;
  pit: string;
  keepAlive: string;
  /** Matches the posts' own documents on a snapshot that spans their vector documents too. */
  postsOnly: estypes.QueryDslQueryContainer;
  ids: readonly string[];
}): Promise<FeedbackVectors> {
  const asked = new Set(deps.ids);
  if (asked.size === 0) return { asked, vectors: new Map() };
  const response = await deps.client.search({
    pit: { id: deps.pit, keep_alive: deps.keepAlive },
    ...COMPLETE_RESULTS,
    ...postVectorsBody([...asked], { scope: { bool: { must_not: [deps.postsOnly] } } }),
  });
  const stored = readPostVectors(response.hits.hits);
  return { asked, vectors: new Map([...stored].map(([id, { vector }]) => [id, vector])) };
}

/**
 * The feedback vector of a first fused window: the query vector moved toward the stored vectors of
 * its 3 best results (FEEDBACK_DOCUMENTS), each weighing its fused score times its share
 * ({@link feedbackShares}: a result near the cut counts in part, on both sides of it), unit length.
 * The vectors come from `prefetched` (read beside BM25, {@link PREFETCHED_NEIGHBOURS}) where it
 * asked for them, else from one read on the same snapshot. Null — no feedback — when none of them
 * has a vector, and when BM25 matched nothing: the first results are then neighbours alone, and
 * feedback would only amplify them (on a second social set, seed 7, "xkq zzt brrp" is answered
 * with 4 Japanese posts the model cannot read; moved toward them, with 8).
 */
export async function vectorFromFeedback(deps: {
  client: Client;
  pit: string;
  keepAlive: string;
  /** Matches the posts' own documents on a snapshot that spans their vector documents too. */
  postsOnly: estypes.QueryDslQueryContainer;
  query: readonly number[];
  fused: readonly TieredFusedId[];
  prefetched?: Promise<FeedbackVectors>;
}): Promise<number[] | null> {
  if (!deps.fused.some((f) => f.lexical !== null)) return null;
  const shares = feedbackShares(deps.fused.map((f) => f.score));
  const counted = deps.fused.map((f, i) => ({ id: f.id, weight: shares[i]! * f.score })).filter((f) => f.weight > 0);
  if (counted.length === 0 || deps.query.length === 0) return null;
  const prefetched = (await deps.prefetched) ?? { asked: new Set<string>(), vectors: new Map<string, number[]>() };
  const missing = counted.map((f) => f.id).filter((id) => !prefetched.asked.has(id));
  const read = await readFeedbackVectors({ ...deps, ids: missing });
  const documents = counted.flatMap((f) => {
    const vector = prefetched.vectors.get(f.id) ?? read.vectors.get(f.id);
    return vector?.length === deps.query.length ? [{ vector, weight: f.weight }] : [];
  });
  return documents.length > 0 ? feedbackVector(deps.query, documents, FEEDBACK_WEIGHT) : null;
}
