import { z } from 'zod';
import { ValidationFailedError } from '../../internal/errors.ts';

// Bounded, so a form cannot make the service hash or store megabytes; the services validate meaning.
const field = (max: number) => z.string().max(max).default('');

/** Fields every form carries: the CSRF token is checked by the plugin before the handler runs. */
const formBase = { _csrf: z.string().max(200).optional() };

/** The sign-in form. */
export const signInForm = z.object({ ...formBase, email: field(320), password: field(1024) });

/** The sign-up form. */
export const signUpForm = z.object({ ...formBase, email: field(320), password: field(1024), invitation: field(200) });

/** The create-key form: one checkbox per scope, so one value arrives as a string, several as an array. */
export const createKeyForm = z.object({
  ...formBase,
  name: field(200),
  scopes: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v])),
});

/** The usage page's query. */
export const usageQuery = z.object({
  days: z.coerce
    .number()
    .int()
    .refine((d) => [7, 14, 30, 90].includes(d))
    .catch(14)
    .default(14),
});

/** A key id in a path. */
export const keyIdParams = z.object({ id: z.string().max(64) });

/** The add-endpoint form of the alerts page (the API's own bounds: createEndpointSchema). */
export const endpointForm = z.object({
  ...formBase,
  url: z.string().max(2048, { error: 'the URL may have at most 2048 characters' }).default(''),
  description: z.string().max(500, { error: 'the description may have at most 500 characters' }).default(''),
});

/** A form's fields, or a 422 naming the first that does not fit (shown on the page, never a 500). */
export function parseForm<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ValidationFailedError(`${issue?.path.join('.') || 'form'}: ${issue?.message ?? 'invalid'}`);
}
