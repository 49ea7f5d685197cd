import { cosine } from '../domain/lookalike.ts';
import { analyzeIn, analyzeQuery, unspacedWords } from './languages.ts';

/**
 * Words that open an English question: interrogatives and the auxiliaries of yes/no questions
 * ("how should I…", "what do I need…", "is … worth it?", "can I…").
 */
const QUESTION_OPENERS: ReadonlySet<string> = new Set(
  'how what why which who whom whose where when is are was were am do does did can could should would will shall may might must has have had'.split(
    ' ',
  ),
);

/**
 * Whether a query is phrased as a question: it ends with a question mark, or its first word
 * opens an English question. Questions carry, beside their topic, the words of the asking
 * ("get better at", "need to know", "worth it", "best options"), which stop lists do not hold and
 * which posts of every niche share; a claim or a noun phrase states its topic in every word (none
 * of SciFact's 300 test claims is a question by this rule).
 */
export function isQuestion(query: string): boolean {
  if (/\?\s*$/u.test(query)) return true;
  const first = /[\p{L}']+/u.exec(query.toLowerCase())?.[0] ?? '';
  return QUESTION_OPENERS.has(first);
}

/** More content words than this and a query is weighted uniformly (each weight costs the model one text). */
export const MAX_WEIGHTED_TERMS = 12;

/**
 * How much a word keeps of its weight however little the model says it carries: half, as RM3
 * interpolates a query with its feedback (λ 0.5), so no word of the query is dropped on the
 * model's word alone.
 */
const UNIFORM_SHARE = 0.5;

/**
 * The words a question's lexical sides can weigh one by one: its distinct content words (function
 * words out, src/text/function-words.ts), when the query is an English question of 2 to
 * {@link MAX_WEIGHTED_TERMS} such words whose stemmed side is English's alone (analyzeQuery), with
 * no unspaced-script run. Null otherwise: the query is searched as it always was. (A query with
 * exact entities is never weighted either: the search service decides, src/services/search/ranking.ts.)
 */
export function weightableTerms(query: string): string[] | null {
  if (!isQuestion(query) || unspacedWords(query).length > 0) return null;
  const analysis = analyzeQuery(query);
  if (analysis.language !== 'en' || !analysis.semanticReadable) return null;
  if (analysis.stemmed !== analyzeIn(analysis.content, 'en')) return null;
  const words = [...new Set(analysis.content.split(' ').filter(Boolean))];
  return words.length >= 2 && words.length <= MAX_WEIGHTED_TERMS ? words : null;
}

/** A question as the model reads it: its own vector and its content words' weights. */
export interface QuestionReading<V extends ArrayLike<number>> {
  /** The whole question's vector, from the run that weighed its words (the query vector of its search). */
  vector: V;
  /** Aligned with {@link weightableTerms}. */
  weights: number[];
}

/**
 * Each content word's weight in a question's lexical sides, aligned with
 * {@link weightableTerms}: how much the query's meaning, as the model reads it, depends on the
 * word — one minus the cosine between the whole query's vector and the vector of its content
 * words without that word (leave-one-out) — over the mean of the words', interpolated half and
 * half with a uniform weight, rounded to 3 decimals (the cursor carries them). In "how can I get
 * better at crochet without expensive stuff?" crochet weighs 1.52, without 0.93, better 0.79.
 * The whole query's vector from the same run comes with them: the search's query vector, so a
 * question costs the model one run, not two. The run reads each text as the sentence it is
 * (`embedTogether` is the embedder's `embedQueriesTogether`: bge-small-en-v1.5's instruction for
 * short queries left out), which ranks alike and takes the question's first page 14-17 % sooner;
 * such a vector is nearer to every post, so its search answers under the model's sentence floor
 * (src/embedding/model-floors.ts; bench/relevance.md, "The floor of a question read as a sentence").
 *
 * The corpus's statistics weigh the words too (BM25's IDF, and the fusion's coverage:
 * engine/elasticsearch/queries/query-terms.ts), but in a small corpus the topic's word can be as common as
 * the asking words ("crochet" in a tenth of the posts, "better" in a tenth); the model tells which
 * of them the question is about (bench/relevance.md, "Questions phrased in the asker's own words").
 * Not for claims and noun phrases: the same weights on SciFact's claims cost 0.009 (p = 0.06),
 * where BM25's own IDF already tells the topic.
 *
 * Null when the query is not weightable or the model cannot read it.
 */
export async function readQuestion<V extends ArrayLike<number>>(
  query: string,
  embedTogether: (texts: string[]) => Promise<V[]>,
): Promise<QuestionReading<V> | null> {
  const words = weightableTerms(query);
  if (!words) return null;
  // The question and each text without one word in one run of the model: they are compared with
  // each other only (a run each cost the question's first page as many runs as it has words).
  const [whole, ...without] = await embedTogether([
    query,
    ...words.map((_, i) => words.filter((__, j) => j !== i).join(' ')),
  ]);
  if (!whole || whole.length === 0 || without.some((v) => v.length === 0)) return null;
  const loss = without.map((v) => Math.max(0, 1 - cosine(whole, v)));
  const mean = loss.reduce((a, b) => a + b, 0) / loss.length;
  if (!(mean > 0)) return null;
  const weights = loss.map((l) => Math.round((1 - UNIFORM_SHARE + (UNIFORM_SHARE * l) / mean) * 1000) / 1000);
  return { vector: whole, weights };
}
