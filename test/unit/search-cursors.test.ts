import { describe, expect, it } from 'vitest';
import type { PagedState } from '../../src/engine/search.ts';
import { ExpiredCursorError, type ValidationFailedError } from '../../src/internal/errors.ts';
import { createCursorCodec } from '../../src/query/cursor-codec.ts';
import { SEARCH_VERSION, type AccountSearch, type PostSearch } from '../../src/query/search-codec.ts';
import { accountCursors, postCursors } from '../../src/services/search/cursors.ts';

const codec = createCursorCodec({ secret: 'unit-test-signing-secret-0123456789abcdef', ttlSeconds: 3600 });
const posts = postCursors(codec);
const accounts = accountCursors(codec);

const postSearch: PostSearch = {
  query: 'retinol for beginners',
  filter: { kind: 'range', field: 'post.views', gte: 1000 },
  sort: null,
};
const fused = {
  kind: 'fused',
  snapshot: 'pit-1',
  shared: true,
  mode: 'hybrid',
  vector: 'AAAA',
  offset: 20,
  after: null,
} as const;

function detail(fn: () => unknown): { type: string; detail: string } {
  try {
    fn();
  } catch (error) {
    return { type: (error as Error).constructor.name, detail: (error as ValidationFailedError).detail };
  }
  throw new Error('expected a throw');
}

describe('search cursors', () => {
  it('round-trip the request, the original limit and the typed engine state', () => {
    const cursor = posts.encode({ search: postSearch, limit: 20, state: fused });
    expect(posts.decode(cursor)).toEqual({ search: postSearch, limit: 20, state: fused });
    // A question's pages carry its weights and that its vector was read as a sentence (its floor).
    const question = { ...fused, weights: [1.2, 0.8], sentence: true as const };
    expect(posts.decode(posts.encode({ search: postSearch, limit: 20, state: question })).state).toEqual(question);
    const accountSearch: AccountSearch = {
      query: null,
      filter: { kind: 'and', children: [] },
      posts: { minimum: 2, filter: { kind: 'exists', field: 'post.views' } },
      sort: { field: 'account.followers_count', order: 'desc' },
    };
    const paged: PagedState = { kind: 'paged', snapshot: 'pit-2', shared: false, after: [12000, 'acc_x'] };
    expect(accounts.decode(accounts.encode({ search: accountSearch, limit: 5, state: paged }))).toEqual({
      search: accountSearch,
      limit: 5,
      state: paged,
    });
  });

  it('answer a signed cursor of the earlier version, or of a shape this version does not know, with 410', () => {
    const v1 = codec.encode({
      v: 1,
      kind: 'posts',
      search: postSearch,
      limit: 20,
      state: { pit: 'pit-1', after: [1.5, 'post_x'] },
    });
    expect(detail(() => posts.decode(v1))).toEqual({
      type: 'ExpiredCursorError',
      detail:
        'This cursor was issued by an earlier version of the service; start the search again from the first page.',
    });
    const { vector: _dropped, ...withoutVector } = fused;
    const misshapen = codec.encode({
      v: SEARCH_VERSION,
      op: 'post',
      search: postSearch,
      limit: 20,
      state: withoutVector,
    });
    expect(() => posts.decode(misshapen)).toThrow(ExpiredCursorError);
    const badFilter = codec.encode({
      v: SEARCH_VERSION,
      op: 'post',
      search: { ...postSearch, filter: { kind: 'near', field: 'post.views' } },
      limit: 20,
      state: fused,
    });
    expect(() => posts.decode(badFilter)).toThrow(ExpiredCursorError);
  });

  it('answer a cursor of the previous version, whose similar_to was the string sent, with 410', () => {
    const lookalike: PostSearch = { ...postSearch, query: null, similarTo: { kind: 'alias', alias: 'SClk-1' } };
    const similar = { kind: 'similar', snapshot: 'pit-1', shared: true, vector: 'AAAA', exclude: 'post_x', offset: 5 };
    const current = { op: 'post', search: lookalike, limit: 5, state: similar };
    expect(posts.decode(codec.encode({ v: SEARCH_VERSION, ...current })).search.similarTo).toEqual({
      kind: 'alias',
      alias: 'SClk-1',
    });
    const previous = { ...current, search: { ...lookalike, similarTo: 'SClk-1' } };
    expect(() => posts.decode(codec.encode({ v: SEARCH_VERSION - 1, ...previous }))).toThrow(ExpiredCursorError);
    // The same payload claiming the current version is refused by its shape.
    expect(() => posts.decode(codec.encode({ v: SEARCH_VERSION, ...previous }))).toThrow(ExpiredCursorError);
  });

  it('refuse a cursor of the other operation with 422', () => {
    const cursor = posts.encode({
      search: postSearch,
      limit: 20,
      state: { kind: 'paged', snapshot: 'p', shared: false, after: [1] },
    });
    expect(detail(() => accounts.decode(cursor))).toEqual({
      type: 'ValidationFailedError',
      detail: '/cursor: this cursor belongs to another operation',
    });
  });
});
