import { z } from 'zod';
import { toPointer, utcTimestamp } from '../contract/observations.ts';
import { ValidationFailedError } from '../internal/errors.ts';
import type { FilterNode, LeafNode, RangeNode } from './ast.ts';
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
 * The filter grammar (docs/filters.md): a filters object is the AND of its entries; each entry is
 * a field with an operator object, or `any_of` / `all_of` (arrays of filters objects) or `not` (one
 * filters object). The structure is walked by hand, because a failure must name the exact JSON
 * pointer and what the grammar expected there; the values are checked with zod schemas derived
 * from the field registry, so list items are pointed at by zod's issue paths.
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

/** Details show at most this many problems. */
const SHOWN_ISSUES = 5;

const COMPOSITION_KEYS = ['any_of', 'all_of', 'not'] as const;

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
  .pipe(utcTimestamp);

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
  return schema;
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

type ValueSchema = z.ZodType<unknown>;

function valueSchema(field: FieldDef, op: Operator): ValueSchema {
  switch (op) {
    case 'gt': case 'gte': case 'lt': case 'lte':
      return field.type === 'timestamp' ? timestampValue : field.type === 'integer' ? integerValue : numberValue;
    case 'eq':
      return field.type === 'boolean' ? booleanValue : stringValue(field);
    case 'exists':
      return booleanValue;
    default:
      return listValue(field);
  }
}

// Schemas are pure functions of (field, operator): build each once.
const schemaCache = new WeakMap<FieldDef, Map<Operator, ValueSchema>>();

function schemaFor(field: FieldDef, op: Operator): ValueSchema {
  let byOp = schemaCache.get(field);
  if (!byOp) schemaCache.set(field, (byOp = new Map()));
  let schema = byOp.get(op);
  if (!schema) byOp.set(op, (schema = valueSchema(field, op)));
  return schema;
}

/** What one parse has found so far. */
class Context {
  readonly issues: string[] = [];
  conditions = 0;
  private overflowReported = false;
  constructor(readonly scope: FilterScope, readonly base: string) {}

  issue(pointer: string, reason: string): void {
    this.issues.push(`${pointer || '/'}: ${reason}`);
  }

  /** Counts one operator; false (once reported) beyond the limit. */
  count(pointer: string): boolean {
    this.conditions += 1;
    if (this.conditions <= FILTER_LIMITS.maxConditions) return true;
    if (!this.overflowReported) {
      this.overflowReported = true;
      this.issue(pointer, `too many conditions; at most ${FILTER_LIMITS.maxConditions} operators in one filters object, all levels together`);
    }
    return false;
  }

  check<T>(schema: z.ZodType<T>, value: unknown, pointer: string): T | undefined {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) {
      this.issue(pointer + toPointer(issue.path), issue.message.replace(/^Invalid input: /, ''));
    }
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses the filters object of `scope` found at JSON pointer `pointer` (e.g. `/post/filters`)
 * into an engine-neutral AST. An empty object parses to an empty `and` (no constraint).
 *
 * @throws ValidationFailedError whose detail lists up to five `pointer: what was expected` pairs.
 */
export function parseFilters(input: unknown, scope: FilterScope, pointer: string): FilterNode {
  const ctx = new Context(scope, pointer);
  if (!isPlainObject(input)) {
    ctx.issue(pointer, 'expected a filters object: field names mapped to operator objects');
    throw new ValidationFailedError(formatDetail(ctx.issues));
  }
  const node = parseObject(input, pointer, 0, ctx);
  if (ctx.issues.length > 0) throw new ValidationFailedError(formatDetail(ctx.issues));
  return node;
}

/** `pointer: reason` pairs, the first few, and how many were left out. */
function formatDetail(issues: string[]): string {
  const shown = issues.slice(0, SHOWN_ISSUES);
  if (issues.length > SHOWN_ISSUES) shown.push(`and ${issues.length - SHOWN_ISSUES} more`);
  return shown.join('; ');
}

function parseObject(input: Record<string, unknown>, pointer: string, depth: number, ctx: Context): FilterNode {
  const children: FilterNode[] = [];
  for (const [key, value] of Object.entries(input)) {
    const at = pointer + toPointer([key]);
    if (key === 'any_of' || key === 'all_of' || key === 'not') {
      if (depth >= FILTER_LIMITS.maxDepth) {
        ctx.issue(at, `nesting too deep; any_of, all_of and not nest at most ${FILTER_LIMITS.maxDepth} levels`);
        continue;
      }
      const node = key === 'not' ? parseNot(value, at, depth, ctx) : parseBranches(key, value, at, depth, ctx);
      if (node) children.push(node);
      continue;
    }
    const field = FILTER_FIELDS[ctx.scope][key];
    if (!field) {
      ctx.issue(at, unknownFieldReason(key, ctx));
      continue;
    }
    children.push(...parseField(field, value, at, ctx));
  }
  return children.length === 1 ? children[0]! : { kind: 'and', children };
}

function parseNested(value: unknown, pointer: string, depth: number, ctx: Context): FilterNode | undefined {
  if (!isPlainObject(value)) {
    ctx.issue(pointer, 'expected a filters object');
    return undefined;
  }
  // `{}` would make the enclosing any_of always true or the not always false: surely a mistake.
  if (Object.keys(value).length === 0) {
    ctx.issue(pointer, 'expected a non-empty filters object');
    return undefined;
  }
  return parseObject(value, pointer, depth + 1, ctx);
}

function parseNot(value: unknown, pointer: string, depth: number, ctx: Context): FilterNode | undefined {
  const child = parseNested(value, pointer, depth, ctx);
  return child && { kind: 'not', child };
}

function parseBranches(
  key: 'any_of' | 'all_of',
  value: unknown,
  pointer: string,
  depth: number,
  ctx: Context,
): FilterNode | undefined {
  const max = FILTER_LIMITS.maxBranches;
  const expected = `expected an array of 1 to ${max} filters objects`;
  if (!Array.isArray(value) || value.length === 0 || value.length > max) {
    const got = !Array.isArray(value) ? '' : value.length === 0 ? ', got an empty array' : `, got ${value.length}`;
    ctx.issue(pointer, expected + got);
    return undefined;
  }
  const children: FilterNode[] = [];
  value.forEach((branch, i) => {
    const child = parseNested(branch, `${pointer}/${i}`, depth, ctx);
    if (child) children.push(child);
  });
  return { kind: key === 'any_of' ? 'or' : 'and', children };
}

/** An example operator object for a field, shown when the client sent something else. */
function example(field: FieldDef): string {
  switch (field.type) {
    case 'integer': return '{"gte": 1000}';
    case 'number': return '{"gte": 0.05}';
    case 'timestamp': return '{"gte": "2026-01-01T00:00:00Z"}';
    case 'keyword': return '{"in": ["…"]}';
    case 'keywords': case 'ids': return '{"contains_any": ["…"]}';
    case 'boolean': return '{"eq": true}';
  }
}

function describe(field: FieldDef): string {
  return `${field.nullable ? 'nullable ' : ''}${typeLabel(field.type)} field ${field.name}`;
}

function parseField(field: FieldDef, input: unknown, pointer: string, ctx: Context): LeafOrNot[] {
  const allowed = operatorsOf(field);
  const expected = allowed.join(', ');
  if (!isPlainObject(input)) {
    ctx.issue(pointer, `expected an operator object such as ${example(field)}; operators of this ${typeLabel(field.type)} field: ${expected}`);
    return [];
  }
  const entries = Object.entries(input);
  if (entries.length === 0) {
    ctx.issue(pointer, `expected at least one operator: ${expected}`);
    return [];
  }
  const nodes: LeafOrNot[] = [];
  let range: RangeNode | undefined;
  for (const [op, raw] of entries) {
    const at = pointer + toPointer([op]);
    if (!(allowed as readonly string[]).includes(op)) {
      const known = (OPERATORS as readonly string[]).includes(op);
      ctx.issue(at, `${known ? `operator not allowed on the ${describe(field)}` : 'unknown operator'}; expected one of ${expected}`);
      continue;
    }
    if (!ctx.count(at)) continue;
    const operator = op as Operator;
    const value = ctx.check(schemaFor(field, operator), raw, at);
    if (value === undefined) continue;
    switch (operator) {
      case 'gt': case 'gte': case 'lt': case 'lte':
        // All bounds of one field form one range, in the position of the first bound.
        if (!range) nodes.push((range = { kind: 'range', field: field.field }));
        range[operator] = field.type === 'timestamp' ? millisecondBound(operator, raw as string, value as string) : (value as number | string);
        break;
      case 'eq':
        nodes.push({ kind: 'term', field: field.field, value: value as string | boolean });
        break;
      case 'in':
        nodes.push({ kind: 'terms', field: field.field, values: value as string[] });
        break;
      case 'not_in':
        nodes.push({ kind: 'not', child: { kind: 'terms', field: field.field, values: value as string[] } });
        break;
      case 'contains_any':
      case 'contains_all':
        nodes.push({ kind: 'contains', field: field.field, mode: operator === 'contains_any' ? 'any' : 'all', values: value as string[] });
        break;
      case 'contains_none':
        nodes.push({ kind: 'not', child: { kind: 'contains', field: field.field, mode: 'any', values: value as string[] } });
        break;
      case 'exists':
        nodes.push(value ? { kind: 'exists', field: field.field } : { kind: 'not', child: { kind: 'exists', field: field.field } });
        break;
    }
  }
  return nodes;
}

type LeafOrNot = LeafNode | { kind: 'not'; child: LeafNode };

/**
 * Indexed times have millisecond precision, and a parsed timestamp is truncated to it. Truncation
 * keeps `gt` and `lte` exact, but `gte` / `lt` of an instant inside a millisecond (`…00.0001Z`)
 * must start from the next millisecond, or they would match times before the bound.
 */
function millisecondBound(op: 'gt' | 'gte' | 'lt' | 'lte', raw: string, truncated: string): string {
  const subMillisecond = /\.\d{3}\d*[1-9]/.test(raw);
  return subMillisecond && (op === 'gte' || op === 'lt') ? new Date(Date.parse(truncated) + 1).toISOString() : truncated;
}

/** Spellings clients reach for, mapped to the grammar's. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['or', 'any_of'], ['any', 'any_of'], ['anyOf', 'any_of'], ['$or', 'any_of'], ['should', 'any_of'],
  ['and', 'all_of'], ['all', 'all_of'], ['allOf', 'all_of'], ['$and', 'all_of'], ['must', 'all_of'],
  ['$not', 'not'], ['must_not', 'not'], ['none_of', 'not'],
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

function unknownFieldReason(key: string, ctx: Context): string {
  const neighbour = NEIGHBOURS.get(ctx.base);
  if (neighbour && (key === neighbour.via || FILTER_FIELDS[neighbour.scope][key])) {
    return `unknown ${ctx.scope} field; ${neighbour.scope} filters go in ${neighbour.pointer}`;
  }
  const alias = ALIASES.get(key);
  if (alias) return `unknown field; did you mean ${alias}?`;
  const names = Object.keys(FILTER_FIELDS[ctx.scope]);
  const close = closeMatches(key, names);
  if (close.length > 0) return `unknown field; did you mean ${close.join(' or ')}?`;
  return `unknown field; expected ${COMPOSITION_KEYS.join(', ')} or a ${ctx.scope} field: ${names.join(', ')}`;
}

/** Registry names a misspelled, camel-cased or shortened key probably meant, at most five. */
function closeMatches(key: string, names: string[]): string[] {
  const k = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/^[#@$]/, '').toLowerCase();
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
