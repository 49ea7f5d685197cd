import { z } from 'zod';
import { PATH_ID_MAX_LENGTH } from '../contract/ids.ts';

/** Entries one lookup may name, aliases and IDs together. */
export const LOOKUP_MAX_ENTRIES = 1000;

const entry = (what: string) =>
  z
    .string()
    .min(1)
    .max(PATH_ID_MAX_LENGTH)
    .meta({ description: `${what}, at most ${PATH_ID_MAX_LENGTH} characters.` });

/** An over-long list alone: the same words as the bound across both lists. */
const tooMany = (aliases: string) => ({
  error: (issue: { input?: unknown }) =>
    `expected at most ${LOOKUP_MAX_ENTRIES} entries in all (${aliases} and ids), got ${Array.isArray(issue.input) ? issue.input.length : 'more'}`,
});

/**
 * The rules across a lookup body's two lists: at least one entry, at most
 * {@link LOOKUP_MAX_ENTRIES} in all; an excess is a 422 naming the member that passes the bound
 * (the aliases when they alone do, else the IDs).
 */
function entriesBounded(aliases: string) {
  return (body: Record<string, string[] | undefined>, ctx: z.core.$RefinementCtx) => {
    const named = body[aliases]?.length ?? 0;
    const ids = body.ids?.length ?? 0;
    if (named + ids === 0) {
      ctx.addIssue({ code: 'custom', path: [], message: `expected at least one entry in ${aliases} or ids` });
    } else if (named + ids > LOOKUP_MAX_ENTRIES) {
      ctx.addIssue({
        code: 'custom',
        path: [named > LOOKUP_MAX_ENTRIES ? aliases : 'ids'],
        message: `expected at most ${LOOKUP_MAX_ENTRIES} entries in all (${aliases} and ids), got ${named + ids}`,
      });
    }
  };
}

/** `POST /v1/social/accounts/lookup`. */
export const accountLookupRequestSchema = z
  .strictObject({
    handles: z
      .array(
        entry(
          'A handle, with or without a leading `@`, resolved as get account resolves it (case-insensitive, to its current holder)',
        ),
      )
      .max(LOOKUP_MAX_ENTRIES, tooMany('handles'))
      .optional()
      .meta({ description: 'Looked up first, in this order.' }),
    ids: z
      .array(entry('An account ID'))
      .max(LOOKUP_MAX_ENTRIES, tooMany('handles'))
      .optional()
      .meta({ description: 'Looked up after the handles, in this order.' }),
  })
  .superRefine(entriesBounded('handles'))
  .meta({ description: `Accounts by handle and by ID: at most ${LOOKUP_MAX_ENTRIES} entries in all.` });

/** `POST /v1/social/posts/lookup`. */
export const postLookupRequestSchema = z
  .strictObject({
    shortcodes: z
      .array(entry('A platform shortcode (case-sensitive), resolved as get post resolves it'))
      .max(LOOKUP_MAX_ENTRIES, tooMany('shortcodes'))
      .optional()
      .meta({ description: 'Looked up first, in this order.' }),
    ids: z
      .array(entry('A post ID'))
      .max(LOOKUP_MAX_ENTRIES, tooMany('shortcodes'))
      .optional()
      .meta({ description: 'Looked up after the shortcodes, in this order.' }),
  })
  .superRefine(entriesBounded('shortcodes'))
  .meta({ description: `Posts by shortcode and by ID: at most ${LOOKUP_MAX_ENTRIES} entries in all.` });

export type AccountLookupRequest = z.output<typeof accountLookupRequestSchema>;
export type PostLookupRequest = z.output<typeof postLookupRequestSchema>;

/**
 * What a lookup spends of the read budget: one read per entry as sent, at least one (an empty or
 * unreadable body still costs a request) and at most {@link LOOKUP_MAX_ENTRIES} (a body over the
 * bound is refused whole). Runs before validation, on the parsed but unchecked body.
 */
export function lookupCost(body: unknown): number {
  let entries = 0;
  if (body !== null && typeof body === 'object') {
    for (const value of Object.values(body)) if (Array.isArray(value)) entries += value.length;
  }
  return Math.min(LOOKUP_MAX_ENTRIES, Math.max(1, entries));
}
