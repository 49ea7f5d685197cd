/**
 * Client-side analysis for the "stem in the application" strategy: one function applied identically
 * to documents (before indexing into a `whitespace`-analyzed field) and to queries.
 *
 * The stemmer packages are deliberately not project dependencies: the bench imports them by
 * absolute path from a scratch npm folder (default /tmp/stemmer-scratch), see bench/relevance.md,
 * "Stemming and analyzer choice (SciFact, Elasticsearch directly)".
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export { ENGLISH_STOP, memo, type Stem } from '../../src/text/analysis.ts';
import { analyze, memo, type Stem } from '../../src/text/analysis.ts';

export interface ClientStemmer {
  readonly name: string;
  /** package@version, for the record */
  readonly pkg: string;
  readonly stem: Stem;
}

/** The production analysis with an exchangeable stemmer (see src/text/analysis.ts). */
export const clientAnalyze = analyze;

/**
 * Loads `exportName` of `<dir>/node_modules/<file>` as a stemmer, or returns null (with a hint on
 * how to install it) when it is not there.
 */
export async function loadStemmer(
  dir: string,
  name: string,
  pkg: string,
  file: string,
  exportName: string,
): Promise<ClientStemmer | null> {
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
