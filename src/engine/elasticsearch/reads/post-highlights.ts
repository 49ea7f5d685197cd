import type { Client, estypes } from '@elastic/elasticsearch';
import type { PostRecord } from '../../../domain/records.ts';
import { stemmedText, withoutStopWords } from '../../../text/analysis.ts';
import {
  HIGHLIGHT_END,
  HIGHLIGHT_START,
  type MatchedTextField,
  type MatchHighlighter,
  type PostHighlights,
} from '../../matches.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import { COMPLETE_RESULTS, engineCall } from '../errors.ts';
import { projectPost } from '../documents/projection.ts';

/** The unstemmed text fields (the stemmed companions hold analysed text no API field shows). */
const TEXT_FIELDS: readonly MatchedTextField[] = [
  'caption',
  'content_text',
  'transcript_text',
  'visible_text',
  'visual_text',
];

/** Words as the analysis splits them (src/text/analysis.ts). */
const WORD = /[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}\p{N}]+)*/gu;

/** Fragments of about this many characters, cut at sentence and then word boundaries. */
const FRAGMENT_SIZE = 100;
const FRAGMENTS_PER_FIELD = 3;
/** At most this many inflected forms are added to the highlight query. */
const MAX_INFLECTIONS = 200;

/**
 * The words of these texts that the stemmed side matched: the words whose stem is one of the
 * query's stems. The highlighter sees only the unstemmed fields, so a post found through an
 * inflection ("routines" for "routine") is highlighted through the inflected words themselves.
 */
function inflections(texts: string[], query: string): string[] {
  const stems = new Set(
    stemmedText(query)
      .split(' ')
      .filter((s) => s.length > 0),
  );
  const found = new Set<string>();
  for (const text of texts) {
    for (const [word] of text.toLowerCase().matchAll(WORD)) {
      if (found.size >= MAX_INFLECTIONS) break;
      if (!found.has(word) && stems.has(stemmedText(word))) found.add(word);
    }
  }
  return [...found];
}

/**
 * Highlights with the engine's `unified` highlighter on the unstemmed text fields (stored, so the
 * highlighter reads exactly the indexed text). Two requests, on the page's ids only: the records
 * (to find the inflections the stemmed side matched), then the highlights. User text reaches the
 * engine only inside `multi_match`.
 */
export function createPostHighlighter(deps: { client: Client; index: string }): MatchHighlighter {
  const { client, index } = deps;
  return {
    async highlightPosts(query, ids) {
      const out = new Map<string, PostHighlights>();
      if (ids.length === 0) return out;
      const byId: estypes.QueryDslQueryContainer = { ids: { values: [...ids] } };
      const records = await engineCall(() =>
        client.search<{ record: PostRecord }>({
          ...COMPLETE_RESULTS,
          index,
          query: byId,
          size: ids.length,
          _source: ['record'],
          track_total_hits: false,
        }),
      );
      const texts = records.hits.hits.flatMap((h) => {
        const doc = projectPost(h._source!.record);
        return TEXT_FIELDS.map((f) => doc[f]).filter((t): t is string => typeof t === 'string');
      });
      // The words the search looked for: without the query's function words (post-query.ts).
      const content = analyzeQuery(query).content || query;
      const words = withoutStopWords(content) || content;
      const should: estypes.QueryDslQueryContainer[] = [{ multi_match: { query: words, fields: [...TEXT_FIELDS] } }];
      const inflected = inflections(texts, content);
      if (inflected.length > 0) should.push({ multi_match: { query: inflected.join(' '), fields: [...TEXT_FIELDS] } });
      const response = await engineCall(() =>
        client.search({
          ...COMPLETE_RESULTS,
          index,
          query: byId,
          size: ids.length,
          _source: false,
          track_total_hits: false,
          highlight: {
            type: 'unified',
            highlight_query: { bool: { should } },
            pre_tags: [HIGHLIGHT_START],
            post_tags: [HIGHLIGHT_END],
            fragment_size: FRAGMENT_SIZE,
            number_of_fragments: FRAGMENTS_PER_FIELD,
            require_field_match: true,
            fields: Object.fromEntries(TEXT_FIELDS.map((f) => [f, {}])),
          },
        }),
      );
      const recordOf = new Map(records.hits.hits.map((h) => [h._id!, h._source!.record]));
      for (const hit of response.hits.hits) {
        const record = recordOf.get(hit._id!);
        if (record) out.set(hit._id!, { record, fragments: hit.highlight ?? {} });
      }
      return out;
    },
  };
}
