import porter2 from 'wink-porter2-stemmer';
import { textMemo } from './text-memo.ts';

/**
 * Client-side text analysis for the stemmed search fields: the same function runs on documents
 * (at projection time) and on queries, so both sides always agree. Chosen by measurement
 * (bench/relevance.md, "Stemming and analyzer choice (SciFact, Elasticsearch directly)"): this
 * engine has no `english`/`stemmer` filters, and its `hunspell` dictionary merges far fewer
 * inflections (67.5% vs 93.7% of SciFact's singular/plural pairs) and is missing from the stock
 * Docker image, while a stemmer pinned in the application ranks the same everywhere.
 */

/** Lucene's English stop set (the same 33 words as Elasticsearch's `_english_`). */
export const ENGLISH_STOP: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

/** A run of letters, combining marks and digits, with inner apostrophes kept ("don't", "cell's"). */
const WORD = /[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}\p{N}]+)*/gu;

/** A word → stem function. */
export type Stem = (word: string) => string;

/**
 * Folds compatibility forms (NFKC: "ＤＩＹ" as "diy", as the stemmed fields do, languages.ts);
 * lowercases; splits on anything but letters, marks and digits (inner apostrophes kept, curly ones
 * straightened); drops a possessive 's; optionally drops English stop words; stems; joins with
 * single spaces (the index side tokenizes on whitespace).
 */
export function analyze(text: string, stem: Stem, stop: boolean): string {
  const out: string[] = [];
  for (const [raw] of text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .matchAll(WORD)) {
    const token = raw.replace(/'s$/, '');
    if (stop && ENGLISH_STOP.has(token)) continue;
    out.push(stem(token));
  }
  return out.join(' ');
}

/**
 * Memoizes a stemmer: text has far fewer distinct words than tokens. Bounded in entries and in the
 * characters it holds (a word can be long), because every process keeps one per language, seven in
 * all, for good: 200,000 entries of short words take ~17.5 MiB; 20,000 (~1.7 MiB) still cover the
 * frequent vocabulary. The bounds are for both generations of the memo together (text-memo.ts).
 */
export function memo(stem: Stem, maxEntries = 20_000, maxChars = 1_000_000): Stem {
  const cache = textMemo<string>(maxChars / 2, (stemmed) => stemmed.length, maxEntries / 2);
  return (word) => cache.get(word, stem);
}

const porter2Memo = memo(porter2);

/** The production analysis: stop words dropped, Porter2 stems. */
export function stemmedText(text: string): string {
  return analyze(text, porter2Memo, true);
}

/**
 * The query's words without English stop words, otherwise as written (lowercased, split like
 * {@link analyze}, no stemming, possessives kept): the text the unstemmed fields are searched with.
 * Empty when every word is a stop word.
 */
export function withoutStopWords(text: string): string {
  const out: string[] = [];
  for (const [token] of text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .matchAll(WORD)) {
    if (!ENGLISH_STOP.has(token)) out.push(token);
  }
  return out.join(' ');
}
