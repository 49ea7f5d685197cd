import type { Client, estypes } from '@elastic/elasticsearch';
import { isBareWord, queryEntities } from '../../../query/entities.ts';
import { informationOf, type TermStatistics } from '../../../query/term-information.ts';
import { correctableWords, correctQuery } from '../../../text/correctable-words.ts';
import { holdsEnglishWord } from '../../../text/english-words.ts';
import { analyzeIn, analyzeQuery, holdsUnspacedScript } from '../../../text/languages.ts';
import { POST_STEMMED_FIELDS, POST_TEXT_FIELDS } from './post-query.ts';
import { SILENT_CORRECTION } from '../../spelling.ts';
import { closestWords, POST_WORDS, wordCounts } from './spelling.ts';

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

/**
 * The content words of `query` (function words out, src/text/function-words.ts), distinct, with
 * their English stems (a word of an unspaced script: its segmented token); null when it has none.
 */
export function queryTerms(query: string): QueryTerms | null {
  const words = [...new Set(analyzeQuery(query).content.split(' ').filter(Boolean))].slice(0, MAX_QUERY_TERMS);
  if (words.length === 0) return null;
  return { words, stems: words.map((w) => analyzeIn(w, 'en')) };
}

/**
 * One named clause per content word, for the post filter beside the text match (postSearchProbes):
 * a hit's `matched_queries` then names the words it carries, on any text field, as written or
 * stemmed, and with `include_named_queries_score` each word's own score in it (the related posts'
 * path reads them, hybrid-windows.ts). A post filter scores nothing, so ranking and the engine's
 * pruning are unchanged. A word of an unspaced script is a phrase on the exact fields, which index
 * those scripts character by character (post-query.ts), and its segmented token on the stemmed ones.
 */
export function termProbes(terms: QueryTerms): estypes.QueryDslQueryContainer[] {
  return terms.words.map((word, i) => ({
    bool: {
      should: [
        holdsUnspacedScript(word)
          ? { multi_match: { query: word, type: 'phrase', fields: TEXT_FIELDS } }
          : { multi_match: { query: word, fields: TEXT_FIELDS } },
        ...(terms.stems[i] ? [{ multi_match: { query: terms.stems[i], fields: STEMMED_FIELDS } }] : []),
      ],
      // Not 0: with `include_named_queries_score` the hit reports this clause's own score.
      boost: 1,
      _name: `${NAME_PREFIX}${i}`,
    },
  }));
}

/** The query's words a hit carries (indices into them), from its named probes (termProbes). */
export function hitWords(hit: { matched_queries?: string[] | Record<string, number> }): number[] {
  const matched = hit.matched_queries;
  const names = !matched ? [] : Array.isArray(matched) ? matched : Object.keys(matched);
  return names.filter(isProbe).map(probeIndex);
}

const isProbe = (name: string) => name.startsWith(NAME_PREFIX);
const probeIndex = (name: string) => Number(name.slice(NAME_PREFIX.length));

/** Each probed word's score in a hit (index → score), when the search asked for them (`include_named_queries_score`). */
export function hitWordScores(hit: {
  matched_queries?: string[] | Record<string, number>;
}): Map<number, number> | null {
  const matched = hit.matched_queries;
  if (!matched || Array.isArray(matched)) return null;
  const out = new Map<number, number>();
  for (const [name, score] of Object.entries(matched)) if (isProbe(name)) out.set(probeIndex(name), score);
  return out;
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
  /**
   * Whether no post carries any of the query's content words, exactly or stemmed, and none was
   * corrected to a word posts carry: its neighbours are all it can find (hybrid-windows.ts, the
   * unmatched floor). Absent: not known to be, as when the index could not answer.
   */
  unmatched?: boolean;
}

/**
 * The lexical side of a fused search's first page: the index's statistics of the query's content
 * words (one request), and, only when some word is in no post, its silent correction (spelling.ts,
 * two more) and the corrected text's words, a corrected word weighing what its posts make it weigh.
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
  // No post carries a word of it: the unmatched floor, unless the words are English a corpus lacks.
  const unknownAll = stats.unknown.length === terms.words.length && !holdsEnglishWord(terms.words.join(' '));
  const unmatched: LexicalPlan = { ...plain, unmatched: unknownAll };
  // Only a word no field carries, exactly or stemmed, is corrected; a failed lookup corrects nothing.
  const unknown = new Set(stats.unknown.map((i) => terms.words[i]!));
  const corrected = await correctQuery(
    query,
    language,
    {
      closest: (keys) => closestWords(client, index, keys, SILENT_CORRECTION, language),
      counts: (asked) => wordCounts(client, index, asked, SILENT_CORRECTION, POST_WORDS, language),
    },
    (key) => unknown.has(key),
  ).catch(() => null);
  if (!corrected) return unmatched;
  const { text } = corrected;
  const correctedTerms = queryTerms(text);
  if (!correctedTerms) return unmatched;
  const known = new Map(terms.words.map((w, i) => [w, stats.information[i]!]));
  // The information a correction weighs is BM25's own (its statistics count deleted copies too).
  for (const c of corrected.corrections.values())
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

/**
 * A post query ranked by its words alone (`SEARCH_RANKING=lexical`, no model, a sort), its words
 * no post carries corrected as a fused search's lexical side corrects them ({@link planLexicalSide}:
 * the index's statistics of its words, one request, only when a word may be misspelt; the suggester
 * only for a word no post carries).
 * Null when nothing is corrected, when the query is exact entities (a quote, `@handle`, `#tag`:
 * searched as typed; a bare word is corrected), or when the lookup fails (searched as typed).
 */
export async function correctedPostQuery(client: Client, index: string, query: string): Promise<string | null> {
  if (queryEntities(query).length > 0 && !isBareWord(query)) return null;
  const { language } = analyzeQuery(query);
  // No word that could be a misspelling (words of English never are): no lookup at all.
  if (correctableWords(query, language).length === 0) return null;
  const plan = await planLexicalSide(client, index, query, language).catch(() => null);
  return plan?.corrected === true ? plan.text : null;
}

/** The plan of a later page, from what its cursor carries (no request: every page searches alike). */
export function carriedPlan(
  query: string,
  carried: { corrected?: string; information?: readonly number[]; unmatched?: boolean },
): LexicalPlan {
  const text = carried.corrected ?? query;
  const terms = queryTerms(text);
  const information = terms && carried.information?.length === terms.words.length ? [...carried.information] : null;
  return {
    text,
    terms,
    information,
    corrected: carried.corrected !== undefined,
    ...(carried.unmatched === true && { unmatched: true }),
  };
}

/**
 * Whether the lexical side of a plan carries word probes (termProbes): it has words and their
 * information, and no exact entity (entities rank as they always did).
 */
export function probing(plan: LexicalPlan): plan is LexicalPlan & { terms: QueryTerms; information: number[] } {
  return (
    plan.terms !== null &&
    plan.information !== null &&
    (queryEntities(plan.text).length === 0 || (isBareWord(plan.text) && plan.terms.words.length > 1))
  );
}

/** The information the fusion weighs the lexical hits' coverage by: null unless the hits carry probes. */
export function probedInformation(plan: LexicalPlan): number[] | null {
  return probing(plan) ? plan.information : null;
}
