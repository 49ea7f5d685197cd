import { deu, eng, fra, ita, jpn, por, spa, tha, zho } from 'stopword';
import { ENGLISH_STOP } from './analysis.ts';
import { SNOWBALL_PORTUGUESE, SNOWBALL_SPANISH } from './snowball-stop-words.ts';

/**
 * Function words of queries (how, do, I, get, what, should, any; は, を, か), per language: words
 * that carry little of what a query asks, and that match posts about anything ("how to get rid of
 * acne scars" retrieved beat-making posts on "get"). From the `stopword` package's lists (MIT,
 * compiled per language from maintained stop lists): English 108 words (with Lucene's 33, 112),
 * French 168, German 621, Italian 279 (Snowball's, whole), Japanese 109 (and its personal pronouns,
 * below); Spanish and Portuguese with Snowball's lists, of which the package's (59, 106) are
 * truncated subsets: 308 and 203 (snowball-stop-words.ts).
 *
 * Queries only: documents keep every word (their stemmed fields drop Lucene's 33 English stop
 * words, as before), so a query that is nothing but function words still finds its words.
 */
/**
 * Japanese personal pronouns, which the package's Japanese list (particles, auxiliaries, formal
 * connectives) lacks while every other list holds its language's (I, my, we; mio, mia; mein, meine;
 * je, ma): "私のゲームルーティン" asks about games, not about "I".
 */
const JAPANESE_PRONOUNS = ['私', 'わたし', '僕', 'ぼく', '俺', 'あなた', '彼', '彼女', '我々'];

const LISTS: Readonly<Record<string, readonly string[]>> = {
  // With Lucene's English stop set, which the documents' stemmed fields already drop ("not", "such").
  en: [...eng, ...ENGLISH_STOP],
  es: [...spa, ...SNOWBALL_SPANISH],
  pt: [...por, ...SNOWBALL_PORTUGUESE],
  fr: fra,
  de: deu,
  it: ita,
  ja: [...jpn, ...JAPANESE_PRONOUNS],
  zh: zho,
  th: tha,
};

const SETS = new Map(Object.entries(LISTS).map(([language, words]) => [language, new Set(words)]));

/** The function words of `language` (a primary subtag); English's for a language without a list. */
export function functionWordsOf(language: string): ReadonlySet<string> {
  return SETS.get(language) ?? SETS.get('en')!;
}

/**
 * `words` without the function words of `language`; `words` unchanged when nothing else is left
 * (a query of function words only, or a single word, searches for what it says).
 */
export function contentWords(words: readonly string[], language: string): readonly string[] {
  const stop = functionWordsOf(language);
  const content = words.filter((w) => !stop.has(w.toLowerCase()) && !LONE_LETTER.test(w));
  return content.length > 0 ? content : words;
}

/** One letter of an alphabet (Latin, Greek, Cyrillic), no word of its own: "k" of "K-beauty". */
const LONE_LETTER = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]$/u;
