import type { Suggestion, SuggestionKind } from '../contract/names.ts';

/**
 * Names starting with a prefix, for typeahead, read from the live indices (as fresh as their
 * refresh). The prefix is already folded (src/text/name-keys.ts) and is matched literally.
 */
export interface NameSuggester {
  /**
   * Up to `limit` suggestions of each kind, most counted first (ties by name), in the order of
   * `kinds`; all kinds in one engine request.
   */
  suggest(prefix: string, kinds: readonly SuggestionKind[], limit: number): Promise<Suggestion[]>;
}
