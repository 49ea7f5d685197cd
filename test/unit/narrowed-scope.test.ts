import { describe, expect, it } from 'vitest';
import { narrowedScope } from '../../src/engine/elasticsearch/queries/account-query.ts';
import type { ContainsNode, FilterNode, RangeNode } from '../../src/query/ast.ts';
import { parseFilters } from '../../src/query/parse-filters.ts';

const account = (filters: unknown) => parseFilters(filters, 'account', '/account/filters');
const recent = parseFilters({ views: { gte: 100 } }, 'post', '/account/posts/filters');
const scope = { minimum: 2, filter: recent };

describe('narrowedScope: what the account filter says of the authors, asked of the posts', () => {
  it('adds the conjuncts the author copies hold exactly, renamed to the author fields', () => {
    const narrowed = narrowedScope(
      scope,
      account({ niches: { contains_any: ['skincare'] }, is_verified: { eq: true }, followers_count: { gte: 1000 } }),
    );
    expect(narrowed).toEqual({
      minimum: 2,
      filter: {
        kind: 'and',
        children: [
          recent,
          { kind: 'contains', field: 'author.niches', mode: 'any', values: ['skincare'] },
          { kind: 'term', field: 'author.is_verified', value: true },
        ],
      },
    });
  });

  it('leaves counters (coarse on posts), metrics (not on posts) and account-only fields to the accounts index', () => {
    const filter = account({
      followers_count: { gte: 1000 },
      engagement_rate_90d: { gte: 0.01 },
      category_label: { eq: 'artist' },
    });
    expect(narrowedScope(scope, filter)).toBe(scope);
  });

  it('pushes an OR or a NOT only when every leaf under it has an exact copy', () => {
    const languages: ContainsNode = {
      kind: 'contains',
      field: 'account.publishing_languages',
      mode: 'any',
      values: ['es'],
    };
    const niches: ContainsNode = { kind: 'contains', field: 'account.niches', mode: 'any', values: ['fitness'] };
    const followers: RangeNode = { kind: 'range', field: 'account.followers_count', gte: 10 };
    const exact: FilterNode = { kind: 'or', children: [languages, { kind: 'not', child: niches }] };
    const mixed: FilterNode = { kind: 'or', children: [languages, followers] };
    expect(narrowedScope(scope, { kind: 'and', children: [exact, mixed] }).filter).toEqual({
      kind: 'and',
      children: [
        recent,
        {
          kind: 'or',
          children: [
            { ...languages, field: 'author.publishing_languages' },
            { kind: 'not', child: { ...niches, field: 'author.niches' } },
          ],
        },
      ],
    });
    expect(narrowedScope(scope, { kind: 'not', child: followers })).toBe(scope);
  });

  it('keeps a scope without post filters free of an empty conjunct', () => {
    const bare = { minimum: 1, filter: { kind: 'and', children: [] } as FilterNode };
    expect(narrowedScope(bare, account({ country_codes: { contains_any: ['US'] } })).filter).toEqual({
      kind: 'contains',
      field: 'author.country_codes',
      mode: 'any',
      values: ['US'],
    });
    expect(narrowedScope(bare, account({}))).toBe(bare);
  });
});
