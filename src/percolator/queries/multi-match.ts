import type { estypes } from '@elastic/elasticsearch';
import { tokensOf } from '../analysis/analyzers.ts';
import { fieldOf, unsupported, type MemoryQuery } from '../compiled.ts';
import type { FieldTable } from '../document.ts';

/** `caption^2` → `caption`. */
function fieldName(weighted: string): string {
  if (weighted.includes('*')) unsupported(`the field pattern ${weighted}`);
  return weighted.split('^')[0]!;
}

/** Whether `needle` occurs in `list` at consecutive positions. */
function containsRun(list: readonly string[], needle: readonly string[]): boolean {
  outer: for (let i = 0; i + needle.length <= list.length; i++) {
    for (let j = 0; j < needle.length; j++) if (list[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * `multi_match`, `best_fields` (any field holding any of the query's tokens, as the default `or`
 * operator has it) or `phrase` (any field holding all of them at consecutive positions of one
 * value). The query is analyzed with each field's search analyzer; a field it leaves no token for
 * matches nothing (`zero_terms_query: none`).
 */
export function compileMultiMatch(body: estypes.QueryDslMultiMatchQuery, fields: FieldTable): MemoryQuery {
  const type = body.type ?? 'best_fields';
  if (type !== 'best_fields' && type !== 'phrase') unsupported(`multi_match of type ${type}`);
  for (const option of ['operator', 'minimum_should_match', 'slop', 'fuzziness', 'zero_terms_query'] as const)
    if (body[option] !== undefined && !(option === 'operator' && String(body[option]).toLowerCase() === 'or'))
      unsupported(`the multi_match option ${option}`);
  const paths = (Array.isArray(body.fields) ? body.fields : body.fields ? [body.fields] : []).map(fieldName);
  if (paths.length === 0) unsupported('multi_match over the default fields');
  const perField = paths.map((path) => {
    const field = fieldOf(fields, path);
    if (field.kind !== 'text') unsupported(`multi_match over the ${field.kind} field ${path}`);
    return { path, tokens: tokensOf(field.search, body.query) };
  });
  const keys = new Set<string>();
  for (const { tokens } of perField) {
    if (tokens.length === 0) continue;
    // A phrase needs every token: its longest alone is a sound trigger, and likely the rarest.
    if (type === 'phrase') keys.add(tokens.reduce((a, b) => (b.length > a.length ? b : a)));
    else for (const token of tokens) keys.add(token);
  }
  const live = perField.filter((f) => f.tokens.length > 0);
  return {
    matches:
      type === 'phrase'
        ? (doc) =>
            live.some(({ path, tokens }) =>
              tokens.length === 1
                ? doc.tokenSet(path).has(tokens[0]!)
                : doc.tokens(path).some((list) => containsRun(list, tokens)),
            )
        : (doc) =>
            live.some(({ path, tokens }) => {
              const set = doc.tokenSet(path);
              return tokens.some((t) => set.has(t));
            }),
    triggers: { keys: [...keys] },
    text: { paths: new Set(live.map((f) => f.path)), words: new Set(live.flatMap((f) => f.tokens)) },
  };
}
