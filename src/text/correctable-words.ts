import { isEnglishWord } from './english-words.ts';
import { functionWordsOf } from './function-words.ts';
import { holdsUnspacedScript } from './languages.ts';

/**
 * Which words of a query a spelling correction may touch, and the query with its corrections in
 * place: the one rule shared by the lexical side's silent correction
 * (src/engine/elasticsearch/queries/query-terms.ts) and "did you mean"
 * (src/services/search/did-you-mean.ts); the engine's corrector (src/engine/spelling.ts) finds
 * the corrections under each one's policy.
 */

/** At most this many distinct words of one query are looked up (a long query's tail is left as typed). */
export const MAX_CORRECTED_WORDS = 8;
/** Shorter words are left as typed: an edit makes anything of them. */
const MIN_LENGTH = 4;

/** A word as the engine's `standard` tokenizer reads it: letters, marks, digits, inner apostrophes. */
const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*/gu;
/** Exact entities (src/query/entities.ts): a hashtag or handle is a name, not a misspelt word. */
const ENTITY = /[#@][\p{L}\p{M}\p{N}_.]+/gu;
/** Letters and marks only (inner apostrophes too): a number or code is no misspelling. */
const LETTERS = /^[\p{L}\p{M}]+(?:'[\p{L}\p{M}]+)*$/u;

/** One word of a query that may be corrected: where it is, and how the index reads it (its key). */
export interface CorrectableWord {
  start: number;
  end: number;
  text: string;
  key: string;
}

/** How the index reads a word: lower-cased, curly apostrophes straight. */
const keyOf = (word: string) => word.toLowerCase().replace(/’/g, "'");

/**
 * Whether a word (a key) may be corrected, or be a correction: letters only, at least four, of a
 * spaced script, and no function word of English or of `language` (a query's function words are
 * left out of its content, src/text/function-words.ts).
 */
export function isCorrectable(key: string, language: string): boolean {
  return (
    [...key].length >= MIN_LENGTH &&
    LETTERS.test(key) &&
    !holdsUnspacedScript(key) &&
    !functionWordsOf('en').has(key) &&
    !functionWordsOf(language).has(key)
  );
}

/**
 * The words of `query` worth a lookup, in order: not entities, numbers, function words or short
 * words, nor words of English (english-words.ts), which are no misspellings whatever the corpus
 * holds; a correction may be one.
 */
export function correctableWords(query: string, language: string): CorrectableWord[] {
  return queryWords(query).filter((w) => isCorrectable(w.key, language) && !isEnglishWord(w.key));
}

/** Every word of `query` but its entities, where it is and how the index reads it. */
function queryWords(query: string): CorrectableWord[] {
  const masked = query.replace(ENTITY, (m) => ' '.repeat(m.length));
  return [...masked.matchAll(WORD)].map((match) => {
    const text = match[0];
    return { start: match.index, end: match.index + text.length, text, key: keyOf(text) };
  });
}

/** The correction written as the word was: all capitals, a capital first, or as indexed. */
function inCaseOf(typed: string, correction: string): string {
  if (typed.length > 1 && typed === typed.toUpperCase() && typed !== typed.toLowerCase())
    return correction.toUpperCase();
  const first = typed.charAt(0);
  if (first !== first.toLowerCase()) return correction.charAt(0).toUpperCase() + correction.slice(1);
  return correction;
}

/** `query` with each word whose key has a correction replaced by it, in the word's case; the rest as typed. */
export function withCorrections(
  query: string,
  words: readonly CorrectableWord[],
  corrections: ReadonlyMap<string, { word: string }>,
): string {
  let out = '';
  let at = 0;
  for (const word of words) {
    const correction = corrections.get(word.key);
    if (!correction) continue;
    out += query.slice(at, word.start) + inCaseOf(word.text, correction.word);
    at = word.end;
  }
  return out + query.slice(at);
}

/** At most this many other words of a query judge a correction ({@link agreementQuestions}). */
const MAX_CONTEXT_WORDS = 8;

/**
 * The content words of `query` as the index reads them (keys), distinct, in order: letters only
 * (no number or code), of a spaced script, no entity and no function word of English or of
 * `language`. The context a correction must agree with ({@link agreeingCorrections}).
 */
export function contentKeys(query: string, language: string): string[] {
  const content = queryWords(query)
    .map((w) => w.key)
    .filter((key) => LETTERS.test(key) && !holdsUnspacedScript(key))
    .filter((key) => !functionWordsOf('en').has(key) && !functionWordsOf(language).has(key));
  return [...new Set(content)];
}

/**
 * How many documents carry each word, and each pair of words together (keyed by {@link pairKey}),
 * and which words lie within a correction's reach of a word documents carry (a slip, not a word of
 * another language).
 */
export interface WordCounts {
  carried: ReadonlyMap<string, number>;
  together: ReadonlyMap<string, number>;
  near: ReadonlySet<string>;
}

/** The key of a pair of words in {@link WordCounts.together}. */
export const pairKey = (a: string, b: string): string => `${a}\u0000${b}`;

/** The query's content words (at most {@link MAX_CONTEXT_WORDS}) and the proposed corrections' words. */
function agreementWords(
  query: string,
  language: string,
  corrections: ReadonlyMap<string, { word: string }>,
): { typed: string[]; proposed: string[] } {
  return {
    typed: contentKeys(query, language).slice(0, MAX_CONTEXT_WORDS),
    proposed: [...new Set([...corrections.values()].map((c) => c.word))],
  };
}

/** What the engine counts for {@link agreeingCorrections}: its answer is a {@link WordCounts}. */
export interface AgreementQuestions {
  /** Words whose documents are counted. */
  words: string[];
  /** Pairs of words whose shared documents are counted. */
  pairs: Array<[string, string]>;
  /** Words the engine says whether any indexed word lies within a correction's reach of (`near`). */
  reach: string[];
}

/**
 * What the engine is asked to judge corrections by ({@link agreeingCorrections}): the query's other
 * content words as typed and the proposed corrections, and each correction beside each of them.
 * Null when no correction has another word to agree with (a one-word query): nothing to ask.
 */
export function agreementQuestions(
  query: string,
  language: string,
  corrections: ReadonlyMap<string, { word: string }>,
): AgreementQuestions | null {
  const { typed, proposed } = agreementWords(query, language, corrections);
  const words = [...new Set([...typed, ...proposed])];
  const pairs: Array<[string, string]> = [];
  for (const [key, { word }] of corrections)
    for (const other of words) if (other !== word && other !== key) pairs.push([word, other]);
  // Only a word as typed that is no word of English can veto (agreeingCorrections).
  const reach = typed.filter((word) => !isEnglishWord(word) && !proposed.includes(word));
  return pairs.length === 0 ? null : { words, pairs, reach };
}

/**
 * The corrections the rest of the query bears out, as the phrase suggester's `collate` keeps only
 * corrections some document bears out. The closest first (by the suggester's score, then in
 * query order), each against the other content words, as typed or as a correction already kept reads
 * them: it must share a document with one of them that documents carry. When none is carried, the
 * correction stands unless another word lies outside the corpus's words altogether: not carried,
 * not English (SCOWL, english-words.ts: a word a corpus may simply lack) and not within a
 * correction's reach of an indexed word (a slip of its own, "brekfast"). The query is then likely
 * in a language the corpus lacks, and a correction into the corpus's words would change what it
 * asks ("brot backen", German for baking bread, was searched as "brow backen" and answered with
 * make-up posts). A one-word query keeps its correction: it has nothing to agree with.
 */
export function agreeingCorrections<C extends { word: string; score: number }>(
  query: string,
  language: string,
  corrections: ReadonlyMap<string, C>,
  counts: WordCounts,
): Map<string, C> {
  const { typed } = agreementWords(query, language, corrections);
  const order = [...corrections].sort(([, a], [, b]) => b.score - a.score);
  const kept = new Map<string, C>();
  for (const [key, correction] of order) {
    const context = [
      ...new Set(typed.filter((other) => other !== key).map((other) => kept.get(other)?.word ?? other)),
    ].filter((other) => other !== correction.word);
    const carried = context.filter((other) => (counts.carried.get(other) ?? 0) > 0);
    const agrees =
      carried.length > 0
        ? carried.some((other) => (counts.together.get(pairKey(correction.word, other)) ?? 0) > 0)
        : context.every((other) => isEnglishWord(other) || counts.near.has(other));
    if (agrees) kept.set(key, correction);
  }
  return new Map([...corrections].filter(([key]) => kept.has(key)));
}

/**
 * `query` corrected: its correctable words (those `only` keeps), at most
 * {@link MAX_CORRECTED_WORDS} distinct, asked of `closest` (the engine's corrector under a
 * policy), then kept where the rest of the query agrees (`counts`, the engine's counts of the
 * {@link agreementQuestions}; {@link agreeingCorrections}); null when none has a correction.
 */
export async function correctQuery<C extends { word: string; score: number }>(
  query: string,
  language: string,
  engine: {
    closest: (keys: string[]) => Promise<ReadonlyMap<string, C>>;
    counts: (asked: AgreementQuestions) => Promise<WordCounts>;
  },
  only: (key: string) => boolean = () => true,
): Promise<{ text: string; corrections: ReadonlyMap<string, C> } | null> {
  const words = correctableWords(query, language).filter((w) => only(w.key));
  const keys = [...new Set(words.map((w) => w.key))].slice(0, MAX_CORRECTED_WORDS);
  if (keys.length === 0) return null;
  const proposed = await engine.closest(keys);
  if (proposed.size === 0) return null;
  const asked = agreementQuestions(query, language, proposed);
  const corrections = asked ? agreeingCorrections(query, language, proposed, await engine.counts(asked)) : proposed;
  if (corrections.size === 0) return null;
  const text = withCorrections(query, words, corrections);
  return text === query ? null : { text, corrections };
}
