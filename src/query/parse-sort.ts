import { z } from 'zod';
import { formatIssues } from '../contract/observations.ts';
import { ValidationFailedError } from '../internal/errors.ts';
import { sortFields, type FieldKey, type SortScope } from './fields.ts';

/** Sort directions. */
export type SortOrder = 'asc' | 'desc';

/**
 * A parsed `sort`: the logical key of the field (as in the filter AST) and the direction.
 * Documents without a value come last in either direction, and ties break on the ID ascending;
 * both are the adapter's job, they are not options.
 */
export interface SortSpec {
  field: FieldKey;
  order: SortOrder;
}

function schemaOf(scope: SortScope) {
  const fields = sortFields(scope);
  const names = fields.map((f) => f.name);
  const keys = new Map(fields.map((f) => [f.name, f.field]));
  return z
    .strictObject(
      {
        by: z.enum(names, { error: `expected one of ${names.join(', ')}` }),
        order: z.enum(['asc', 'desc'], { error: 'expected "asc" or "desc"' }).default('desc'),
      },
      // Zod reports unknown keys with this message too; formatIssues renders those itself.
      { error: 'expected an object {"by": <field>, "order": "asc" | "desc"}' },
    )
    .meta({ description: `Order of a filters-only ${scope} search; order defaults to desc. Not allowed with a query.` })
    .transform(({ by, order }): SortSpec => ({ field: keys.get(by)!, order }));
}

/**
 * The `sort` object of a filters-only search, per scope: `{by, order}` in, a {@link SortSpec} out.
 * Issue paths are relative to the `sort` object.
 */
export const SORT_SCHEMAS = Object.freeze({ post: schemaOf('post'), account: schemaOf('account') });

/**
 * Parses the `sort` object of a filters-only search of `scope`, found at `pointer` (e.g. `/sort`).
 * `order` defaults to `desc`.
 *
 * @throws ValidationFailedError naming the pointer of an unknown field, a missing or unknown
 *   `by`, or an unknown `order`.
 */
export function parseSort(input: unknown, scope: SortScope, pointer: string): SortSpec {
  const result = SORT_SCHEMAS[scope].safeParse(input);
  if (result.success) return result.data;
  throw new ValidationFailedError(formatIssues(result.error.issues, pointer, input));
}
