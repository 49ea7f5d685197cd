import { z } from 'zod';

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
