import type { Client, estypes } from '@elastic/elasticsearch';
import type { Correction, CorrectionPolicy, SpellingCorrector } from '../../spelling.ts';
import {
  isCorrectable,
  MAX_CORRECTED_WORDS,
  pairKey,
  type AgreementQuestions,
  type WordCounts,
} from '../../../text/correctable-words.ts';
import { COMPLETE_RESULTS, engineCall } from '../errors.ts';
import { termOptions } from '../response-values.ts';
import { ACCOUNT_STEMMED_TEXT_FIELDS, ACCOUNT_TEXT_FIELDS, accountSearchFilter } from './account-query.ts';
import { analyzeIn } from '../../../text/languages.ts';
import { POST_STEMMED_FIELDS, POST_TEXT_FIELDS } from './post-query.ts';
import { and } from '../../../query/ast.ts';

/**
 * Where a corrector's words come from: text fields as the index analyzes them (unstemmed), and the
 * documents a search can return, which alone count as carrying a word.
 */
export interface Vocabulary {
  fields: readonly string[];
  filter: readonly estypes.QueryDslQueryContainer[];
  /**
   * The client-stemmed companions of `fields`, if a word counts as carried by a document that
   * states another inflection of it ("workouts" by a biography saying "workout"); else exact only.
   */
  stemmed?: readonly string[];
}

const unweighted = (fields: readonly string[]) => fields.map((weighted) => weighted.split('^')[0]!);

/** The servable posts' texts a post query searches. */
export const POST_VOCABULARY: Vocabulary = {
  fields: unweighted(POST_TEXT_FIELDS),
  filter: [{ term: { servable: true } }],
};

/** The same texts, a word counted as carried in any inflection (their stemmed companions too). */
export const POST_WORDS: Vocabulary = { ...POST_VOCABULARY, stemmed: unweighted(POST_STEMMED_FIELDS) };

/**
 * The names and descriptions `account.query` searches, of the accounts an account search can return
 * (servable, never private). A handle counts as carried, so a handle typed without its `@` is never
 * "corrected" into another word.
 */
export const ACCOUNT_VOCABULARY: Vocabulary = {
  fields: unweighted(ACCOUNT_TEXT_FIELDS),
  filter: accountSearchFilter({ filter: and([]) }),
  stemmed: unweighted(ACCOUNT_STEMMED_TEXT_FIELDS),
};

/** A correction, with the most documents of one text field that carry it (BM25's statistics). */
export interface IndexedCorrection extends Correction {
  docFreq: number;
}

/**
 * The closest indexed word to each of `words` under `policy` (src/engine/spelling.ts), from the
 * engine's term suggester (in the core build, unlike the phrase suggester's collate, which needs
 * the mustache module): per text field, candidates the field holds in more documents than the word
 * (`suggest_mode: popular`, so, for a word no post carries, any), the policy's closest few at its
 * least similarity. Then one count of the
 * servable posts carrying each word and each candidate in any text field (a `filters` aggregation),
 * which is what decides: the suggester's frequencies are per field and count deleted copies of
 * updated posts until a merge drops them, so whether a word of one post passed for a word of two
 * would turn on the engine's merges. The words' own counts come with the candidates, so a silent
 * correction of words every document here carries ends after one request; otherwise the
 * candidates are counted in a second. Engine failures are translated.
 */
export async function closestWords(
  client: Client,
  index: string,
  words: readonly string[],
  policy: CorrectionPolicy,
  language: string,
  vocabulary: Vocabulary = POST_VOCABULARY,
): Promise<Map<string, IndexedCorrection>> {
  // Bounded whoever asks: the counts below hold a filter per word and per candidate.
  const distinct = [...new Set(words)].slice(0, MAX_CORRECTED_WORDS);
  const out = new Map<string, IndexedCorrection>();
  if (distinct.length === 0) return out;
  const { found, counts } = await candidates(client, index, distinct, policy, language, vocabulary);
  if (policy.replaces === 'unknown' && distinct.every((word) => (counts.get(word) ?? 0) > 0)) return out;
  const unknown = [...new Set([...found.values()].flatMap((c) => [...c.keys()]))].filter((w) => !counts.has(w));
  for (const [word, count] of await carrierCounts(client, index, unknown, vocabulary, language))
    counts.set(word, count);
  for (const word of distinct) {
    const posts = counts.get(word) ?? 0;
    if (policy.replaces === 'unknown' && posts > 0) continue;
    const best = [...(found.get(word) ?? [])]
      .map(([candidate, { score, docFreq }]) => ({
        word: candidate,
        score,
        docFreq,
        posts: counts.get(candidate) ?? 0,
      }))
      .filter((c) => c.posts >= policy.minPosts && c.posts > posts)
      .sort((a, b) => b.score - a.score || b.posts - a.posts || (a.word < b.word ? -1 : 1))[0];
    if (best) out.set(word, { word: best.word, posts: best.posts, score: best.score, docFreq: best.docFreq });
  }
  return out;
}

/**
 * Per word, its candidates (the best similarity score, the fewer edits the higher, and document
 * frequency), and the documents carrying each word, in one request.
 */
async function candidates(
  client: Client,
  index: string,
  words: readonly string[],
  policy: CorrectionPolicy,
  language: string,
  vocabulary: Vocabulary,
): Promise<{ found: Map<string, Map<string, { score: number; docFreq: number }>>; counts: Map<string, number> }> {
  const response = await engineCall(() =>
    client.search<unknown, CountAggregations>({
      index,
      track_total_hits: false,
      suggest: termSuggestions(words, policy, vocabulary),
      ...COMPLETE_RESULTS,
      ...countsRequest(words, vocabulary, language),
    }),
  );
  const scored = suggestedWords(words, response.suggest, language);
  return { found: scored, counts: carriedCounts(words, response.aggregations) };
}

/**
 * The term suggester asked about `words` in each of `vocabulary`'s fields under `policy`: per field,
 * the policy's closest few candidates at its least similarity that the field holds in more
 * documents than the word (`suggest_mode: popular`; the engine also counts `min_doc_freq` 1 as a
 * word's own frequency there, so a candidate needs two documents of the field), or, `anyFrequency`,
 * any the field holds (`missing`, for words no document carries).
 */
function termSuggestions(
  words: readonly string[],
  policy: CorrectionPolicy,
  vocabulary: Vocabulary,
  anyFrequency = false,
): Record<string, estypes.SearchFieldSuggester> {
  // `accuracy` (Lucene's DirectSpellChecker's) is accepted by the engine, though the client's types
  // omit it: built apart from the literal typed as the client's, it passes as a property the type
  // does not name.
  const term = (field: string) => {
    const options = {
      field,
      suggest_mode: anyFrequency ? ('missing' as const) : ('popular' as const),
      accuracy: policy.accuracy,
      size: policy.candidates,
      max_edits: 2,
      prefix_length: 1,
      min_word_length: 4,
      // The least the engine takes: the count of the documents a search can return decides (a
      // field's own frequency would drop a word whose documents carry it in different fields, and
      // whether it did would turn on deleted copies a merge had not yet dropped). In `popular` mode
      // the engine reads 1 as the word's own frequency, so a candidate one document of a field
      // holds is not proposed (checked on 9.4.3, 2026-12-04): a corpus's one-off slip ("sourdogh")
      // never stands in for a word many carry.
      min_doc_freq: anyFrequency ? 0 : 1,
      sort: 'score' as const,
    };
    return options;
  };
  const text = words.join(' ');
  return Object.fromEntries(vocabulary.fields.map((field) => [field, { text, term: term(field) }]));
}

/** Per word, the candidates a {@link termSuggestions} answer names for it (never itself, never a word no correction may be). */
function suggestedWords(
  words: readonly string[],
  suggest: estypes.SearchResponse['suggest'],
  language: string,
): Map<string, Map<string, { score: number; docFreq: number }>> {
  const scored = new Map(words.map((w) => [w, new Map<string, { score: number; docFreq: number }>()]));
  for (const entries of Object.values(suggest ?? {})) {
    for (const entry of entries) {
      const best = scored.get(entry.text);
      for (const option of best ? termOptions(entry) : []) {
        if (option.text === entry.text || !isCorrectable(option.text, language)) continue;
        const known = best!.get(option.text);
        best!.set(option.text, {
          score: Math.max(known?.score ?? 0, option.score),
          docFreq: Math.max(known?.docFreq ?? 0, option.freq),
        });
      }
    }
  }
  return scored;
}

/** Keyed filters (an object of filters, as asked) answer keyed buckets. */
export type CountAggregations = { words?: { buckets?: Record<string, { doc_count: number }> } };

/**
 * An aggregation that counts the matches of a search carrying each of `words` in any of
 * `vocabulary`'s fields (or its stem, in `language`, in the stemmed ones), read by
 * {@link carriedCounts}: beside a search whose matches hold every document carrying a word, it
 * says which words no document carries without a request of its own.
 */
export function carrierAggregation(words: readonly string[], vocabulary: Vocabulary, language: string) {
  const exact = (word: string, fields: readonly string[]): estypes.QueryDslQueryContainer => ({
    multi_match: { query: word, fields: [...fields], type: 'best_fields', operator: 'and' },
  });
  const carries = (word: string): estypes.QueryDslQueryContainer => {
    const stem = vocabulary.stemmed ? analyzeIn(word, language) : '';
    return stem === ''
      ? exact(word, vocabulary.fields)
      : { bool: { should: [exact(word, vocabulary.fields), exact(stem, vocabulary.stemmed!)] } };
  };
  return {
    carries,
    aggs: { words: { filters: { filters: Object.fromEntries(words.map((word, i) => [`w${i}`, carries(word)])) } } },
  };
}

/** Each of `words` with its count from a {@link carrierAggregation}'s answer. */
export function carriedCounts(
  words: readonly string[],
  aggregations: CountAggregations | undefined,
): Map<string, number> {
  const keyed = aggregations?.words?.buckets ?? {};
  return new Map(words.map((word, i) => [word, keyed[`w${i}`]?.doc_count ?? 0]));
}

/** A request's body that counts the documents of `vocabulary` carrying each word ({@link carrierAggregation}). */
function countsRequest(words: readonly string[], vocabulary: Vocabulary, language: string) {
  const { carries, aggs } = carrierAggregation(words, vocabulary, language);
  return {
    size: 0,
    query: { bool: { filter: [...vocabulary.filter, { bool: { should: words.map(carries) } }] } },
    aggs,
  };
}

/** The documents of `vocabulary` carrying each word in any of its fields, in one request (none for no word). */
export async function carrierCounts(
  client: Client,
  index: string,
  words: readonly string[],
  vocabulary: Vocabulary,
  language: string,
): Promise<Map<string, number>> {
  if (words.length === 0) return new Map();
  const response = await engineCall(() =>
    client.search<unknown, CountAggregations>({
      index,
      track_total_hits: false,
      ...COMPLETE_RESULTS,
      ...countsRequest(words, vocabulary, language),
    }),
  );
  return carriedCounts(words, response.aggregations);
}

/**
 * The documents of `vocabulary` carrying each of `words`, and each of `pairs` together, and which
 * of `reach` lie within `policy`'s reach of an indexed word, in one request (a `filters`
 * aggregation and the term suggester; none for nothing asked): what a correction's agreement with
 * the rest of its query is judged by (src/text/correctable-words.ts, agreeingCorrections).
 */
export async function wordCounts(
  client: Client,
  index: string,
  { words, pairs, reach }: AgreementQuestions,
  policy: CorrectionPolicy,
  vocabulary: Vocabulary,
  language: string,
): Promise<WordCounts> {
  if (words.length === 0 && pairs.length === 0) return { carried: new Map(), together: new Map(), near: new Set() };
  const { carries } = carrierAggregation([], vocabulary, language);
  const asked = [...new Set([...words, ...pairs.flat()])];
  const filters: Record<string, estypes.QueryDslQueryContainer> = {};
  words.forEach((word, i) => (filters[`w${i}`] = carries(word)));
  pairs.forEach(([a, b], i) => (filters[`p${i}`] = { bool: { filter: [carries(a), carries(b)] } }));
  const response = await engineCall(() =>
    client.search<unknown, CountAggregations>({
      index,
      track_total_hits: false,
      ...COMPLETE_RESULTS,
      size: 0,
      // Every document carrying an asked word, and only those: the counts are exact, and the
      // filters read no more than the words' own documents.
      query: { bool: { filter: [...vocabulary.filter, { bool: { should: asked.map(carries) } }] } },
      aggs: { words: { filters: { filters } } },
      ...(reach.length > 0 && { suggest: termSuggestions(reach, policy, vocabulary, true) }),
    }),
  );
  const keyed = response.aggregations?.words?.buckets ?? {};
  const count = (key: string) => keyed[key]?.doc_count ?? 0;
  const suggested = suggestedWords(reach, response.suggest, language);
  return {
    carried: new Map(words.map((word, i) => [word, count(`w${i}`)])),
    together: new Map(pairs.map(([a, b], i) => [pairKey(a, b), count(`p${i}`)])),
    near: new Set(reach.filter((word) => (suggested.get(word)?.size ?? 0) > 0)),
  };
}

/** The engine's spelling corrector on an index's read alias and the vocabulary its searches read. */
export function createSpellingCorrector(deps: {
  client: Client;
  index: string;
  vocabulary: Vocabulary;
}): SpellingCorrector {
  return {
    closest: (words, policy, language) =>
      closestWords(deps.client, deps.index, words, policy, language, deps.vocabulary),
    counts: (asked, policy, language) => wordCounts(deps.client, deps.index, asked, policy, deps.vocabulary, language),
  };
}
