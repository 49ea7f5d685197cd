import type { Suggestion } from '../../contract/names.ts';
import type { NameSuggester } from '../../engine/suggest.ts';
import { narrowByMarker, SUGGEST_KINDS, type SuggestQuery } from '../../query/suggest-request.ts';
import { foldName, NAME_KEY_MAX_LENGTH } from '../../text/name-keys.ts';

/** Typeahead (the route adds `request_id`). */
export interface SuggestService {
  suggest(query: SuggestQuery): Promise<{ data: Suggestion[] }>;
}

/** Control characters never reach a prefix (the unit separator joins names to their display form). */
const CONTROL = /\p{Cc}/gu;

/**
 * Folds what was typed as the worker folded the names (src/text/name-keys.ts), narrowed by a
 * leading `@` or `#`, cut to the longest key kept; a prefix of nothing suggests nothing.
 */
export function createSuggestService(deps: { suggester: NameSuggester }): SuggestService {
  return {
    async suggest(query) {
      const { text, kinds } = narrowByMarker(query.q, query.kinds);
      const prefix = foldName(text.replace(CONTROL, ' ')).slice(0, NAME_KEY_MAX_LENGTH);
      if (prefix === '' || kinds.length === 0) return { data: [] };
      const data = await deps.suggester.suggest(
        prefix,
        kinds.map((k) => SUGGEST_KINDS[k]),
        query.limit,
      );
      return { data };
    },
  };
}
