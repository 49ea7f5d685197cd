import type { estypes } from '@elastic/elasticsearch';
import type { PostSearch } from '../../query/search-request.ts';
import { stemmedText } from '../../text/analysis.ts';
import { compileFilter, compileSort } from './filter-compiler.ts';

/**
 * Text fields searched by `post.query`, with their weights: the caption is what the creator wrote
 * and the enrichment text summarizes the whole post, so they weigh most; transcripts and on-screen
 * text are long and noisy; visual descriptions are machine-written, so they weigh least.
 */
export const POST_TEXT_FIELDS = ['caption^2', 'content_text^1.5', 'transcript_text', 'visible_text', 'visual_text^0.5'];

/** `caption^2` → `caption_stemmed^2`. */
function stemmedField(weighted: string): string {
  const [field, weight] = weighted.split('^');
  return weight ? `${field}_stemmed^${weight}` : `${field}_stemmed`;
}

/** What a post must satisfy to be a result, whatever the ranking: servable, and the filters. */
export function postSearchFilter(search: Pick<PostSearch, 'filter'>): estypes.QueryDslQueryContainer[] {
  const filter: estypes.QueryDslQueryContainer[] = [{ term: { servable: true } }];
  const compiled = compileFilter(search.filter, 'post');
  if (compiled && !('match_all' in compiled)) filter.push(compiled);
  return filter;
}

/**
 * What search responses read of each hit: the record without its vector (2 KB per hit that
 * rendering never needs).
 */
export const SEARCH_SOURCE: estypes.SearchSourceConfig = { includes: ['record'], excludes: ['record.embedding'] };

/** The Elasticsearch query of a post search. User text only ever goes into `multi_match`. */
export function postSearchQuery(search: PostSearch): estypes.QueryDslQueryContainer {
  const filter = postSearchFilter(search);
  if (search.query === null) return { bool: { filter } };
  // The unstemmed fields reward exact wording; their client-stemmed companions match other
  // inflections. Equal weight, each side best_fields (summing every field's score ranked worse:
  // bench/README.md).
  const should: estypes.QueryDslQueryContainer[] = [
    { multi_match: { query: search.query, type: 'best_fields', tie_breaker: 0.3, fields: POST_TEXT_FIELDS } },
  ];
  const stemmed = stemmedText(search.query);
  if (stemmed.length > 0) {
    should.push({
      multi_match: { query: stemmed, type: 'best_fields', tie_breaker: 0.3, fields: POST_TEXT_FIELDS.map(stemmedField) },
    });
  }
  return { bool: { filter, should, minimum_should_match: 1 } };
}

/** Relevance order with a query; else the requested sort, newest first by default. Both end with `id`. */
export function postSearchSort(search: PostSearch): estypes.SortCombinations[] {
  if (search.query !== null) return [{ _score: { order: 'desc' } }, { id: 'asc' }];
  return compileSort(search.sort ?? { field: 'post.posted_at', order: 'desc' }, 'post');
}
