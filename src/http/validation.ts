import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { formatIssues } from '../contract/observations.ts';
import { ValidationFailedError } from '../internal/errors.ts';

const PARTS: Record<string, string> = { body: '', params: 'path parameter ', querystring: 'query parameter ' };

/**
 * Validates each route part with its zod schema and hands the handler the schema's output. A
 * failure is the 422 itself, its detail the `pointer: reason` pairs of the zod issues (RFC 6901
 * pointers built from the issue paths, so a key holding `/` or `~` is escaped), so the one error
 * handler renders it like any other domain error.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    return {
      error: new ValidationFailedError(
        `${PARTS[httpPart ?? 'body'] ?? ''}${formatIssues(result.error.issues, '', data)}`,
      ),
    };
  };
