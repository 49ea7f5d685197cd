import { foldCase } from '../../query/fields.ts';
import { eachStandardToken } from './standard-tokenizer.ts';

/**
 * The analyzers of an index's text fields and the normalizers of its keyword fields, as in-memory
 * matching (src/percolator) reproduces them: the `standard` tokenizer with or without the
 * `lowercase` filter (standard-tokenizer.ts), and nothing else: a field analyzed otherwise is left out
 * and a query over it refused, never answered differently from the engine.
 */

/** How the engine analyzes the text of a field. */
export interface TextAnalyzer {
  /** Gives `visit` each token of `text`, in order. */
  tokens(this: void, text: string, visit: (token: string) => void): void;
}

/** The `standard` tokenizer, lowercased or not, as a {@link TextAnalyzer}. */
function standardAnalyzer(lowercased: boolean): TextAnalyzer {
  return { tokens: (text, visit) => eachStandardToken(text, lowercased, visit) };
}

/** The tokens `analyzer` makes of `text`, in order. */
export function tokensOf(analyzer: TextAnalyzer, text: string): string[] {
  const out: string[] = [];
  analyzer.tokens(text, (token) => out.push(token));
  return out;
}

/** An analyzer definition of the index settings (`analysis.analyzer.<name>`), or a built-in's name. */
export interface AnalyzerDefinition {
  type?: string;
  tokenizer?: string;
  filter?: string | string[];
  char_filter?: string | string[];
}

/** A list setting, which the engine also takes as one string. */
const listOf = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * The in-memory form of an analyzer, or null for one this module cannot reproduce (another
 * tokenizer, a filter other than `lowercase`, any char filter): a query over such a field is
 * refused when it is compiled (document.ts), never answered differently from the engine.
 */
export function textAnalyzer(definition: AnalyzerDefinition | undefined, name: string): TextAnalyzer | null {
  if (!definition) return name === 'standard' ? standardAnalyzer(true) : null;
  if (definition.type !== undefined && definition.type !== 'custom') return null;
  if (definition.tokenizer !== 'standard' || listOf(definition.char_filter).length > 0) return null;
  const filters = listOf(definition.filter);
  if (filters.some((f) => f !== 'lowercase')) return null;
  return standardAnalyzer(filters.includes('lowercase'));
}

/** A keyword normalizer's in-memory form (`lowercase` only), or null when it has other filters. */
export function keywordNormalizer(
  definition: Omit<AnalyzerDefinition, 'tokenizer'> | undefined,
): ((value: string) => string) | null {
  if (!definition) return (value) => value;
  const filters = listOf(definition.filter);
  if (listOf(definition.char_filter).length > 0 || filters.some((f) => f !== 'lowercase')) return null;
  return filters.includes('lowercase') ? foldCase : (value) => value;
}
