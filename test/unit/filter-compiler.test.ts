import { readFileSync } from 'node:fs';
import { ACCOUNT_ONLY_AUTHOR_FIELDS } from '../../src/domain/volatile-facts.ts';
import { describe, expect, it } from 'vitest';
import { compileFilter, compileSort, esPath } from '../../src/engine/elasticsearch/queries/filter-compiler.ts';
import type { FilterNode } from '../../src/query/ast.ts';
import { FILTER_FIELDS, type FieldDef, type FilterScope } from '../../src/query/fields.ts';
import { parseFilters } from '../../src/query/parse-filters.ts';
import { parseSort } from '../../src/query/parse-sort.ts';

/** Compiles one leaf through the root, which always wraps in `bool.filter`. */
const root = (node: FilterNode, scope: FilterScope = 'post') => compileFilter(node, scope);
const views = { kind: 'range', field: 'post.views', gte: 1000 } as const;
const reel = { kind: 'term', field: 'post.format', value: 'reel' } as const;

describe('compileFilter: one node kind at a time', () => {
  it('compiles an empty AND to match_all', () => {
    expect(root({ kind: 'and', children: [] })).toEqual({ match_all: {} });
  });

  it('compiles a number range', () => {
    expect(root({ kind: 'range', field: 'post.views', gt: 1, gte: 2, lt: 3, lte: 4 })).toEqual({
      bool: { filter: [{ range: { views: { gt: 1, gte: 2, lt: 3, lte: 4 } } }] },
    });
  });

  it('compiles a timestamp range with the bounds as strings', () => {
    expect(
      root({ kind: 'range', field: 'post.posted_at', gte: '2026-01-01T00:00:00.000Z', lt: '2026-02-01T00:00:00.000Z' }),
    ).toEqual({
      bool: { filter: [{ range: { posted_at: { gte: '2026-01-01T00:00:00.000Z', lt: '2026-02-01T00:00:00.000Z' } } }] },
    });
  });

  it('compiles eq on keyword and boolean fields to term', () => {
    expect(root(reel)).toEqual({ bool: { filter: [{ term: { format: 'reel' } }] } });
    expect(root({ kind: 'term', field: 'post.has_paid_partnership_label', value: true })).toEqual({
      bool: { filter: [{ term: { has_paid_partnership_label: true } }] },
    });
  });

  it('compiles in to terms', () => {
    expect(root({ kind: 'terms', field: 'post.format', values: ['reel', 'carousel'] })).toEqual({
      bool: { filter: [{ terms: { format: ['reel', 'carousel'] } }] },
    });
  });

  it('compiles contains any to terms and contains all to a bool.filter of terms', () => {
    expect(root({ kind: 'contains', field: 'post.topics', mode: 'any', values: ['a', 'b'] })).toEqual({
      bool: { filter: [{ terms: { topics: ['a', 'b'] } }] },
    });
    expect(root({ kind: 'contains', field: 'post.topics', mode: 'all', values: ['a', 'b'] })).toEqual({
      bool: { filter: [{ bool: { filter: [{ term: { topics: 'a' } }, { term: { topics: 'b' } }] } }] },
    });
  });

  it('compiles exists', () => {
    expect(root({ kind: 'exists', field: 'post.views' })).toEqual({
      bool: { filter: [{ exists: { field: 'views' } }] },
    });
  });

  it('compiles a root NOT to must_not, and an inner NOT to a must_not bool', () => {
    expect(root({ kind: 'not', child: reel })).toEqual({ bool: { must_not: [{ term: { format: 'reel' } }] } });
    expect(root({ kind: 'or', children: [views, { kind: 'not', child: reel }] })).toEqual({
      bool: {
        filter: [
          {
            bool: {
              should: [{ range: { views: { gte: 1000 } } }, { bool: { must_not: [{ term: { format: 'reel' } }] } }],
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });

  it('compiles not_in, contains_none and exists false (negations in an AND) into must_not', () => {
    const node = parseFilters(
      { format: { not_in: ['reel'] }, topics: { contains_none: ['x'] }, views: { exists: false, lt: 5 } },
      'post',
      '/post/filters',
    );
    expect(root(node)).toEqual({
      bool: {
        filter: [{ range: { views: { lt: 5 } } }],
        must_not: [{ terms: { format: ['reel'] } }, { terms: { topics: ['x'] } }, { exists: { field: 'views' } }],
      },
    });
  });

  it('compiles OR to should with minimum_should_match 1, flattening nested ORs', () => {
    const node: FilterNode = {
      kind: 'or',
      children: [views, { kind: 'or', children: [reel, { kind: 'exists', field: 'post.audio_id' }] }],
    };
    expect(root(node)).toEqual({
      bool: {
        filter: [
          {
            bool: {
              should: [
                { range: { views: { gte: 1000 } } },
                { term: { format: 'reel' } },
                { exists: { field: 'audio_id' } },
              ],
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });

  it('flattens nested ANDs and unwraps one-child groups', () => {
    const node: FilterNode = {
      kind: 'and',
      children: [
        views,
        { kind: 'and', children: [reel, { kind: 'and', children: [] }] },
        { kind: 'or', children: [reel] },
      ],
    };
    expect(root(node)).toEqual({
      bool: {
        filter: [{ range: { views: { gte: 1000 } } }, { term: { format: 'reel' } }, { term: { format: 'reel' } }],
      },
    });
  });

  it('keeps an AND inside an OR as a bool', () => {
    expect(
      root({ kind: 'or', children: [{ kind: 'and', children: [views, { kind: 'not', child: reel }] }, reel] }),
    ).toEqual({
      bool: {
        filter: [
          {
            bool: {
              should: [
                { bool: { filter: [{ range: { views: { gte: 1000 } } }], must_not: [{ term: { format: 'reel' } }] } },
                { term: { format: 'reel' } },
              ],
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });

  it('maps author fields under author. and account fields to the accounts index', () => {
    expect(root({ kind: 'range', field: 'author.followers_count', gte: 10 }, 'author')).toEqual({
      bool: { filter: [{ range: { 'author.followers_count': { gte: 10 } } }] },
    });
    expect(root({ kind: 'term', field: 'account.category_label', value: 'artist' }, 'account')).toEqual({
      bool: { filter: [{ term: { 'category_label.keyword': 'artist' } }] },
    });
    expect(root({ kind: 'terms', field: 'account.handle', values: ['alice'] }, 'account')).toEqual({
      bool: { filter: [{ terms: { handle: ['alice'] } }] },
    });
  });

  it('combines post and author trees (same index) and refuses a field of the other index', () => {
    const both: FilterNode = { kind: 'and', children: [views, { kind: 'exists', field: 'author.niches' }] };
    expect(root(both, 'post')).toEqual({
      bool: { filter: [{ range: { views: { gte: 1000 } } }, { exists: { field: 'author.niches' } }] },
    });
    expect(() => root(views, 'account')).toThrow('field post.views is not in the accounts index');
    expect(() => root({ kind: 'exists', field: 'account.niches' }, 'author')).toThrow(
      'field account.niches is not in the posts index',
    );
  });
});

describe('compileFilter: a realistic post search', () => {
  it('compiles the parsed post and author filters to the exact query', () => {
    const postNode = parseFilters(
      {
        posted_at: { gte: '2026-01-01T00:00:00Z', lt: '2026-02-01T00:00:00Z' },
        format: { in: ['reel', 'carousel'] },
        any_of: [
          { views: { gte: 100000 } },
          { engagement_rate_by_views: { gte: 0.05 }, hashtags: { contains_any: ['#Fitness'] } },
        ],
        not: { has_paid_partnership_label: { eq: true } },
      },
      'post',
      '/post/filters',
    );
    const authorNode = parseFilters(
      { followers_count: { gte: 10000, lte: 500000 }, niches: { contains_any: ['fitness', 'nutrition'] } },
      'author',
      '/post/author/filters',
    );
    expect(compileFilter({ kind: 'and', children: [postNode, authorNode] }, 'post')).toEqual({
      bool: {
        filter: [
          { range: { posted_at: { gte: '2026-01-01T00:00:00.000Z', lt: '2026-02-01T00:00:00.000Z' } } },
          { terms: { format: ['reel', 'carousel'] } },
          {
            bool: {
              should: [
                { range: { views: { gte: 100000 } } },
                {
                  bool: {
                    filter: [
                      { range: { engagement_rate_by_views: { gte: 0.05 } } },
                      { terms: { hashtags: ['fitness'] } },
                    ],
                  },
                },
              ],
              minimum_should_match: 1,
            },
          },
          { range: { 'author.followers_count': { gte: 10000, lte: 500000 } } },
          { terms: { 'author.niches': ['fitness', 'nutrition'] } },
        ],
        must_not: [{ term: { has_paid_partnership_label: true } }],
      },
    });
  });

  it('compiles account filters to the exact query', () => {
    const node = parseFilters(
      {
        followers_count: { gte: 10000 },
        niches: { contains_any: ['fitness'] },
        category_label: { in: ['Personal Trainer'] },
        any_of: [{ is_verified: { eq: true } }, { publishing_languages: { contains_all: ['en', 'de'] } }],
      },
      'account',
      '/account/filters',
    );
    expect(compileFilter(node, 'account')).toEqual({
      bool: {
        filter: [
          { range: { followers_count: { gte: 10000 } } },
          { terms: { niches: ['fitness'] } },
          { terms: { 'category_label.keyword': ['personal trainer'] } },
          {
            bool: {
              should: [
                { term: { is_verified: true } },
                {
                  bool: {
                    filter: [{ term: { publishing_languages: 'en' } }, { term: { publishing_languages: 'de' } }],
                  },
                },
              ],
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });
});

describe('compileSort', () => {
  it('sorts on the field with missing values last, then on the ID', () => {
    expect(compileSort(parseSort({ by: 'views', order: 'desc' }, 'post', '/sort'), 'post')).toEqual([
      { views: { order: 'desc', missing: '_last', unmapped_type: 'long' } },
      { id: 'asc' },
    ]);
    expect(compileSort(parseSort({ by: 'posted_at', order: 'asc' }, 'post', '/sort'), 'post')).toEqual([
      { posted_at: { order: 'asc', missing: '_last', unmapped_type: 'date' } },
      { id: 'asc' },
    ]);
    expect(compileSort(parseSort({ by: 'engagement_rate_by_views' }, 'post', '/sort'), 'post')).toEqual([
      { engagement_rate_by_views: { order: 'desc', missing: '_last', unmapped_type: 'double' } },
      { id: 'asc' },
    ]);
    expect(compileSort(parseSort({ by: 'followers_count', order: 'asc' }, 'account', '/sort'), 'account')).toEqual([
      { followers_count: { order: 'asc', missing: '_last', unmapped_type: 'long' } },
      { id: 'asc' },
    ]);
  });

  it('refuses a field that is not sortable', () => {
    expect(() => compileSort({ field: 'post.media_count', order: 'asc' }, 'post')).toThrow(
      'field post.media_count is not sortable',
    );
  });
});

describe('field map against the index templates', () => {
  type Mapping = {
    type?: string;
    normalizer?: string;
    properties?: Record<string, Mapping>;
    fields?: Record<string, Mapping>;
  };
  const load = (name: string): Record<string, Mapping> =>
    JSON.parse(readFileSync(new URL(`../../index-templates/${name}.index.json`, import.meta.url), 'utf8')).template
      .mappings.properties;
  const indices = { posts: load('posts'), accounts: load('accounts') };

  function mappingAt(properties: Record<string, Mapping>, path: string): Mapping | undefined {
    const [head, ...rest] = path.split('.');
    const m = properties[head!];
    if (!m || rest.length === 0) return m;
    return mappingAt({ ...m.properties, ...m.fields }, rest.join('.'));
  }

  const COMPATIBLE: Record<FieldDef['type'], string[]> = {
    integer: ['long', 'integer'],
    number: ['double', 'float', 'scaled_float'],
    timestamp: ['date'],
    keyword: ['keyword'],
    keywords: ['keyword'],
    ids: ['keyword'],
    boolean: ['boolean'],
  };

  for (const scope of ['post', 'author', 'account'] as const) {
    for (const field of Object.values(FILTER_FIELDS[scope])) {
      // Posts do not keep the account metrics: an author filter on one asks the accounts index.
      const accountOnly = scope === 'author' && ACCOUNT_ONLY_AUTHOR_FIELDS.has(field.name);
      it(`${field.field} is indexed with a compatible type`, () => {
        const mapping = accountOnly
          ? mappingAt(indices.accounts, field.name)
          : mappingAt(indices[scope === 'account' ? 'accounts' : 'posts'], esPath(field.field));
        if (accountOnly) expect(mappingAt(indices.posts, esPath(field.field))).toBeUndefined();
        expect(mapping, esPath(field.field)).toBeDefined();
        expect(COMPATIBLE[field.type]).toContain(mapping!.type);
        // Values are lower-cased by the parser only where the index lower-cases them too.
        expect(mapping!.normalizer === 'lowercase_keyword').toBe(field.normalize !== undefined);
      });
    }
  }
});
