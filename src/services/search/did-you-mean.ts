import { SUGGESTION, type SpellingCorrector } from '../../engine/spelling.ts';
import { correctQuery } from '../../text/correctable-words.ts';
import { analyzeQuery } from '../../text/languages.ts';

/** A search whose query finds fewer results than this may carry a `suggested_query`. */
export const SUGGEST_BELOW = 3;

/**
 * "Did you mean": the query with its misspelt words replaced by the indexed word most like each
 * that more documents carry (the corrector's {@link SUGGESTION} policy: posts' or accounts'
 * words), the rest of the text as typed; null when no word has such a correction. A word that
 * finds documents is kept unless a neighbour finds more, so a correction never narrows what a
 * word finds. Which words may be corrected is the silent correction's rule too
 * (src/text/correctable-words.ts).
 */
export function createDidYouMean(deps: { corrector: SpellingCorrector }): (query: string) => Promise<string | null> {
  return async (query) => {
    const language = analyzeQuery(query).language;
    const corrected = await correctQuery(query, language, {
      closest: (keys) => deps.corrector.closest(keys, SUGGESTION, language),
      counts: (asked) => deps.corrector.counts(asked, SUGGESTION, language),
    });
    return corrected?.text ?? null;
  };
}
