import type { estypes } from '@elastic/elasticsearch';
import type { FilterNode } from '../../../query/ast.ts';
import type { RelatedEvidence } from '../../../query/related-evidence.ts';
import { postSearchFilter } from './post-query.ts';

type Query = estypes.QueryDslQueryContainer;

/**
 * What a lexical hit carries of its classifications: for the related posts of a query the model
 * cannot read (src/query/related-evidence.ts), and for how specific the subjects of a probed word's
 * hits are (hybrid-windows.ts).
 */
export const CLASSIFIED_FIELDS = ['topics', 'author.niches'];

/** A hit's topics and its author's niches, from {@link CLASSIFIED_FIELDS} asked as `docvalue_fields`. */
export function hitClassifications(hit: Pick<estypes.SearchHit, 'fields'>): { topics: string[]; niches: string[] } {
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  return { topics: strings(hit.fields?.['topics']), niches: strings(hit.fields?.['author.niches']) };
}

/**
 * The posts related to a query's strong word matches (`evidence`), among those the search's filter
 * admits, the strong matches left out: every post carrying one of their topics, scored by the
 * shares of those it carries, the query's language first (its clause outweighs every share
 * together, so it is a tier, not a nudge), then the newest.
 */
export function relatedPostsQuery(options: {
  postsOnly: Query;
  filter: FilterNode;
  evidence: RelatedEvidence;
  /** The query's language (src/text/languages.ts), its posts first; null: none first. */
  language: string | null;
}): { query: Query; sort: estypes.SortCombinations[] } {
  const { evidence } = options;
  const clauses = (field: string, shares: ReadonlyMap<string, number>): Query[] =>
    [...shares].map(([value, share]) => ({ constant_score: { filter: { term: { [field]: value } }, boost: share } }));
  const related = clauses('topics', evidence.topics);
  const all = [...evidence.topics.values()].reduce((a, b) => a + b, 0);
  const language: Query[] = options.language
    ? [{ constant_score: { filter: { term: { primary_language: options.language } }, boost: all + 1 } }]
    : [];
  return {
    query: {
      bool: {
        filter: [options.postsOnly, ...postSearchFilter({ filter: options.filter })],
        must: [{ bool: { should: related, minimum_should_match: 1 } }],
        ...(language.length > 0 ? { should: language } : {}),
        must_not: [{ ids: { values: [...evidence.sources] } }],
      },
    },
    sort: [{ _score: { order: 'desc' } }, { posted_at: { order: 'desc' } }, { id: 'asc' }],
  };
}
