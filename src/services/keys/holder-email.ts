import { z } from 'zod';

/**
 * An account holder's email, the holder's identity. Trimmed and lower-cased: emails are compared
 * case-insensitively in practice, and one spelling keeps one holder (and one key index) per person.
 */
export const holderEmailSchema = z
  .string()
  .trim()
  .max(254, 'email must be at most 254 characters')
  .pipe(z.email({ error: 'must be an email address' }))
  .transform((s) => s.toLowerCase());
