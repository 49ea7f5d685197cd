/**
 * Engine-neutral filter AST. The grammar parser (`parse-filters.ts`) produces it and each engine
 * adapter compiles it; nothing here knows an index layout. Leaves carry the logical
 * field key of the registry (`post.views`, `author.followers_count`, …), never an engine path.
 *
 * Negation has exactly one representation, {@link NotNode}: the grammar's negative operators
 * (`not_in`, `contains_none`, `exists: false`) parse to `not` over their positive counterpart, so
 * an adapter handles negation (and its null semantics) in one place.
 */

import { z } from 'zod';
import type { FieldKey } from './fields.ts';

/** Conjunction. No children means "no constraint" (an empty filters object). */
export interface AndNode {
  kind: 'and';
  children: FilterNode[];
}

/** Disjunction of at least one child. */
export interface OrNode {
  kind: 'or';
  children: FilterNode[];
}

/** Negation. A document with no value for the negated leaf's field matches. */
export interface NotNode {
  kind: 'not';
  child: FilterNode;
}

/** A range bound: a number, or a timestamp normalized to `YYYY-MM-DDTHH:mm:ss.sssZ`. */
export type RangeValue = number | string;

/** Bounds on a number, integer or timestamp field; at least one is set, all are ANDed. */
export interface RangeNode {
  kind: 'range';
  field: FieldKey;
  gt?: RangeValue;
  gte?: RangeValue;
  lt?: RangeValue;
  lte?: RangeValue;
}

/** Equality on a single-valued keyword or boolean field (`eq`). */
export interface TermNode {
  kind: 'term';
  field: FieldKey;
  value: string | boolean;
}

/** Membership of a single-valued keyword field in a list (`in`). */
export interface TermsNode {
  kind: 'terms';
  field: FieldKey;
  values: string[];
}

/** An array field holding any (`contains_any`) or all (`contains_all`) of the values. */
export interface ContainsNode {
  kind: 'contains';
  field: FieldKey;
  mode: 'any' | 'all';
  values: string[];
}

/** The field has a value (for an array field: at least one element). */
export interface ExistsNode {
  kind: 'exists';
  field: FieldKey;
}

/** A field condition. */
export type LeafNode = RangeNode | TermNode | TermsNode | ContainsNode | ExistsNode;

/** Any node of a filter tree. */
export type FilterNode = AndNode | OrNode | NotNode | LeafNode;

/** True when the tree constrains nothing (an empty `and`). */
export function isMatchAll(node: FilterNode): boolean {
  return node.kind === 'and' && node.children.length === 0;
}

/** The conjunction of `children`: the single child itself, or an `and` node (empty: no constraint). */
export function and(children: FilterNode[]): FilterNode {
  return children.length === 1 ? children[0]! : { kind: 'and', children };
}

const fieldKey = z.custom<FieldKey>(
  (value) => typeof value === 'string' && /^(post|author|account)\.[a-z_]+$/.test(value),
);
const rangeValue = z.union([z.number(), z.string()]);

/**
 * The schema of a filter tree, for trees that come back from outside the process (inside
 * cursors): a cursor of an older shape must be refused, not compiled into a wrong query.
 */
export const filterNodeSchema: z.ZodType<FilterNode> = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('and'), children: z.array(filterNodeSchema) }),
    z.strictObject({ kind: z.literal('or'), children: z.array(filterNodeSchema).min(1) }),
    z.strictObject({ kind: z.literal('not'), child: filterNodeSchema }),
    z.strictObject({
      kind: z.literal('range'),
      field: fieldKey,
      gt: rangeValue.optional(),
      gte: rangeValue.optional(),
      lt: rangeValue.optional(),
      lte: rangeValue.optional(),
    }),
    z.strictObject({ kind: z.literal('term'), field: fieldKey, value: z.union([z.string(), z.boolean()]) }),
    z.strictObject({ kind: z.literal('terms'), field: fieldKey, values: z.array(z.string()) }),
    z.strictObject({
      kind: z.literal('contains'),
      field: fieldKey,
      mode: z.enum(['any', 'all']),
      values: z.array(z.string()),
    }),
    z.strictObject({ kind: z.literal('exists'), field: fieldKey }),
  ]),
);
