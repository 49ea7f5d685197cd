import { z } from 'zod';
import { formatPairs, toPointer } from '../contract/observations.ts';
import { ValidationFailedError } from '../internal/errors.ts';
import type { FilterNode, LeafNode, RangeNode } from './ast.ts';
import { FILTER_FIELDS, operatorsOf, type FieldDef, type FilterScope } from './fields.ts';
import {
  FILTER_LIMITS,
  FILTER_REASONS,
  branchesReason,
  filtersObjectSchemas,
  noOperatorReason,
  notOperatorsReason,
  operatorReason,
  unknownFieldReason,
  boundSchemaOf,
  eqSchemaOf,
  existsSchema,
  listSchemaOf,
} from './filter-schema.ts';

export { FILTER_LIMITS } from './filter-schema.ts';

/**
 * The filter grammar (docs/filters.md) walked by hand into the engine-neutral AST. A filters object
 * is the AND of its entries; each entry is a field with an operator object, or `any_of` / `all_of`
 * (arrays of filters objects) or `not` (one filters object).
 *
 * The walker reads the client's own value, so the AST keeps the client's order (zod rebuilds
 * objects in the order of their shape), and it checks what the structural schema of
 * `filter-schema.ts` cannot say: the nesting depth and the operator count across levels. It also
 * re-checks the structure, with the same reasons, so that it stands alone for direct callers.
 */

/** One problem, at `path` below the scope's filters object. */
export interface FilterIssue {
  path: PropertyKey[];
  message: string;
}

/** What one walk has found so far. */
class Context {
  readonly issues: FilterIssue[] = [];
  conditions = 0;
  private overflowReported = false;
  constructor(
    readonly scope: FilterScope,
    readonly base: string,
  ) {}

  issue(path: PropertyKey[], message: string): void {
    this.issues.push({ path, message });
  }

  /** Counts one operator; false (once reported) beyond the limit. */
  count(path: PropertyKey[]): boolean {
    this.conditions += 1;
    if (this.conditions <= FILTER_LIMITS.maxConditions) return true;
    if (!this.overflowReported) {
      this.overflowReported = true;
      this.issue(path, FILTER_REASONS.tooManyConditions);
    }
    return false;
  }

  check<T>(schema: z.ZodType<T>, value: unknown, path: PropertyKey[]): T | undefined {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues)
      this.issue([...path, ...issue.path], issue.message.replace(/^Invalid input: /, ''));
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Walks the filters object of `scope` whose JSON pointer is `pointer` (e.g. `/post/filters`; it
 * picks the neighbour hints of unknown fields) into an engine-neutral AST, in the client's order.
 * An empty object gives an empty `and` (no constraint). Issue paths are relative to `pointer`.
 */
export function walkFilters(
  input: unknown,
  scope: FilterScope,
  pointer: string,
): { node: FilterNode; issues: FilterIssue[] } {
  const ctx = new Context(scope, pointer);
  if (!isPlainObject(input)) {
    ctx.issue([], FILTER_REASONS.notFilters);
    return { node: { kind: 'and', children: [] }, issues: ctx.issues };
  }
  const node = parseObject(input, [], 0, ctx);
  return { node, issues: ctx.issues };
}

/**
 * Parses the filters object of `scope` found at JSON pointer `pointer` (e.g. `/post/filters`)
 * into an engine-neutral AST. An empty object parses to an empty `and` (no constraint).
 *
 * @throws ValidationFailedError whose detail lists up to five `pointer: what was expected` pairs.
 */
export function parseFilters(input: unknown, scope: FilterScope, pointer: string): FilterNode {
  const { node, issues } = walkFilters(input, scope, pointer);
  if (issues.length > 0) throw new ValidationFailedError(formatDetail(issues, pointer));
  return node;
}

/** `pointer: reason` pairs, the first few, and how many were left out (formatPairs). */
function formatDetail(issues: FilterIssue[], base: string): string {
  return formatPairs(issues.map((issue) => [base + toPointer(issue.path) || '/', issue.message]));
}

/**
 * The schema of the filters of `scope` at `pointer` (`/post/filters`, `/post/author/filters`,
 * `/account/filters`, `/account/posts/filters`): its input side is the structural schema of
 * `filter-schema.ts`, its output the AST. Steps: the nesting depth (before the structure, which
 * would otherwise follow any depth until the stack runs out), the structure, then the walker, for
 * the AST and the operator count. Several structural problems come in zod's order (fields in
 * registry order, unknown keys last), each with the same pointer and reason as the walker's.
 */
export function filtersSchema(scope: FilterScope, pointer: string): z.ZodType<FilterNode> {
  const { root } = filtersObjectSchemas(scope, pointer);
  // Zod builds an object's output in the order of its shape, but the AST follows the client's
  // order (an AND's children; a range sits where its field's first bound was), so the walker reads
  // the client's value, which the first step hands over. Every step is synchronous, so no other
  // parse comes in between; the reference is weak so that a body that failed does not linger.
  let raw: WeakRef<object> | undefined;
  return z
    .preprocess((input, ctx) => {
      const deep = tooDeep(input, 0, []);
      for (const path of deep) ctx.addIssue({ code: 'custom', path, message: FILTER_REASONS.tooDeep });
      raw = deep.length === 0 && isPlainObject(input) ? new WeakRef(input) : undefined;
      return input;
    }, root)
    .transform((_, ctx) => {
      const input = raw?.deref();
      raw = undefined;
      if (input === undefined) throw new Error('filtersSchema: the value of the first step is gone');
      const { node, issues } = walkFilters(input, scope, pointer);
      for (const { path, message } of issues) ctx.addIssue({ code: 'custom', path, message });
      return node;
    });
}

/** Paths of `any_of` / `all_of` / `not` keys nested deeper than allowed; never looks further down. */
function tooDeep(value: unknown, depth: number, path: PropertyKey[]): PropertyKey[][] {
  if (!isPlainObject(value)) return [];
  const found: PropertyKey[][] = [];
  for (const [key, child] of Object.entries(value)) {
    if (key !== 'any_of' && key !== 'all_of' && key !== 'not') continue;
    const at = [...path, key];
    if (depth >= FILTER_LIMITS.maxDepth) found.push(at);
    else if (key === 'not') found.push(...tooDeep(child, depth + 1, at));
    else if (Array.isArray(child)) child.forEach((branch, i) => found.push(...tooDeep(branch, depth + 1, [...at, i])));
  }
  return found;
}

function parseObject(input: Record<string, unknown>, path: PropertyKey[], depth: number, ctx: Context): FilterNode {
  const children: FilterNode[] = [];
  for (const [key, value] of Object.entries(input)) {
    const at = [...path, key];
    if (key === 'any_of' || key === 'all_of' || key === 'not') {
      if (depth >= FILTER_LIMITS.maxDepth) {
        ctx.issue(at, FILTER_REASONS.tooDeep);
        continue;
      }
      const node = key === 'not' ? parseNot(value, at, depth, ctx) : parseBranches(key, value, at, depth, ctx);
      if (node) children.push(node);
      continue;
    }
    const field = FILTER_FIELDS[ctx.scope][key];
    if (!field) {
      ctx.issue(at, unknownFieldReason(key, ctx.scope, ctx.base));
      continue;
    }
    children.push(...parseField(field, value, at, ctx));
  }
  return children.length === 1 ? children[0]! : { kind: 'and', children };
}

function parseNested(value: unknown, path: PropertyKey[], depth: number, ctx: Context): FilterNode | undefined {
  if (!isPlainObject(value)) {
    ctx.issue(path, FILTER_REASONS.notNestedFilters);
    return undefined;
  }
  if (Object.keys(value).length === 0) {
    ctx.issue(path, FILTER_REASONS.emptyNestedFilters);
    return undefined;
  }
  return parseObject(value, path, depth + 1, ctx);
}

function parseNot(value: unknown, path: PropertyKey[], depth: number, ctx: Context): FilterNode | undefined {
  const child = parseNested(value, path, depth, ctx);
  return child && { kind: 'not', child };
}

function parseBranches(
  key: 'any_of' | 'all_of',
  value: unknown,
  path: PropertyKey[],
  depth: number,
  ctx: Context,
): FilterNode | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_LIMITS.maxBranches) {
    ctx.issue(path, branchesReason(value));
    return undefined;
  }
  const children: FilterNode[] = [];
  value.forEach((branch, i) => {
    const child = parseNested(branch, [...path, i], depth, ctx);
    if (child) children.push(child);
  });
  return { kind: key === 'any_of' ? 'or' : 'and', children };
}

function parseField(field: FieldDef, input: unknown, path: PropertyKey[], ctx: Context): LeafOrNot[] {
  const allowed = operatorsOf(field);
  if (!isPlainObject(input)) {
    ctx.issue(path, notOperatorsReason(field));
    return [];
  }
  const entries = Object.entries(input);
  if (entries.length === 0) {
    ctx.issue(path, noOperatorReason(field));
    return [];
  }
  const nodes: LeafOrNot[] = [];
  let range: RangeNode | undefined;
  for (const [op, raw] of entries) {
    const at = [...path, op];
    const operator = allowed.find((o) => o === op);
    if (operator === undefined) {
      ctx.issue(at, operatorReason(field, op));
      continue;
    }
    if (!ctx.count(at)) continue;
    switch (operator) {
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const value = ctx.check(boundSchemaOf(field), raw, at);
        if (value === undefined) continue;
        // All bounds of one field form one range, in the position of the first bound.
        if (!range) nodes.push((range = { kind: 'range', field: field.field }));
        range[operator] =
          typeof value === 'string' && typeof raw === 'string' ? millisecondBound(operator, raw, value) : value;
        break;
      }
      case 'eq': {
        const value = ctx.check(eqSchemaOf(field), raw, at);
        if (value === undefined) continue;
        nodes.push({ kind: 'term', field: field.field, value });
        break;
      }
      case 'exists': {
        const value = ctx.check(existsSchema, raw, at);
        if (value === undefined) continue;
        nodes.push(
          value
            ? { kind: 'exists', field: field.field }
            : { kind: 'not', child: { kind: 'exists', field: field.field } },
        );
        break;
      }
      default: {
        const values = ctx.check(listSchemaOf(field), raw, at);
        if (values === undefined) continue;
        if (operator === 'in') nodes.push({ kind: 'terms', field: field.field, values });
        else if (operator === 'not_in')
          nodes.push({ kind: 'not', child: { kind: 'terms', field: field.field, values } });
        else if (operator === 'contains_none')
          nodes.push({ kind: 'not', child: { kind: 'contains', field: field.field, mode: 'any', values } });
        else
          nodes.push({
            kind: 'contains',
            field: field.field,
            mode: operator === 'contains_any' ? 'any' : 'all',
            values,
          });
      }
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
  return subMillisecond && (op === 'gte' || op === 'lt')
    ? new Date(Date.parse(truncated) + 1).toISOString()
    : truncated;
}
