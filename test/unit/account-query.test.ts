import { describe, expect, it } from 'vitest';
import { accountSearchQuery } from '../../src/engine/elasticsearch/queries/account-query.ts';
import { and } from '../../src/query/ast.ts';
import type { AccountSearch } from '../../src/query/search-codec.ts';

const search = (query: string | null): AccountSearch => ({ query, filter: and([]), posts: null, sort: null });
const FILTER = [
  { exists: { field: 'handle_observed_at' } },
  { term: { servable: true } },
  { term: { is_private: false } },
];
const FIELDS = ['handle.text^3', 'display_name^3', 'category_label^1.5', 'biography', 'publishing_summary'];
const STEMMED = ['category_label_stemmed^1.5', 'biography_stemmed', 'publishing_summary_stemmed'];

describe('account query text match', () => {
  it('scores word by word on the better of the exact words (function words dropped) and their stems', () => {
    expect(accountSearchQuery(search('Recipes for weeknight dinners'))).toEqual({
      bool: {
        filter: FILTER,
        should: [
          { term: { handle: { value: 'recipes for weeknight dinners', boost: 50, _name: 'exact_handle' } } },
          {
            dis_max: {
              queries: [
                { multi_match: { query: 'recipes weeknight dinners', type: 'cross_fields', fields: FIELDS } },
                { multi_match: { query: 'recip weeknight dinner', type: 'cross_fields', fields: STEMMED } },
              ],
            },
          },
          { term: { niches: { value: 'recipes_for_weeknight_dinners', boost: 2 } } },
        ],
        minimum_should_match: 1,
      },
    });
  });

  it('matches corrected words, and the handle as typed', () => {
    expect(accountSearchQuery(search('fitnes'), 'fitness')).toEqual({
      bool: {
        filter: FILTER,
        should: [
          { term: { handle: { value: 'fitnes', boost: 50, _name: 'exact_handle' } } },
          {
            dis_max: {
              queries: [
                { multi_match: { query: 'fitness', type: 'cross_fields', fields: FIELDS } },
                // The stems of every language the query may be in.
                { multi_match: { query: 'fit fitnes fitness', type: 'cross_fields', fields: STEMMED } },
              ],
            },
          },
          { term: { niches: { value: 'fitness', boost: 2 } } },
        ],
        minimum_should_match: 1,
      },
    });
  });

  it('searches a query of function words alone for its words', () => {
    const query = accountSearchQuery(search('how to')) as { bool: { should: Array<Record<string, unknown>> } };
    expect(JSON.stringify(query.bool.should[1])).toContain('"query":"how to"');
  });

  it('filters alone without a query', () => {
    expect(accountSearchQuery(search(null))).toEqual({ bool: { filter: FILTER } });
  });
});
