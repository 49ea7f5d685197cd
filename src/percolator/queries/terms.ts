import { fieldOf, NO_TEXT, single, unsupported, type MemoryQuery } from '../compiled.ts';
import type { FieldTable } from '../document.ts';
import { valueTest } from './term.ts';

/** `terms`: any of a list of values of one field (a terms lookup, reading another index, is refused). */
export function compileTerms(body: Record<string, unknown>, fields: FieldTable): MemoryQuery {
  const [path, values] = single(body, 'terms');
  if (!Array.isArray(values)) unsupported('a terms lookup');
  const field = fieldOf(fields, path);
  const tests = values.map((v) => valueTest(path, field, v));
  return {
    matches: (doc) => tests.some((t) => t.test(doc)),
    triggers: tests.every((t) => t.key) ? { keys: tests.map((t) => t.key!) } : null,
    text: NO_TEXT,
  };
}
