import { describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../../src/internal/errors.ts';
import type { FilterNode } from '../../src/query/ast.ts';
import {
  FILTER_FIELDS,
  OPERATORS,
  foldCase,
  operatorsOf,
  type FieldDef,
  type FilterScope,
  type Operator,
} from '../../src/query/fields.ts';
import { FILTER_LIMITS, parseFilters } from '../../src/query/parse-filters.ts';
import { parseSort } from '../../src/query/parse-sort.ts';

const post = (input: unknown) => parseFilters(input, 'post', '/post/filters');
const author = (input: unknown) => parseFilters(input, 'author', '/post/author/filters');
const account = (input: unknown) => parseFilters(input, 'account', '/account/filters');

/** The detail of the ValidationFailedError thrown by `run`. */
function detailOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailedError);
    const e = error as ValidationFailedError;
    expect(e.status).toBe(422);
    expect(e.problem).toBe('validation-failed');
    return e.detail;
  }
  throw new Error('expected a ValidationFailedError');
}

const postError = (input: unknown) => detailOf(() => post(input));

/** A valid operand of `op` on `field`. */
function sample(field: FieldDef, op: Operator): unknown {
  if (op === 'exists') return true;
  if (op === 'eq') return field.type === 'boolean' ? false : 'x';
  if (['gt', 'gte', 'lt', 'lte'].includes(op)) {
    return field.type === 'timestamp' ? '2026-01-31T12:00:00Z' : field.type === 'integer' ? 10 : 0.5;
  }
  return field.values ? [...field.values] : ['a', 'b'];
}

describe('every operator on every field', () => {
  const scopes: FilterScope[] = ['post', 'author', 'account'];
  for (const scope of scopes) {
    for (const field of Object.values(FILTER_FIELDS[scope])) {
      const allowed = operatorsOf(field);
      it(`${scope}.${field.name} (${field.type}) takes ${allowed.join(', ')} and nothing else`, () => {
        for (const op of OPERATORS) {
          const run = () => parseFilters({ [field.name]: { [op]: sample(field, op) } }, scope, '/f');
          if (allowed.includes(op)) {
            expect(run, op).not.toThrow();
          } else {
            expect(detailOf(run)).toMatch(new RegExp(`^/f/${field.name}/${op}: operator not allowed on the `));
          }
        }
      });
    }
  }

  it('gives operators by type, with exists on nullable and array fields', () => {
    const ops = (scope: FilterScope, name: string) => operatorsOf(FILTER_FIELDS[scope][name]!);
    expect(ops('post', 'likes')).toEqual(['gt', 'gte', 'lt', 'lte']);
    expect(ops('post', 'views')).toEqual(['gt', 'gte', 'lt', 'lte', 'exists']);
    expect(ops('post', 'engagement_rate_by_views')).toEqual(['gt', 'gte', 'lt', 'lte', 'exists']);
    expect(ops('post', 'posted_at')).toEqual(['gt', 'gte', 'lt', 'lte']);
    expect(ops('post', 'format')).toEqual(['eq', 'in', 'not_in']);
    expect(ops('post', 'primary_language')).toEqual(['eq', 'in', 'not_in', 'exists']);
    expect(ops('post', 'hashtags')).toEqual(['contains_any', 'contains_all', 'contains_none', 'exists']);
    expect(ops('author', 'niches')).toEqual(['contains_any', 'contains_all', 'contains_none', 'exists']);
    expect(ops('post', 'comments_enabled')).toEqual(['eq']);
    expect(ops('post', 'has_paid_partnership_label')).toEqual(['eq', 'exists']);
  });
});

describe('leaves', () => {
  it('merges the bounds of one field into one range, contradictory or not', () => {
    expect(post({ views: { gte: 1000, lt: 5000, gt: 10, lte: 1 } })).toEqual({
      kind: 'range',
      field: 'post.views',
      gte: 1000,
      lt: 5000,
      gt: 10,
      lte: 1,
    });
  });

  it('takes any number on a number field', () => {
    expect(post({ engagement_rate_by_views: { gte: 0.05, lt: 1 } })).toEqual({
      kind: 'range',
      field: 'post.engagement_rate_by_views',
      gte: 0.05,
      lt: 1,
    });
  });

  it('normalizes UTC timestamps to millisecond Z form', () => {
    expect(post({ posted_at: { gte: '2026-01-01T00:00:00+00:00', lt: '2026-02-01T12:30:00.5Z' } })).toEqual({
      kind: 'range',
      field: 'post.posted_at',
      gte: '2026-01-01T00:00:00.000Z',
      lt: '2026-02-01T12:30:00.500Z',
    });
  });

  it('parses keyword eq, in and not_in (not_in as not over terms)', () => {
    expect(post({ format: { eq: 'reel' } })).toEqual({ kind: 'term', field: 'post.format', value: 'reel' });
    expect(post({ format: { in: ['reel', 'carousel'] } })).toEqual({
      kind: 'terms',
      field: 'post.format',
      values: ['reel', 'carousel'],
    });
    expect(post({ format: { not_in: ['reel'] } })).toEqual({
      kind: 'not',
      child: { kind: 'terms', field: 'post.format', values: ['reel'] },
    });
  });

  it('keeps keyword values case-sensitive unless the field is case-insensitive', () => {
    expect(post({ shortcode: { eq: 'AbC' } })).toEqual({ kind: 'term', field: 'post.shortcode', value: 'AbC' });
  });

  it('parses contains_any, contains_all and contains_none (as not over contains any)', () => {
    expect(author({ niches: { contains_any: ['fitness', 'food'] } })).toEqual({
      kind: 'contains',
      field: 'author.niches',
      mode: 'any',
      values: ['fitness', 'food'],
    });
    expect(post({ topics: { contains_all: ['a', 'b'] } })).toEqual({
      kind: 'contains',
      field: 'post.topics',
      mode: 'all',
      values: ['a', 'b'],
    });
    expect(post({ offer_types: { contains_none: ['discount'] } })).toEqual({
      kind: 'not',
      child: { kind: 'contains', field: 'post.offer_types', mode: 'any', values: ['discount'] },
    });
  });

  it('parses boolean eq', () => {
    expect(post({ comments_enabled: { eq: false } })).toEqual({
      kind: 'term',
      field: 'post.comments_enabled',
      value: false,
    });
    expect(author({ is_verified: { eq: true } })).toEqual({ kind: 'term', field: 'author.is_verified', value: true });
  });

  it('parses exists true and false (false as not over exists)', () => {
    expect(post({ primary_language: { exists: true } })).toEqual({ kind: 'exists', field: 'post.primary_language' });
    expect(post({ views: { exists: false } })).toEqual({
      kind: 'not',
      child: { kind: 'exists', field: 'post.views' },
    });
  });

  it('ANDs several operators on one field, in input order', () => {
    expect(post({ views: { exists: true, gte: 10, lte: 20 } })).toEqual({
      kind: 'and',
      children: [
        { kind: 'exists', field: 'post.views' },
        { kind: 'range', field: 'post.views', gte: 10, lte: 20 },
      ],
    });
  });

  it('strips one leading # from hashtags and compares them case-insensitively', () => {
    expect(post({ hashtags: { contains_any: ['#Food', 'TRAVEL', '##x'] } })).toEqual({
      kind: 'contains',
      field: 'post.hashtags',
      mode: 'any',
      values: ['food', 'travel', '#x'],
    });
  });

  it('strips one leading @ from handles and lower-cases handles and category labels', () => {
    expect(account({ handle: { in: ['@Alice', 'bob'] } })).toEqual({
      kind: 'terms',
      field: 'account.handle',
      values: ['alice', 'bob'],
    });
    expect(author({ handle: { eq: '@Alice' } })).toEqual({ kind: 'term', field: 'author.handle', value: 'alice' });
    expect(account({ category_label: { eq: 'Digital Creator' } })).toEqual({
      kind: 'term',
      field: 'account.category_label',
      value: 'digital creator',
    });
  });

  it('lower-cases per code point, as the index normalizer does', () => {
    expect(foldCase('ΟΔΟΣ')).toBe('οδοσ'); // no final sigma
    expect(foldCase('İstanbul')).toBe('istanbul'); // no combining dot
    expect(foldCase('Straße')).toBe('straße');
  });
});

describe('composition', () => {
  it('parses {} as an empty AND (no constraint)', () => {
    expect(post({})).toEqual({ kind: 'and', children: [] });
  });

  it('ANDs the entries of a filters object', () => {
    expect(post({ format: { eq: 'reel' }, views: { gte: 1 } })).toEqual({
      kind: 'and',
      children: [
        { kind: 'term', field: 'post.format', value: 'reel' },
        { kind: 'range', field: 'post.views', gte: 1 },
      ],
    });
  });

  it('parses any_of as OR, all_of as AND and not as NOT', () => {
    expect(
      post({
        any_of: [{ likes: { gte: 100 } }, { comments: { gte: 10 }, format: { eq: 'reel' } }],
        all_of: [{ any_of: [{ views: { gte: 1 } }] }, { not: { audio_type: { eq: 'music' } } }],
      }),
    ).toEqual({
      kind: 'and',
      children: [
        {
          kind: 'or',
          children: [
            { kind: 'range', field: 'post.likes', gte: 100 },
            {
              kind: 'and',
              children: [
                { kind: 'range', field: 'post.comments', gte: 10 },
                { kind: 'term', field: 'post.format', value: 'reel' },
              ],
            },
          ],
        },
        {
          kind: 'and',
          children: [
            { kind: 'or', children: [{ kind: 'range', field: 'post.views', gte: 1 }] },
            { kind: 'not', child: { kind: 'term', field: 'post.audio_type', value: 'music' } },
          ],
        },
      ],
    });
  });

  it(`allows ${FILTER_LIMITS.maxDepth} levels of nesting`, () => {
    const leaf = { views: { gte: 1 } };
    expect(() => post({ not: { any_of: [{ all_of: [{ not: leaf }] }] } })).not.toThrow();
  });

  it(`allows ${FILTER_LIMITS.maxBranches} branches`, () => {
    const branches = Array.from({ length: FILTER_LIMITS.maxBranches }, (_, i) => ({ likes: { gte: i } }));
    expect((post({ any_of: branches }) as Extract<FilterNode, { kind: 'or' }>).children).toHaveLength(20);
  });

  it('takes 500 values in a list', () => {
    const values = Array.from({ length: 500 }, (_, i) => `v${i}`);
    expect(() => post({ topics: { contains_any: values } })).not.toThrow();
  });
});

describe('invalid filters → 422 with the pointer of the offending value', () => {
  it('rejects an unknown field, suggesting close names', () => {
    expect(postError({ viewz: { gte: 1 } })).toBe('/post/filters/viewz: unknown field; did you mean views?');
    expect(postError({ audio: { eq: 'x' } })).toBe(
      '/post/filters/audio: unknown field; did you mean audio_type or audio_id?',
    );
    expect(postError({ postedAt: { gte: 'x' } })).toBe(
      '/post/filters/postedAt: unknown field; did you mean posted_at?',
    );
    expect(postError({ or: [] })).toBe('/post/filters/or: unknown field; did you mean any_of?');
  });

  it('rejects an unknown field with no close name, listing the allowed ones', () => {
    expect(detailOf(() => account({ zzz: { eq: 'x' } }))).toBe(
      `/account/filters/zzz: unknown field; expected any_of, all_of, not or an account field: ${Object.keys(FILTER_FIELDS.account).join(', ')}`,
    );
  });

  it('lists the allowed fields once for several unknown keys, each pointer named', () => {
    const fields = Object.keys(FILTER_FIELDS.post).join(', ');
    expect(postError({ zzz: { eq: 'x' }, qqq: { eq: 'y' }, viewz: { gte: 1 } })).toBe(
      `/post/filters/zzz, /post/filters/qqq: unknown field; expected any_of, all_of, not or a post field: ${fields}; ` +
        '/post/filters/viewz: unknown field; did you mean views?',
    );
  });

  it('points a field of the neighbouring scope to its place', () => {
    expect(postError({ followers_count: { gte: 1 } })).toBe(
      '/post/filters/followers_count: unknown post field; author filters go in /post/author/filters',
    );
    expect(postError({ author: { followers_count: { gte: 1 } } })).toBe(
      '/post/filters/author: unknown post field; author filters go in /post/author/filters',
    );
    expect(detailOf(() => author({ views: { gte: 1 } }))).toBe(
      '/post/author/filters/views: unknown author field; post filters go in /post/filters',
    );
    expect(detailOf(() => account({ views: { gte: 1 } }))).toBe(
      '/account/filters/views: unknown account field; post filters go in /account/posts/filters',
    );
  });

  it('rejects an operator that does not fit the type, naming the allowed ones', () => {
    expect(postError({ format: { gte: 'a' } })).toBe(
      '/post/filters/format/gte: operator not allowed on the keyword field format; expected one of eq, in, not_in',
    );
    expect(postError({ views: { contains_any: ['1'] } })).toBe(
      '/post/filters/views/contains_any: operator not allowed on the nullable integer field views; expected one of gt, gte, lt, lte, exists',
    );
    expect(postError({ likes: { exists: true } })).toBe(
      '/post/filters/likes/exists: operator not allowed on the integer field likes; expected one of gt, gte, lt, lte',
    );
    expect(postError({ hashtags: { in: ['a'] } })).toBe(
      '/post/filters/hashtags/in: operator not allowed on the array of strings field hashtags; expected one of contains_any, contains_all, contains_none, exists',
    );
  });

  it('rejects an unknown operator', () => {
    expect(postError({ format: { equals: 'reel' } })).toBe(
      '/post/filters/format/equals: unknown operator; expected one of eq, in, not_in',
    );
  });

  it('rejects a value of the wrong type', () => {
    expect(postError({ views: { gte: '1000' } })).toBe('/post/filters/views/gte: expected an integer');
    expect(postError({ views: { gte: 1.5 } })).toBe('/post/filters/views/gte: expected an integer');
    expect(postError({ engagement_rate_by_views: { gte: '0.1' } })).toBe(
      '/post/filters/engagement_rate_by_views/gte: expected a number',
    );
    expect(postError({ comments_enabled: { eq: 'true' } })).toBe(
      '/post/filters/comments_enabled/eq: expected true or false',
    );
    expect(postError({ views: { exists: 1 } })).toBe('/post/filters/views/exists: expected true or false');
    expect(postError({ format: { eq: 5 } })).toBe('/post/filters/format/eq: expected a string');
    expect(postError({ format: { in: 'reel' } })).toBe(
      '/post/filters/format/in: expected an array of 1 to 500 strings',
    );
    expect(postError({ topics: { contains_any: ['a', 7] } })).toBe(
      '/post/filters/topics/contains_any/1: expected a string',
    );
    expect(postError({ media_types: { contains_any: ['gif'] } })).toBe(
      '/post/filters/media_types/contains_any/0: expected one of "image", "video"',
    );
  });

  it('rejects an empty list, a too long list, an empty or too long string and duplicates', () => {
    expect(postError({ format: { in: [] } })).toBe(
      '/post/filters/format/in: expected an array of 1 to 500 strings, got an empty array',
    );
    const many = Array.from({ length: 501 }, (_, i) => `v${i}`);
    expect(postError({ topics: { contains_any: many } })).toBe(
      '/post/filters/topics/contains_any: expected an array of 1 to 500 strings, got more',
    );
    expect(postError({ format: { eq: '' } })).toBe('/post/filters/format/eq: expected a non-empty string');
    expect(postError({ format: { eq: 'x'.repeat(201) } })).toBe(
      '/post/filters/format/eq: expected at most 200 characters',
    );
    expect(postError({ hashtags: { contains_any: ['#'] } })).toBe(
      '/post/filters/hashtags/contains_any/0: expected a non-empty hashtag after "#"',
    );
    expect(postError({ format: { in: ['reel', 'reel'] } })).toBe('/post/filters/format/in/1: duplicate value "reel"');
    expect(postError({ hashtags: { contains_all: ['#Food', 'food'] } })).toBe(
      '/post/filters/hashtags/contains_all/1: duplicate value "food" (values are compared case-insensitively)',
    );
  });

  it('rejects a bad timestamp', () => {
    const expected = 'expected an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00Z';
    expect(postError({ posted_at: { gte: 'yesterday' } })).toBe(`/post/filters/posted_at/gte: ${expected}`);
    expect(postError({ posted_at: { gte: '2026-01-31' } })).toBe(`/post/filters/posted_at/gte: ${expected}`);
    expect(postError({ posted_at: { gte: 1767225600000 } })).toBe(`/post/filters/posted_at/gte: ${expected}`);
    expect(postError({ posted_at: { gte: '2026-02-30T00:00:00Z' } })).toBe(
      '/post/filters/posted_at/gte: not a real date and time: 2026-02-30T00:00:00Z',
    );
  });

  it('rejects a non-UTC timestamp', () => {
    expect(postError({ posted_at: { lt: '2026-01-31T12:00:00+02:00' } })).toBe(
      '/post/filters/posted_at/lt: expected a UTC timestamp (Z or +00:00), got offset +02:00',
    );
    expect(postError({ posted_at: { lt: '2026-01-31T12:00:00' } })).toBe(
      '/post/filters/posted_at/lt: expected a UTC timestamp; add "Z" (no time zone given)',
    );
  });

  it('rejects an empty operator object and a bare value', () => {
    expect(postError({ views: {} })).toBe(
      '/post/filters/views: expected at least one operator: gt, gte, lt, lte, exists',
    );
    expect(postError({ format: 'reel' })).toBe(
      '/post/filters/format: expected an operator object such as {"in": ["…"]}; operators of this keyword field: eq, in, not_in',
    );
    expect(postError({ views: [1] })).toBe(
      '/post/filters/views: expected an operator object such as {"gte": 1000}; operators of this integer field: gt, gte, lt, lte, exists',
    );
  });

  it('rejects nesting deeper than the limit', () => {
    const leaf = { views: { gte: 1 } };
    expect(postError({ not: { not: { not: { not: { not: leaf } } } } })).toBe(
      '/post/filters/not/not/not/not/not: nesting too deep; any_of, all_of and not nest at most 4 levels',
    );
    expect(postError({ any_of: [{ any_of: [{ any_of: [{ any_of: [{ any_of: [leaf] }] }] }] }] })).toBe(
      '/post/filters/any_of/0/any_of/0/any_of/0/any_of/0/any_of: nesting too deep; any_of, all_of and not nest at most 4 levels',
    );
  });

  it('rejects an any_of that is not an array of 1 to 20 non-empty filters objects', () => {
    const expected = 'expected an array of 1 to 20 filters objects';
    expect(postError({ any_of: { views: { gte: 1 } } })).toBe(`/post/filters/any_of: ${expected}`);
    expect(postError({ all_of: [] })).toBe(`/post/filters/all_of: ${expected}, got an empty array`);
    const branches = Array.from({ length: 21 }, () => ({ likes: { gte: 1 } }));
    expect(postError({ any_of: branches })).toBe(`/post/filters/any_of: ${expected}, got 21`);
    expect(postError({ any_of: [{}, 'x'] })).toBe(
      '/post/filters/any_of/0: expected a non-empty filters object; /post/filters/any_of/1: expected a filters object',
    );
  });

  it('rejects a not that is not a non-empty filters object', () => {
    expect(postError({ not: [{ views: { gte: 1 } }] })).toBe('/post/filters/not: expected a filters object');
    expect(postError({ not: {} })).toBe('/post/filters/not: expected a non-empty filters object');
  });

  it('rejects filters that are not an object', () => {
    expect(postError([])).toBe('/post/filters: expected a filters object: field names mapped to operator objects');
    expect(postError(null)).toBe('/post/filters: expected a filters object: field names mapped to operator objects');
  });

  it(`rejects more than ${FILTER_LIMITS.maxConditions} conditions, once`, () => {
    const branch = (i: number) => ({ likes: { gte: i, lte: i + 10 }, comments: { gte: 1, lte: 2 }, views: { gte: 1 } });
    const input = { any_of: Array.from({ length: 20 }, (_, i) => ({ any_of: [branch(i), branch(i), branch(i)] })) };
    expect(postError(input)).toBe(
      '/post/filters/any_of/13/any_of/1/likes/gte: too many conditions; at most 200 operators in one filters object, all levels together',
    );
  });

  it('reports up to five problems, then how many more', () => {
    expect(
      postError({
        viewz: {},
        views: { gte: 'x' },
        format: { in: [] },
        likes: {},
        comments: { eq: 1 },
        topics: 1,
        media_count: { gt: 0.5 },
      }),
    ).toBe(
      [
        '/post/filters/viewz: unknown field; did you mean views?',
        // Two pointers with one reason share it.
        '/post/filters/views/gte, /post/filters/media_count/gt: expected an integer',
        '/post/filters/format/in: expected an array of 1 to 500 strings, got an empty array',
        '/post/filters/likes: expected at least one operator: gt, gte, lt, lte',
        '/post/filters/comments/eq: operator not allowed on the integer field comments; expected one of gt, gte, lt, lte',
        'and 1 more',
      ].join('; '),
    );
  });

  it('escapes keys in pointers (RFC 6901)', () => {
    expect(postError({ 'a/b~c': { eq: 1 } })).toMatch(/^\/post\/filters\/a~1b~0c: unknown field/);
  });

  it('does not take inherited property names for fields', () => {
    expect(postError({ constructor: { eq: 'x' } })).toMatch(
      /^\/post\/filters\/constructor: unknown field; expected any_of/,
    );
    expect(postError(JSON.parse('{"__proto__": {"eq": "x"}}'))).toMatch(/^\/post\/filters\/__proto__: unknown field/);
  });
});

describe('parseSort', () => {
  it('takes the sortable post fields, desc by default', () => {
    expect(parseSort({ by: 'views', order: 'desc' }, 'post', '/sort')).toEqual({ field: 'post.views', order: 'desc' });
    expect(parseSort({ by: 'posted_at' }, 'post', '/sort')).toEqual({ field: 'post.posted_at', order: 'desc' });
    for (const by of ['likes', 'comments', 'engagement_rate_by_views', 'view_ratio_to_account_baseline']) {
      expect(parseSort({ by, order: 'asc' }, 'post', '/sort')).toEqual({ field: `post.${by}`, order: 'asc' });
    }
  });

  it('takes the sortable account fields', () => {
    for (const by of ['followers_count', 'following_count', 'posts_count']) {
      expect(parseSort({ by }, 'account', '/sort')).toEqual({ field: `account.${by}`, order: 'desc' });
    }
  });

  it('rejects an unknown or missing by, naming the allowed fields', () => {
    const postFields = 'posted_at, views, likes, comments, engagement_rate_by_views, view_ratio_to_account_baseline';
    expect(detailOf(() => parseSort({ by: 'media_count' }, 'post', '/sort'))).toBe(
      `/sort/by: expected one of ${postFields}`,
    );
    expect(detailOf(() => parseSort({ order: 'asc' }, 'post', '/sort'))).toBe(
      `/sort/by: required, expected one of ${postFields}`,
    );
    expect(detailOf(() => parseSort({ by: 'views' }, 'account', '/sort'))).toBe(
      '/sort/by: expected one of followers_count, following_count, posts_count, followers_growth_7d, followers_growth_30d, median_views_90d, engagement_rate_90d, posts_per_week_90d',
    );
  });

  it('rejects an unknown order, an extra key and a non-object', () => {
    expect(detailOf(() => parseSort({ by: 'views', order: 'DESC' }, 'post', '/sort'))).toBe(
      '/sort/order: expected "asc" or "desc"',
    );
    expect(detailOf(() => parseSort({ by: 'views', direction: 'asc' }, 'post', '/sort'))).toBe(
      '/sort/direction: unknown field',
    );
    expect(detailOf(() => parseSort('views', 'post', '/sort'))).toBe(
      '/sort: expected an object {"by": <field>, "order": "asc" | "desc"}',
    );
  });
});
