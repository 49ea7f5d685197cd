import type { Client, estypes } from '@elastic/elasticsearch';
import { queryEntities } from '../../../query/entities.ts';
import { coverageOf, informationOf, type TermStatistics } from '../../../query/term-information.ts';
import { functionWordsOf } from '../../../text/function-words.ts';
import { analyzeIn, analyzeQuery, unspacedWords } from '../../../text/languages.ts';
import { POST_STEMMED_FIELDS, POST_TEXT_FIELDS } from './post-query.ts';
import { termOptions } from '../response-values.ts';

/**
 * The content words of a fused search's query as the corpus sees them (bench/relevance.md,
 * "Questions phrased in the asker's own words"): each word's information from the posts index's
 * own term statistics (src/query/term-information.ts), which words of the query each lexical hit
 * carries (named clauses of no weight, read from the hit's `matched_queries`), and a correction
 * for a word no post carries that the index's vocabulary has within an edit or two ("soudough" →
 * "sourdough"): a misspelt word is neither nonsense nor silence.
 */

/** The query's distinct content words and their English stems (a stop word has none). */
export interface QueryTerms {
  words: string[];
  stems: string[];
}

/** At most this many content words take part (as many as the cursor carries weights for). */
export const MAX_QUERY_TERMS = 32;
const NAME_PREFIX = 'term:';
const fieldsOf = (weighted: readonly string[]) => weighted.map((f) => f.split('^')[0]!);
const TEXT_FIELDS = fieldsOf(POST_TEXT_FIELDS);
const STEMMED_FIELDS = fieldsOf(POST_STEMMED_FIELDS);
/** The fields a word's information is read from: the caption and the enrichment's summary, what the lexical side weighs most. */
const INFORMATION_FIELDS: ReadonlyArray<readonly [exact: string, stemmed: string]> = [
  ['caption', 'caption_stemmed'],
  ['content_text', 'content_text_stemmed'],
];
/** Fields suggesting a correction: the words creators and the enrichment write. */
const SUGGESTING_FIELDS = ['caption', 'content_text'];

/**
 * The content words of `query` (function words out, src/text/function-words.ts), distinct, with
 * their English stems; null when it has none, or words of an unspaced script (their posts are
 * found by phrases, and the model does not read them).
 */
export function queryTerms(query: string): QueryTerms | null {
  if (unspacedWords(query).length > 0) return null;
  const words = [...new Set(analyzeQuery(query).content.split(' ').filter(Boolean))].slice(0, MAX_QUERY_TERMS);
  if (words.length === 0) return null;
  return { words, stems: words.map((w) => analyzeIn(w, 'en')) };
}

/**
 * One named clause of no weight per content word, for a bool query's `should` beside the text
 * match: a hit's `matched_queries` then names the words it carries, on any text field, as written
 * or stemmed. Scores and the engine's pruning are unchanged (a clause of weight 0 never makes a
 * hit competitive).
 */
export function termProbes(terms: QueryTerms): estypes.QueryDslQueryContainer[] {
  return terms.words.map((word, i) => ({
    bool: {
      should: [
        { multi_match: { query: word, fields: TEXT_FIELDS } },
        ...(terms.stems[i] ? [{ multi_match: { query: terms.stems[i], fields: STEMMED_FIELDS } }] : []),
      ],
      boost: 0,
      _name: `${NAME_PREFIX}${i}`,
    },
  }));
}

/** The share of the query's information a hit carries, from its named probes (termProbes). */
export function hitCoverage(
  hit: { matched_queries?: string[] | Record<string, number> },
  information: readonly number[],
): number {
  const matched = hit.matched_queries;
  const names = !matched ? [] : Array.isArray(matched) ? matched : Object.keys(matched);
  return coverageOf(
    information,
    names.filter((n) => n.startsWith(NAME_PREFIX)).map((n) => Number(n.slice(NAME_PREFIX.length))),
  );
}

/** What the index says of a query's words: each one's information, and which no post carries. */
export interface TermsInIndex {
  information: number[];
  /** Indices of words no text field of any post carries. */
  unknown: number[];
  /** Documents of the caption field, to weigh a corrected word. */
  docCount: number;
}

type TermVectors = Record<
  string,
  { field_statistics?: { doc_count?: number }; terms?: Record<string, { doc_freq?: number }> }
>;

/**
 * Each word's information in the posts index (its document frequency in the caption and the
 * enrichment's summary, as written or stemmed, whichever is highest) and the words no text field
 * carries at all, from one `_termvectors` request on an artificial document (the terms
 * dictionary's statistics, no search). Routed to one fixed shard, so every request reads the same
 * statistics. Null when the index cannot answer (during a rebuild the alias may name two indices):
 * the search then ranks as before.
 */
export async function termsInIndex(client: Client, index: string, terms: QueryTerms): Promise<TermsInIndex | null> {
  const stems = terms.stems.filter(Boolean).join(' ');
  const doc: Record<string, string> = {};
  for (const field of TEXT_FIELDS) doc[field] = terms.words.join(' ');
  for (const field of STEMMED_FIELDS) doc[field] = stems;
  let vectors: TermVectors;
  try {
    const response = await client.termvectors({
      index,
      doc,
      fields: [...TEXT_FIELDS, ...STEMMED_FIELDS],
      term_statistics: true,
      field_statistics: true,
      positions: false,
      offsets: false,
      payloads: false,
      routing: 'query-terms',
    });
    vectors = response.term_vectors ?? {};
  } catch {
    return null;
  }
  const docFreq = (field: string, term: string | undefined) =>
    term ? (vectors[field]?.terms?.[term]?.doc_freq ?? 0) : 0;
  const docCount = (field: string) => vectors[field]?.field_statistics?.doc_count ?? 0;
  const information = terms.words.map((word, i) => {
    // The most documents the word is in, over the fields that weigh most: its most common use.
    let best: TermStatistics = { docFreq: 0, docCount: Math.max(...INFORMATION_FIELDS.map(([f]) => docCount(f))) };
    for (const [exact, stemmed] of INFORMATION_FIELDS) {
      for (const [field, term] of [
        [exact, word],
        [stemmed, terms.stems[i]],
      ] as const) {
        const df = docFreq(field, term);
        if (df > best.docFreq) best = { docFreq: df, docCount: Math.max(docCount(field), df) };
      }
    }
    return informationOf(best);
  });
  const unknown = terms.words.flatMap((word, i) =>
    TEXT_FIELDS.every((f) => docFreq(f, word) === 0) && STEMMED_FIELDS.every((f) => docFreq(f, terms.stems[i]) === 0)
      ? [i]
      : [],
  );
  return { information, unknown, docCount: docCount('caption') };
}

/** A word the suggester may correct: letters only, at least this long (shorter ones are too close to too many). */
const CORRECTABLE = /^\p{L}{4,}$/u;
/**
 * A correction's least similarity to the word, the suggester's `accuracy` (1 − edits / length):
 * one edit in a word of four letters or more, two from eight letters on.
 */
const CORRECTION_ACCURACY = 0.75;
/** A correction is a word at least this many posts carry: a word of one post may be a misspelling itself. */
const CORRECTION_MIN_POSTS = 2;

/** A correction of one unknown word: the index's word and how many posts carry it. */
export interface Correction {
  word: string;
  docFreq: number;
}

/**
 * Corrections for the words no post carries (`unknown`, from termsInIndex), from the engine's term
 * suggester over the caption and the enrichment's summary: the closest word within
 * {@link CORRECTION_ACCURACY} that at least {@link CORRECTION_MIN_POSTS} live posts carry (checked
 * by counting them), the more similar first, then the more common. Never a function word, and never for a word of fewer than
 * four letters. Empty when the engine cannot answer.
 */
export async function corrections(
  client: Client,
  index: string,
  words: readonly string[],
  language: string,
): Promise<Map<string, Correction>> {
  const candidates = words.filter((w) => CORRECTABLE.test(w));
  const out = new Map<string, Correction>();
  if (candidates.length === 0) return out;
  const functionWords = functionWordsOf(language);
  const termSuggester = (field: string): estypes.SearchFieldSuggester => {
    // `accuracy` (Lucene's DirectSpellChecker's) is accepted by the engine, though the client's
    // types omit it: built apart from the literal typed as the client's, it passes as a property
    // the type does not name.
    const term = {
      field,
      suggest_mode: 'missing' as const,
      accuracy: CORRECTION_ACCURACY,
      min_doc_freq: CORRECTION_MIN_POSTS,
      min_word_length: 4,
      prefix_length: 1,
      max_edits: 2,
      size: 1,
      sort: 'score' as const,
    };
    return { term };
  };
  const suggest: estypes.SearchSuggester = {
    text: candidates.join(' '),
    ...Object.fromEntries(SUGGESTING_FIELDS.map((field) => [field, termSuggester(field)])),
  };
  let response: estypes.SearchResponse;
  try {
    response = await client.search({ index, size: 0, track_total_hits: false, suggest });
  } catch {
    return out;
  }
  const best = new Map<string, { word: string; docFreq: number; score: number }>();
  for (const field of SUGGESTING_FIELDS) {
    for (const entry of response.suggest?.[field] ?? []) {
      const option = termOptions(entry)[0];
      if (!option || !CORRECTABLE.test(option.text) || functionWords.has(option.text)) continue;
      const known = best.get(entry.text);
      if (!known || option.score > known.score || (option.score === known.score && option.freq > known.docFreq))
        best.set(entry.text, { word: option.text, docFreq: option.freq, score: option.score });
    }
  }
  // The suggester's frequencies count deleted copies of updated posts until a merge drops them
  // (a post re-indexed with its vector once counts twice), so a word of one post could pass for
  // a word of two, and whether it did would turn on the engine's merges: each correction is
  // checked against the live posts, in one request.
  const proposed = candidates.flatMap((word) => {
    const found = best.get(word);
    return found ? [{ word, correction: found.word, docFreq: found.docFreq }] : [];
  });
  if (proposed.length === 0) return out;
  let counts: estypes.MsearchResponse;
  try {
    counts = await client.msearch({
      searches: proposed.flatMap(({ correction }) => [
        { index },
        {
          size: 0,
          track_total_hits: CORRECTION_MIN_POSTS,
          query: { multi_match: { query: correction, fields: SUGGESTING_FIELDS, operator: 'and' } },
        },
      ]),
    });
  } catch {
    return out;
  }
  // The information a correction weighs is BM25's own (its statistics count the copies too).
  proposed.forEach(({ word, correction, docFreq }, i) => {
    const answer = counts.responses[i];
    if (!answer || 'error' in answer) return;
    const total = answer.hits.total;
    const live = typeof total === 'number' ? total : (total?.value ?? 0);
    if (live >= CORRECTION_MIN_POSTS) out.set(word, { word: correction, docFreq });
  });
  return out;
}

/** `query` with each corrected word in its place (whole words, any case). */
export function correctedQuery(query: string, corrected: ReadonlyMap<string, Correction>): string {
  let out = query;
  for (const [word, correction] of corrected) {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(
      new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])${escaped}(?![\\p{L}\\p{M}\\p{N}])`, 'giu'),
      correction.word,
    );
  }
  return out;
}

/**
 * What the lexical side of a fused search searches for: the query's text (its misspelt words
 * corrected), its content words, and each word's information. Without statistics (the index could
 * not answer) `information` is null and the search ranks as before.
 */
export interface LexicalPlan {
  text: string;
  terms: QueryTerms | null;
  information: number[] | null;
  /** Whether `text` corrects the query. */
  corrected: boolean;
}

/**
 * The lexical side of a fused search's first page: the index's statistics of the query's content
 * words (one request), and, only when some word is in no post, the suggester's corrections (one
 * more) and the corrected text's words, a corrected word weighing what its posts make it weigh.
 */
export async function planLexicalSide(
  client: Client,
  index: string,
  query: string,
  language: string,
): Promise<LexicalPlan> {
  const terms = queryTerms(query);
  const none: LexicalPlan = { text: query, terms, information: null, corrected: false };
  if (!terms) return none;
  const stats = await termsInIndex(client, index, terms);
  if (!stats) return none;
  const plain: LexicalPlan = { ...none, information: stats.information };
  if (stats.unknown.length === 0) return plain;
  const corrected = await corrections(
    client,
    index,
    stats.unknown.map((i) => terms.words[i]!),
    language,
  );
  if (corrected.size === 0) return plain;
  const text = correctedQuery(query, corrected);
  const correctedTerms = queryTerms(text);
  if (!correctedTerms) return plain;
  const known = new Map(terms.words.map((w, i) => [w, stats.information[i]!]));
  for (const c of corrected.values())
    known.set(c.word, informationOf({ docFreq: c.docFreq, docCount: stats.docCount }));
  // A word the correction brought in that the statistics did not weigh: as rare as a word can be.
  const rarest = informationOf({ docFreq: 0, docCount: stats.docCount });
  return {
    text,
    terms: correctedTerms,
    information: correctedTerms.words.map((w) => known.get(w) ?? rarest),
    corrected: true,
  };
}

/** The plan of a later page, from what its cursor carries (no request: every page searches alike). */
export function carriedPlan(
  query: string,
  carried: { corrected?: string; information?: readonly number[] },
): LexicalPlan {
  const text = carried.corrected ?? query;
  const terms = queryTerms(text);
  const information = terms && carried.information?.length === terms.words.length ? [...carried.information] : null;
  return { text, terms, information, corrected: carried.corrected !== undefined };
}

/**
 * Whether the lexical side of a plan carries word probes (termProbes): it has words and their
 * information, and no exact entity (entities rank as they always did).
 */
export function probing(plan: LexicalPlan): plan is LexicalPlan & { terms: QueryTerms; information: number[] } {
  return plan.terms !== null && plan.information !== null && queryEntities(plan.text).length === 0;
}

/** The information the fusion weighs the lexical hits' coverage by: null unless the hits carry probes. */
export function probedInformation(plan: LexicalPlan): number[] | null {
  return probing(plan) ? plan.information : null;
}
