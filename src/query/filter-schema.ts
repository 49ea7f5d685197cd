import { z } from 'zod';
import { utcTimestamp } from '../contract/observations.ts';
import {
  FILTER_FIELDS,
  OPERATORS,
  normalizeValue,
  operatorsOf,
  typeLabel,
  type FieldDef,
  type FilterScope,
  type Operator,
} from './fields.ts';

/**
 * The filter grammar (docs/filters.md) as zod schemas generated from the field registry: a filters
 * object has one optional property per field of its scope, whose value is an operator object with
 * exactly that field's operators, plus `any_of` / `all_of` (arrays of filters objects) and `not`
 * (one filters object). This is the contract a route validates and a JSON Schema generator shows.
 *
 * The reasons of every failure live here too, because `parse-filters.ts` walks the same grammar by
 * hand (to build the AST in the client's order and to check what a schema cannot say: nesting
 * depth and the operator count) and both must say exactly the same thing.
 */

/** Bounds of the grammar. */
export const FILTER_LIMITS = Object.freeze({
  /** Levels of `any_of` / `all_of` / `not` below a scope's filters object. */
  maxDepth: 4,
  /** Filters objects in one `any_of` / `all_of`. */
  maxBranches: 20,
  /** Values in one list operand. */
  maxValues: 500,
  /** Characters in one string value. */
  maxValueLength: 200,
  /** Operators in one scope's filters, all levels together: bounds the engine query size. */
  maxConditions: 200,
});

/** The keys that combine filters objects. */
export const COMPOSITION_KEYS = ['any_of', 'all_of', 'not'] as const;

const TIMESTAMP_EXPECTED = 'expected an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00Z';
/** Timestamp-shaped strings, to tell "not UTC" apart from "not a timestamp". */
const ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

const timestampValue = z
  .string({ error: TIMESTAMP_EXPECTED })
  .superRefine((value, ctx) => {
    const m = ZONED.exec(value);
    if (!m) return;
    const zone = m[1];
    if (zone === undefined) {
      ctx.addIssue({ code: 'custom', message: 'expected a UTC timestamp; add "Z" (no time zone given)' });
    } else if (!/^(?:Z|[+-]00:00)$/.test(zone)) {
      ctx.addIssue({ code: 'custom', message: `expected a UTC timestamp (Z or +00:00), got offset ${zone}` });
    }
  })
  .pipe(utcTimestamp)
  .meta({ description: 'An ISO 8601 UTC timestamp (Z or +00:00), such as 2026-01-31T12:00:00Z.' });

const integerValue = z.number({ error: 'expected an integer' }).int({ error: 'expected an integer' });
const numberValue = z.number({ error: 'expected a number' });
const booleanValue = z.boolean({ error: 'expected true or false' });

function stringValue(field: FieldDef) {
  const max = FILTER_LIMITS.maxValueLength;
  let schema = z
    .string({ error: 'expected a string' })
    .min(1, { error: 'expected a non-empty string' })
    .max(max, { error: `expected at most ${max} characters` })
    .transform((value) => normalizeValue(field, value));
  if (field.normalize === 'hashtag' || field.normalize === 'handle') {
    // A bare "#" or "@" is non-empty until its marker is stripped.
    const what = field.normalize === 'hashtag' ? 'hashtag after "#"' : 'handle after "@"';
    schema = schema.refine((value) => value.length > 0, { error: `expected a non-empty ${what}` });
  }
  const allowed = field.values;
  if (allowed) {
    schema = schema.refine((value) => allowed.includes(value), {
      error: `expected one of ${allowed.map((v) => `"${v}"`).join(', ')}`,
    });
  }
  const notes = [
    field.normalize && 'case-insensitive',
    field.normalize === 'hashtag' && 'one leading "#" is dropped',
    field.normalize === 'handle' && 'one leading "@" is dropped',
    allowed && `one of ${allowed.map((v) => `"${v}"`).join(', ')}`,
  ].filter((note) => typeof note === 'string');
  if (notes.length === 0) return schema;
  const description = notes.join('; ');
  return schema.meta({ description: `${description[0]!.toUpperCase()}${description.slice(1)}.` });
}

function listValue(field: FieldDef) {
  const max = FILTER_LIMITS.maxValues;
  const expected = `expected an array of 1 to ${max} strings`;
  return z
    .array(stringValue(field), { error: expected })
    .min(1, { error: `${expected}, got an empty array` })
    .max(max, { error: `${expected}, got more` })
    .superRefine((values, ctx) => {
      const seen = new Set<string>();
      values.forEach((value, i) => {
        if (seen.has(value)) {
          const how = field.normalize ? ' (values are compared case-insensitively)' : '';
          ctx.addIssue({ code: 'custom', path: [i], message: `duplicate value "${value}"${how}` });
        }
        seen.add(value);
      });
    });
}

/** The operand of one operator; its output is the normalized value the AST carries. */
export type ValueSchema = z.ZodType<unknown>;

/** The operand of a bound (`gt`, `gte`, `lt`, `lte`): a number, or a timestamp (ISO string). */
export function boundSchemaOf(field: FieldDef): z.ZodType<number | string> {
  return field.type === 'timestamp' ? timestampValue : field.type === 'integer' ? integerValue : numberValue;
}

// Schemas are pure functions of the field: build each once.
const eqCache = new WeakMap<FieldDef, z.ZodType<string | boolean>>();
const listCache = new WeakMap<FieldDef, z.ZodType<string[]>>();

/** The operand of `eq`: a boolean, or one string value. */
export function eqSchemaOf(field: FieldDef): z.ZodType<string | boolean> {
  let schema = eqCache.get(field);
  if (!schema) eqCache.set(field, (schema = field.type === 'boolean' ? booleanValue : stringValue(field)));
  return schema;
}

/** The operand of the list operators (`in`, `not_in`, `contains_*`). */
export function listSchemaOf(field: FieldDef): z.ZodType<string[]> {
  let schema = listCache.get(field);
  if (!schema) listCache.set(field, (schema = listValue(field)));
  return schema;
}

/** The operand of `exists`. */
export const existsSchema: z.ZodType<boolean> = booleanValue;

/** The schema of the operand of `op` on `field`. */
export function valueSchemaOf(field: FieldDef, op: Operator): ValueSchema {
  switch (op) {
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return boundSchemaOf(field);
    case 'eq':
      return eqSchemaOf(field);
    case 'exists':
      return existsSchema;
    default:
      return listSchemaOf(field);
  }
}

/** Fixed reasons of the grammar. */
export const FILTER_REASONS = Object.freeze({
  /** A scope's filters (`post.filters`, …) that are not an object. */
  notFilters: 'expected a filters object: field names mapped to operator objects',
  /** A member of `any_of` / `all_of`, or the value of `not`, that is not an object. */
  notNestedFilters: 'expected a filters object',
  /** `{}` would make the enclosing any_of always true or the not always false: surely a mistake. */
  emptyNestedFilters: 'expected a non-empty filters object',
  branches: `expected an array of 1 to ${FILTER_LIMITS.maxBranches} filters objects`,
  tooDeep: `nesting too deep; any_of, all_of and not nest at most ${FILTER_LIMITS.maxDepth} levels`,
  tooManyConditions: `too many conditions; at most ${FILTER_LIMITS.maxConditions} operators in one filters object, all levels together`,
});

/** An example operator object for a field, shown when the client sent something else. */
function example(field: FieldDef): string {
  switch (field.type) {
    case 'integer':
      return '{"gte": 1000}';
    case 'number':
      return '{"gte": 0.05}';
    case 'timestamp':
      return '{"gte": "2026-01-01T00:00:00Z"}';
    case 'keyword':
      return '{"in": ["…"]}';
    case 'keywords':
    case 'ids':
      return '{"contains_any": ["…"]}';
    case 'boolean':
      return '{"eq": true}';
  }
}

function describe(field: FieldDef): string {
  return `${field.nullable ? 'nullable ' : ''}${typeLabel(field.type)} field ${field.name}`;
}

/** The value of a field is not an operator object. */
export function notOperatorsReason(field: FieldDef): string {
  return `expected an operator object such as ${example(field)}; operators of this ${typeLabel(field.type)} field: ${operatorsOf(field).join(', ')}`;
}

/** The operator object of a field is empty. */
export function noOperatorReason(field: FieldDef): string {
  return `expected at least one operator: ${operatorsOf(field).join(', ')}`;
}

/** `op` is not one of the field's operators. */
export function operatorReason(field: FieldDef, op: string): string {
  const known = OPERATORS.some((o) => o === op);
  return `${known ? `operator not allowed on the ${describe(field)}` : 'unknown operator'}; expected one of ${operatorsOf(field).join(', ')}`;
}

/** `count` members in `any_of` / `all_of`, outside 1 to the maximum (or not an array at all). */
export function branchesReason(value: unknown): string {
  if (!Array.isArray(value)) return FILTER_REASONS.branches;
  return `${FILTER_REASONS.branches}${value.length === 0 ? ', got an empty array' : `, got ${value.length}`}`;
}

/** Spellings clients reach for, mapped to the grammar's. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['or', 'any_of'],
  ['any', 'any_of'],
  ['anyOf', 'any_of'],
  ['$or', 'any_of'],
  ['should', 'any_of'],
  ['and', 'all_of'],
  ['all', 'all_of'],
  ['allOf', 'all_of'],
  ['$and', 'all_of'],
  ['must', 'all_of'],
  ['$not', 'not'],
  ['must_not', 'not'],
  ['none_of', 'not'],
]);

/**
 * The other filter scopes of the search requests (spec 4.1, 4.2), by the pointer of a scope's
 * filters: a field sent to the wrong one of two neighbouring scopes is pointed to the right one.
 */
const NEIGHBOURS: ReadonlyMap<string, { scope: FilterScope; pointer: string; via?: string }> = new Map([
  ['/post/filters', { scope: 'author', pointer: '/post/author/filters', via: 'author' }],
  ['/post/author/filters', { scope: 'post', pointer: '/post/filters' }],
  ['/account/filters', { scope: 'post', pointer: '/account/posts/filters', via: 'posts' }],
  ['/account/posts/filters', { scope: 'account', pointer: '/account/filters' }],
]);

/** Why `key` is not a key of a filters object of `scope` whose scope-level pointer is `base`. */
export function unknownFieldReason(key: string, scope: FilterScope, base: string): string {
  const neighbour = NEIGHBOURS.get(base);
  if (neighbour && (key === neighbour.via || FILTER_FIELDS[neighbour.scope][key])) {
    return `unknown ${scope} field; ${neighbour.scope} filters go in ${neighbour.pointer}`;
  }
  const alias = ALIASES.get(key);
  if (alias) return `unknown field; did you mean ${alias}?`;
  const names = Object.keys(FILTER_FIELDS[scope]);
  const close = closeMatches(key, names);
  if (close.length > 0) return `unknown field; did you mean ${close.join(' or ')}?`;
  return `unknown field; expected ${COMPOSITION_KEYS.join(', ')} or ${/^[aeiou]/.test(scope) ? 'an' : 'a'} ${scope} field: ${names.join(', ')}`;
}

/** Registry names a misspelled, camel-cased or shortened key probably meant, at most five. */
function closeMatches(key: string, names: string[]): string[] {
  const k = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/^[#@$]/, '')
    .toLowerCase();
  const tolerance = k.length <= 4 ? 1 : 2;
  return names
    .filter(
      (name) =>
        name === k ||
        editDistance(k, name) <= tolerance ||
        name.startsWith(`${k}_`) ||
        (k.length >= 4 && name.includes(k)),
    )
    .slice(0, 5);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The catchall of a closed object: every unknown key fails with `reason(key)`. A bare `z.never()`
 * catchall is reported as one `unrecognized_keys` issue for all unknown keys, which leaves no room
 * for a per-key reason; behind `z.lazy` it fails once per key, in the client's order, with the key
 * as the last step of the issue path, and JSON Schema still shows `additionalProperties: {not: {}}`.
 * Typed as `unknown` so that the closed object's own properties keep their types.
 */
export function rejectKey(reason: (key: string) => string): z.ZodType<unknown> {
  const never = z.never({ error: (issue) => reason(String(issue.path?.at(-1) ?? '')) });
  return z.lazy(() => never);
}

/** An object schema with exactly the keys of `shape`: anything else fails with `unknownKey(key)`. */
export function closedObject<S extends z.core.$ZodLooseShape>(
  shape: S,
  notObject: string,
  unknownKey: (key: string) => string,
) {
  return z.object(shape, { error: notObject }).catchall(rejectKey(unknownKey));
}

// Operator objects depend only on the field: built once, shared by every scope location.
const operatorsCache = new WeakMap<FieldDef, z.ZodType<unknown>>();

/** The operator object of `field`: exactly its operators, at least one. */
function operatorsSchema(field: FieldDef): z.ZodType<unknown> {
  let schema = operatorsCache.get(field);
  if (schema) return schema;
  const shape: Record<string, z.ZodOptional<ValueSchema>> = {};
  for (const op of operatorsOf(field)) shape[op] = valueSchemaOf(field, op).optional();
  schema = closedObject(shape, notOperatorsReason(field), (op) => operatorReason(field, op))
    .refine((ops) => Object.keys(ops).length > 0, { error: noOperatorReason(field) })
    .meta({ description: `Conditions on the ${describe(field)}, ANDed: ${operatorsOf(field).join(', ')}` });
  operatorsCache.set(field, schema);
  return schema;
}

/** The structural schemas of one scope location's filters: the scope's own object, and nested ones. */
export interface FiltersObjectSchemas {
  /** The filters object of the scope itself (`post.filters`, …); `{}` means "no constraint". */
  root: z.ZodType<unknown>;
  /** A member of `any_of` / `all_of` or the value of `not`: must not be empty. */
  nested: z.ZodType<unknown>;
}

/**
 * The filters objects of `scope` at the scope-level pointer `base` (which picks the neighbour hints
 * of unknown fields). Recursive through getters; nesting depth and the operator count are left to
 * the walker (`parse-filters.ts`), since a schema cannot count across levels.
 */
export function filtersObjectSchemas(scope: FilterScope, base: string): FiltersObjectSchemas {
  // One pair per location: the recursive schema is registered under an id (below), which must be unique.
  const key = `${scope} ${base}`;
  const cached = filtersCache.get(key);
  if (cached) return cached;
  const built = buildFiltersObjectSchemas(scope, base);
  filtersCache.set(key, built);
  return built;
}

const filtersCache = new Map<string, FiltersObjectSchemas>();

function buildFiltersObjectSchemas(scope: FilterScope, base: string): FiltersObjectSchemas {
  const fields: Record<string, z.ZodOptional<z.ZodType<unknown>>> = {};
  for (const field of Object.values(FILTER_FIELDS[scope])) fields[field.name] = operatorsSchema(field).optional();
  const branches = (description: string) =>
    z
      .array(nested, { error: FILTER_REASONS.branches })
      .min(1, { error: (issue) => branchesReason(issue.input) })
      .max(FILTER_LIMITS.maxBranches, { error: (issue) => branchesReason(issue.input) })
      .optional()
      .meta({ description });
  const shape = {
    ...fields,
    get any_of() {
      return branches('Matches when at least one of these filters objects matches (OR).');
    },
    get all_of() {
      return branches('Matches when all of these filters objects match (AND).');
    },
    get not() {
      return nested.optional().meta({ description: 'Matches when this filters object does not match.' });
    },
  };
  const unknownKey = (key: string) => unknownFieldReason(key, scope, base);
  const description = `${scope} filters, ANDed; any_of, all_of and not nest at most ${FILTER_LIMITS.maxDepth} levels, with at most ${FILTER_LIMITS.maxConditions} operators in all`;
  const nested: z.ZodType<unknown> = closedObject(shape, FILTER_REASONS.notNestedFilters, unknownKey)
    .refine((value) => Object.keys(value).length > 0, { error: FILTER_REASONS.emptyNestedFilters })
    // A recursive schema: documents (OpenAPI) reference it by this id instead of inlining it forever.
    .meta({
      id: `NestedFilters${base
        .split('/')
        .filter(Boolean)
        .map((p) => p[0]!.toUpperCase() + p.slice(1).replace(/_(.)/g, (_m, c: string) => c.toUpperCase()))
        .join('')}`,
      description: `A non-empty filters object of ${scope} fields.`,
    });
  const root = closedObject(shape, FILTER_REASONS.notFilters, unknownKey).meta({ description });
  return { root, nested };
}
