import { isEnglishWord } from './english-words.ts';
import { functionWordsOf } from './function-words.ts';

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
/** Scripts written without spaces, whose words the standard tokenizer splits into characters. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;

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
    !UNSPACED.test(key) &&
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
  const masked = query.replace(ENTITY, (m) => ' '.repeat(m.length));
  const out: CorrectableWord[] = [];
  for (const match of masked.matchAll(WORD)) {
    const text = match[0];
    const key = keyOf(text);
    if (isCorrectable(key, language) && !isEnglishWord(key))
      out.push({ start: match.index, end: match.index + text.length, text, key });
  }
  return out;
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

/**
 * `query` corrected: its correctable words (those `only` keeps), at most
 * {@link MAX_CORRECTED_WORDS} distinct, asked of `closest` (the engine's corrector under a
 * policy); null when none has a correction.
 */
export async function correctQuery<C extends { word: string }>(
  query: string,
  language: string,
  closest: (keys: string[]) => Promise<ReadonlyMap<string, C>>,
  only: (key: string) => boolean = () => true,
): Promise<{ text: string; corrections: ReadonlyMap<string, C> } | null> {
  const words = correctableWords(query, language).filter((w) => only(w.key));
  const keys = [...new Set(words.map((w) => w.key))].slice(0, MAX_CORRECTED_WORDS);
  if (keys.length === 0) return null;
  const corrections = await closest(keys);
  if (corrections.size === 0) return null;
  const text = withCorrections(query, words, corrections);
  return text === query ? null : { text, corrections };
}
