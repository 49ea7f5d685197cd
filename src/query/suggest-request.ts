import { z } from 'zod';
import type { SuggestionKind } from '../contract/names.ts';
import { keysOf } from '../internal/typed-objects.ts';

/** The kinds `kinds` may list (plural, as in the query string), and the suggestion kind each yields. */
export const SUGGEST_KINDS = {
  accounts: 'account',
  hashtags: 'hashtag',
  mentions: 'mention',
  topics: 'topic',
  niches: 'niche',
} as const satisfies Record<string, SuggestionKind>;
export type SuggestKindName = keyof typeof SUGGEST_KINDS;
const KIND_NAMES = keysOf(SUGGEST_KINDS);

/** Bounds of a suggest request. */
export const SUGGEST_LIMITS = Object.freeze({ queryLength: 100, defaultLimit: 5, maxLimit: 20 });

const KINDS_EXPECTED = `expected a comma-separated list of ${KIND_NAMES.join(', ')}`;
/** One kind or more, comma-separated, nothing else (stated in the OpenAPI document as a pattern). */
const KINDS_PATTERN = new RegExp(`^(?:${KIND_NAMES.join('|')})(?:,(?:${KIND_NAMES.join('|')}))*$`);
const LIMIT_EXPECTED = `expected an integer from 1 to ${SUGGEST_LIMITS.maxLimit}`;

/** `GET /v1/social/suggest?q=&kinds=&limit=`. */
export const suggestQuerySchema = z.strictObject({
  q: z.string().min(1).max(SUGGEST_LIMITS.queryLength).meta({
    description:
      'What has been typed: a prefix, case- and accent-insensitive. A leading `@` asks for accounts and mentions only, a leading `#` for hashtags only.',
  }),
  kinds: z
    .string()
    .regex(KINDS_PATTERN, { error: KINDS_EXPECTED })
    .optional()
    .transform((value) =>
      // The pattern admits kind names only: the filter keeps every one.
      value === undefined
        ? [...KIND_NAMES]
        : [...new Set(value.split(','))].filter((k): k is SuggestKindName => KIND_NAMES.some((n) => n === k)),
    )
    .meta({
      description: `Which kinds, in the order answered, comma-separated: ${KIND_NAMES.join(', ')} (default: all, in this order).`,
    }),
  limit: z.coerce
    .number({ error: LIMIT_EXPECTED })
    .int({ error: LIMIT_EXPECTED })
    .min(1, { error: LIMIT_EXPECTED })
    .max(SUGGEST_LIMITS.maxLimit, { error: LIMIT_EXPECTED })
    .default(SUGGEST_LIMITS.defaultLimit)
    .meta({ description: `Suggestions of each kind at most (default ${SUGGEST_LIMITS.defaultLimit}).` }),
});
export type SuggestQuery = z.output<typeof suggestQuerySchema>;

/**
 * The kinds a typed marker narrows to: `@` names accounts and mentions, `#` hashtags; the marker
 * itself is not part of the prefix.
 */
export function narrowByMarker(
  q: string,
  kinds: readonly SuggestKindName[],
): { text: string; kinds: SuggestKindName[] } {
  const trimmed = q.trimStart();
  if (trimmed.startsWith('@'))
    return { text: trimmed.slice(1), kinds: kinds.filter((k) => k === 'accounts' || k === 'mentions') };
  if (trimmed.startsWith('#')) return { text: trimmed.slice(1), kinds: kinds.filter((k) => k === 'hashtags') };
  return { text: q, kinds: [...kinds] };
}
