import { fieldOf, NO_TEXT, single, unsupported, type MemoryQuery } from '../compiled.ts';
import type { FieldKind, FieldTable, MemoryDoc } from '../document.ts';
import { keywordKey } from '../triggers.ts';

/**
 * The test of one term-level value against a field, and its trigger key (keyword fields only):
 * keywords compared after the field's normalizer, booleans by their value or its string, numbers
 * by value. A term on a text field is refused (it would compare with analyzed tokens).
 */
export function valueTest(
  path: string,
  field: FieldKind,
  value: unknown,
): { test: (doc: MemoryDoc) => boolean; key?: string } {
  switch (field.kind) {
    case 'keyword': {
      const normalized = field.normalize(String(value));
      return { test: (doc) => doc.keywords(path).has(normalized), key: keywordKey(path, normalized) };
    }
    case 'boolean': {
      const wanted = value === true || value === 'true';
      return { test: (doc) => doc.values(path).some((v) => v === wanted || v === String(wanted)) };
    }
    case 'number': {
      const wanted = Number(value);
      return { test: (doc) => doc.values(path).some((v) => Number(v) === wanted) };
    }
    default:
      return unsupported(`a term on the ${field.kind} field ${path}`);
  }
}

/** `term`: one value of one field (`{field: value}` or `{field: {value}}`). */
export function compileTerm(body: Record<string, unknown>, fields: FieldTable): MemoryQuery {
  const [path, spec] = single(body, 'term');
  const value: unknown = spec !== null && typeof spec === 'object' ? Reflect.get(spec, 'value') : spec;
  const { test, key } = valueTest(path, fieldOf(fields, path), value);
  return { matches: test, triggers: key ? { keys: [key] } : null, text: NO_TEXT };
}
