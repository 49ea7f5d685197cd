import type { Client, estypes } from '@elastic/elasticsearch';
import type { Correction, CorrectionPolicy, SpellingCorrector } from '../../spelling.ts';
import { isCorrectable, MAX_CORRECTED_WORDS } from '../../../text/correctable-words.ts';
import { COMPLETE_RESULTS, engineCall } from '../errors.ts';
import { termOptions } from '../response-values.ts';
import { POST_TEXT_FIELDS } from './post-query.ts';

/** The unstemmed text fields a post query searches (their words are the vocabulary). */
const TEXT_FIELDS = POST_TEXT_FIELDS.map((weighted) => weighted.split('^')[0]!);

/** A correction, with the most documents of one text field that carry it (BM25's statistics). */
export interface IndexedCorrection extends Correction {
  docFreq: number;
}

/**
 * The closest indexed word to each of `words` under `policy` (src/engine/spelling.ts), from the
 * engine's term suggester (in the core build, unlike the phrase suggester's collate, which needs
 * the mustache module): per text field, candidates the field holds in more documents than the word
 * (`suggest_mode: popular`, so, for a word no post carries, any), the policy's closest few at its
 * least similarity. Then one count of the
 * servable posts carrying each word and each candidate in any text field (a `filters` aggregation),
 * which is what decides: the suggester's frequencies are per field and count deleted copies of
 * updated posts until a merge drops them, so whether a word of one post passed for a word of two
 * would turn on the engine's merges. Two requests on `index`; engine failures are translated.
 */
export async function closestWords(
  client: Client,
  index: string,
  words: readonly string[],
  policy: CorrectionPolicy,
  language: string,
): Promise<Map<string, IndexedCorrection>> {
  // Bounded whoever asks: the count below holds a filter per word and per candidate.
  const distinct = [...new Set(words)].slice(0, MAX_CORRECTED_WORDS);
  const out = new Map<string, IndexedCorrection>();
  if (distinct.length === 0) return out;
  const found = await candidates(client, index, distinct, policy, language);
  const all = [...new Set([...distinct, ...[...found.values()].flatMap((c) => [...c.keys()])])];
  const counts = await postCounts(client, index, all);
  for (const word of distinct) {
    const posts = counts.get(word) ?? 0;
    if (policy.replaces === 'unknown' && posts > 0) continue;
    const best = [...(found.get(word) ?? [])]
      .map(([candidate, { score, docFreq }]) => ({
        word: candidate,
        score,
        docFreq,
        posts: counts.get(candidate) ?? 0,
      }))
      .filter((c) => c.posts >= policy.minPosts && c.posts > posts)
      .sort((a, b) => b.score - a.score || b.posts - a.posts || (a.word < b.word ? -1 : 1))[0];
    if (best) out.set(word, { word: best.word, posts: best.posts, docFreq: best.docFreq });
  }
  return out;
}

/** Per word, its candidates: the best similarity score (the fewer edits, the higher) and document frequency. */
async function candidates(
  client: Client,
  index: string,
  words: readonly string[],
  policy: CorrectionPolicy,
  language: string,
): Promise<Map<string, Map<string, { score: number; docFreq: number }>>> {
  // `accuracy` (Lucene's DirectSpellChecker's) is accepted by the engine, though the client's types
  // omit it: built apart from the literal typed as the client's, it passes as a property the type
  // does not name.
  const term = (field: string) => {
    const options = {
      field,
      suggest_mode: 'popular' as const,
      accuracy: policy.accuracy,
      size: policy.candidates,
      max_edits: 2,
      prefix_length: 1,
      min_word_length: 4,
      // Any: the count of servable posts below decides. A field's own frequency would drop a word
      // whose posts carry it in different fields (a caption here, a summary there), and whether
      // it did turned on deleted copies a merge had not yet dropped.
      min_doc_freq: 1,
      sort: 'score' as const,
    };
    return options;
  };
  const text = words.join(' ');
  const suggest: Record<string, estypes.SearchFieldSuggester> = Object.fromEntries(
    TEXT_FIELDS.map((field) => [field, { text, term: term(field) }]),
  );
  const response = await engineCall(() =>
    client.search({ index, size: 0, track_total_hits: false, suggest, ...COMPLETE_RESULTS }),
  );
  const scored = new Map(words.map((w) => [w, new Map<string, { score: number; docFreq: number }>()]));
  for (const entries of Object.values(response.suggest ?? {})) {
    for (const entry of entries) {
      const best = scored.get(entry.text);
      for (const option of best ? termOptions(entry) : []) {
        if (option.text === entry.text || !isCorrectable(option.text, language)) continue;
        const known = best!.get(option.text);
        best!.set(option.text, {
          score: Math.max(known?.score ?? 0, option.score),
          docFreq: Math.max(known?.docFreq ?? 0, option.freq),
        });
      }
    }
  }
  return scored;
}

/** Servable posts carrying each word in any text field, in one request. */
async function postCounts(client: Client, index: string, words: readonly string[]): Promise<Map<string, number>> {
  const carries = (word: string): estypes.QueryDslQueryContainer => ({
    multi_match: { query: word, fields: TEXT_FIELDS, type: 'best_fields', operator: 'and' },
  });
  const response = await engineCall(() =>
    // Keyed filters (an object of filters, as asked) answer keyed buckets.
    client.search<unknown, { words?: { buckets?: Record<string, { doc_count: number }> } }>({
      index,
      size: 0,
      track_total_hits: false,
      ...COMPLETE_RESULTS,
      query: { bool: { filter: [{ term: { servable: true } }, { bool: { should: words.map(carries) } }] } },
      aggs: { words: { filters: { filters: Object.fromEntries(words.map((word, i) => [`w${i}`, carries(word)])) } } },
    }),
  );
  const keyed = response.aggregations?.words?.buckets ?? {};
  return new Map(words.map((word, i) => [word, keyed[`w${i}`]?.doc_count ?? 0]));
}

/** The engine's spelling corrector on the posts' read alias. */
export function createSpellingCorrector(deps: { client: Client; postsIndex: string }): SpellingCorrector {
  return { closest: (words, policy, language) => closestWords(deps.client, deps.postsIndex, words, policy, language) };
}
