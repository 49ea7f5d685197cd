/**
 * Client-side analysis for the "stem in the application" strategy: one function applied identically
 * to documents (before indexing into a `whitespace`-analyzed field) and to queries.
 *
 * The stemmer packages are deliberately not project dependencies: the bench imports them by
 * absolute path from a scratch npm folder (default /tmp/stemmer-scratch), see bench/README.md.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export type Stem = (word: string) => string;

export interface ClientStemmer {
  readonly name: string;
  /** package@version, for the record */
  readonly pkg: string;
  readonly stem: Stem;
}

/** Lucene's EnglishAnalyzer stop set, the same 33 words as Elasticsearch's `_english_`. */
export const ENGLISH_STOP: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

/** A run of letters, combining marks and digits, with inner apostrophes kept ("don't", "cell's"). */
const WORD = /[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}\p{N}]+)*/gu;

/**
 * Lowercase; split on anything but letters/marks/digits (inner apostrophes kept, curly ones
 * straightened); drop a possessive 's (as Elasticsearch's english_possessive_stemmer does);
 * optionally drop English stop words; stem; join with single spaces.
 */
export function clientAnalyze(text: string, stem: Stem, stop: boolean): string {
  const out: string[] = [];
  for (const [raw] of text.toLowerCase().replace(/[\u2018\u2019]/g, "'").matchAll(WORD)) {
    const token = raw.replace(/'s$/, '');
    if (stop && ENGLISH_STOP.has(token)) continue;
    out.push(stem(token));
  }
  return out.join(' ');
}

/** Memoizes a stemmer (a corpus has far fewer distinct words than tokens). */
export function memo(stem: Stem): Stem {
  const cache = new Map<string, string>();
  return (word) => {
    let stemmed = cache.get(word);
    if (stemmed === undefined) cache.set(word, (stemmed = stem(word)));
    return stemmed;
  };
}

/**
 * Loads `exportName` of `<dir>/node_modules/<file>` as a stemmer, or returns null (with a hint on
 * how to install it) when it is not there.
 */
export async function loadStemmer(dir: string, name: string, pkg: string, file: string, exportName: string): Promise<ClientStemmer | null> {
  try {
    const mod = await import(pathToFileURL(path.join(dir, 'node_modules', file)).href);
    const stem: unknown = mod[exportName];
    if (typeof stem !== 'function') throw new Error(`no function export ${exportName}`);
    return { name, pkg, stem: memo((word) => String((stem as Stem)(word))) };
  } catch (error) {
    console.warn(`! ${pkg} not loadable from ${dir} (${(error as Error).message}); its variants are skipped.`);
    console.warn(`  mkdir -p ${dir} && cd ${dir} && npm init -y && npm i ${pkg}`);
    return null;
  }
}
