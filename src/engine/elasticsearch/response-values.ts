import type { estypes } from '@elastic/elasticsearch';

/**
 * Values of engine answers the client types loosely, read as what they are. Doc-value fields of
 * a search hit (`docvalue_fields`) first. The client
 * types `fields` as `Record<string, any>`; these read the first value of a field and keep it only
 * when it has the expected primitive type (a `typeof` per field: nothing next to the response's
 * JSON parse), so no caller claims a type the engine did not answer.
 */

/** The first value of doc-value field `name` of `hit`, when it is a string. */
export function firstString(hit: Pick<estypes.SearchHit, 'fields'>, name: string): string | undefined {
  const value = firstValue(hit, name);
  return typeof value === 'string' ? value : undefined;
}

/** The first value of doc-value field `name` of `hit`, when it is a number. */
export function firstNumber(hit: Pick<estypes.SearchHit, 'fields'>, name: string): number | undefined {
  const value = firstValue(hit, name);
  return typeof value === 'number' ? value : undefined;
}

/** The first value of doc-value field `name` of `hit` (doc values always come as arrays). */
export function firstValue(hit: Pick<estypes.SearchHit, 'fields'>, name: string): unknown {
  const values: unknown = hit.fields?.[name];
  return Array.isArray(values) ? values[0] : undefined;
}

/**
 * The options of a term suggester's entry. The client types a suggestion as any suggester's
 * (completion, phrase, term) and its options as one or many; only term options carry `freq`.
 */
export function termOptions(entry: estypes.SearchSuggest): estypes.SearchTermSuggestOption[] {
  const options = Array.isArray(entry.options) ? entry.options : [entry.options];
  return options.filter((o): o is estypes.SearchTermSuggestOption => 'freq' in o);
}
