import type { Client, estypes } from '@elastic/elasticsearch';
import type { Correction, SpellingCorrector, WordCorrections } from '../../spelling.ts';
import { COMPLETE_RESULTS, engineCall } from '../errors.ts';
import { termOptions } from '../response-values.ts';
import { POST_TEXT_FIELDS } from '../queries/post-query.ts';

/** The unstemmed text fields a post query searches (their words are the vocabulary). */
const TEXT_FIELDS = POST_TEXT_FIELDS.map((weighted) => weighted.split('^')[0]!);
/** Candidates kept per word and field (the suggester's own `size`). */
const CANDIDATES = 3;

/**
 * The engine's term suggester (in the core build, unlike the phrase suggester's collate, which
 * needs the mustache module): per text field, candidates within two edits that the field holds in
 * more documents than the word (`suggest_mode: popular`). Then one count of the servable posts
 * carrying each word and each candidate in any text field (a `filters` aggregation over the posts
 * carrying any of them), which is what decides: the suggester's frequencies are per field and
 * count deleted and unservable documents. Two engine requests, both on the posts' read alias.
 */
export function createSpellingCorrector(deps: { client: Client; postsIndex: string }): SpellingCorrector {
  const { client, postsIndex: index } = deps;

  async function candidates(words: readonly string[]): Promise<Map<string, Set<string>>> {
    const text = words.join(' ');
    const suggest = Object.fromEntries(
      TEXT_FIELDS.map((field) => [
        field,
        {
          text,
          term: {
            field,
            suggest_mode: 'popular' as const,
            size: CANDIDATES,
            max_edits: 2,
            prefix_length: 1,
            min_word_length: 4,
            sort: 'score' as const,
          },
        },
      ]),
    );
    const response = await engineCall(() =>
      client.search({ index, size: 0, track_total_hits: false, suggest, ...COMPLETE_RESULTS }),
    );
    // Per word, candidates by their best score in any field, the most alike first.
    const scored = new Map<string, Map<string, number>>(words.map((w) => [w, new Map()]));
    for (const entries of Object.values(response.suggest ?? {})) {
      for (const entry of entries) {
        const best = scored.get(entry.text);
        if (!best) continue;
        for (const option of termOptions(entry)) {
          if (option.text === entry.text) continue;
          best.set(option.text, Math.max(best.get(option.text) ?? 0, option.score));
        }
      }
    }
    return new Map(
      [...scored].map(([word, options]) => [
        word,
        new Set([...options].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w)),
      ]),
    );
  }

  async function postCounts(words: readonly string[]): Promise<Map<string, number>> {
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
        query: {
          bool: { filter: [{ term: { servable: true } }, { bool: { should: words.map(carries) } }] },
        },
        aggs: {
          words: { filters: { filters: Object.fromEntries(words.map((word, i) => [`w${i}`, carries(word)])) } },
        },
      }),
    );
    const keyed = response.aggregations?.words?.buckets ?? {};
    return new Map(words.map((word, i) => [word, keyed[`w${i}`]?.doc_count ?? 0]));
  }

  return {
    async corrections(words) {
      const distinct = [...new Set(words)];
      const out = new Map<string, WordCorrections>();
      if (distinct.length === 0) return out;
      const found = await candidates(distinct);
      const all = [...new Set([...distinct, ...[...found.values()].flatMap((c) => [...c])])];
      const counts = await postCounts(all);
      for (const word of distinct) {
        const posts = counts.get(word) ?? 0;
        const better: Correction[] = [...(found.get(word) ?? [])]
          .map((candidate) => ({ word: candidate, posts: counts.get(candidate) ?? 0 }))
          .filter((c) => c.posts > posts);
        out.set(word, { posts, candidates: better });
      }
      return out;
    },
  };
}
