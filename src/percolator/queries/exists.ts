import type { estypes } from '@elastic/elasticsearch';
import { fieldOf, NO_TEXT, type MemoryQuery } from '../compiled.ts';
import type { FieldTable } from '../document.ts';

/** `exists`: the field holds a value (an empty list or null holds none). */
export function compileExists(body: estypes.QueryDslExistsQuery, fields: FieldTable): MemoryQuery {
  const path = body.field;
  fieldOf(fields, path);
  return { matches: (doc) => doc.values(path).length > 0, triggers: null, text: NO_TEXT };
}
