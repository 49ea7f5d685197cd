import { distance } from 'fastest-levenshtein';
import type { SpellingCorrector } from '../../engine/spelling.ts';
import { ENGLISH_STOP } from '../../text/analysis.ts';

/** A post search that finds fewer posts than this may carry a `suggested_query`. */
export const SUGGEST_BELOW = 3;
/** Words of one query looked up at most (a long query's tail is left as typed). */
const MAX_WORDS = 8;
/** Shorter words are left as typed: two edits make anything of them. */
const MIN_WORD_LENGTH = 4;

/** A word as the engine's `standard` tokenizer reads it: letters, marks, digits, inner apostrophes. */
const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*/gu;
/** Exact entities (src/query/entities.ts): a hashtag or handle is a name, not a misspelt word. */
const ENTITY = /[#@][\p{L}\p{M}\p{N}_.]+/gu;
/** Scripts written without spaces, whose words the standard tokenizer splits into characters. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;

/**
 * Edits a correction may make: one in a word of up to five letters, two beyond (Lucene's `AUTO`
 * fuzziness); two edits turn a short word into another one ("wplkj" into "walks").
 */
const maxEdits = (word: string) => ([...word].length <= 5 ? 1 : 2);

/** One word of the query that may be corrected: where it is, and how the index reads it. */
interface Typed {
  start: number;
  end: number;
  text: string;
  key: string;
}

/** The words worth a lookup: not entities, not numbers, not stop words, long enough, spaced scripts. */
export function correctableWords(query: string): Typed[] {
  const masked = query.replace(ENTITY, (m) => ' '.repeat(m.length));
  const out: Typed[] = [];
  for (const match of masked.matchAll(WORD)) {
    const text = match[0];
    const key = text.toLowerCase().replace(/’/g, "'");
    if ([...key].length < MIN_WORD_LENGTH || /\p{N}/u.test(key) || UNSPACED.test(key) || ENGLISH_STOP.has(key))
      continue;
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

/**
 * "Did you mean": the query with its misspelt words replaced by the indexed word most like each
 * that more posts carry (the engine's term suggester, checked by counting posts), the rest of the
 * text as typed; null when no word has such a correction. A word is misspelt for this purpose
 * when the index holds a close word that more posts carry: a word that finds posts is kept unless
 * a neighbour finds more, so a correction never narrows what a word finds.
 *
 * Kept self-contained (a corrector role and this function) so that other ranking code can ask
 * the same question of a query's words.
 */
export function createDidYouMean(deps: { corrector: SpellingCorrector }): (query: string) => Promise<string | null> {
  return async (query) => {
    const words = correctableWords(query);
    const keys = [...new Set(words.map((w) => w.key))].slice(0, MAX_WORDS);
    if (keys.length === 0) return null;
    const corrections = await deps.corrector.corrections(keys);
    let out = '';
    let at = 0;
    let changed = false;
    for (const word of words) {
      const best = corrections.get(word.key)?.candidates.find((c) => distance(word.key, c.word) <= maxEdits(word.key));
      if (!best) continue;
      out += query.slice(at, word.start) + inCaseOf(word.text, best.word);
      at = word.end;
      changed = true;
    }
    return changed ? out + query.slice(at) : null;
  };
}
