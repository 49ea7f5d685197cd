import { describe, expect, it } from 'vitest';
import { createSavedSearchSchema, storedSavedSearchSchema } from '../../src/query/alert-request.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';

// The client's order, which the normalized search does not keep: `author` before `filters`, and
// `lte` before `gte` in a range.
const sent = {
  author: { filters: { followers_count: { gte: 10_000 } } },
  filters: { views: { lte: 50_000, gte: 1000 }, format: { in: ['reel'] } },
  query: '  sourdough starter ',
};

function created(post: unknown) {
  const parsed = createSavedSearchSchema.safeParse({ name: 'loaves', post });
  if (!parsed.success) throw new Error(parsed.error.message);
  return parsed.data;
}

describe("a saved search's scope", () => {
  it('is kept exactly as sent, while the search it holds is the post search of that scope', () => {
    const input = created(sent);
    expect(JSON.stringify(input.post)).toBe(JSON.stringify(sent));
    const request = parsePostSearchRequest({ post: sent });
    expect(request.kind === 'initial' && request.search).toEqual(input.search);
    expect(input.search.query).toBe('sourdough starter');
  });

  it('reads back from its stored form into the same normalized search', () => {
    const input = created(sent);
    const stored: unknown = JSON.parse(JSON.stringify(input.post));
    const reread = storedSavedSearchSchema.safeParse({ post: stored });
    expect(reread.success && reread.data).toEqual(input.search);
  });

  it('keeps its own scope when parses follow each other, a failed one included', () => {
    expect(createSavedSearchSchema.safeParse({ name: 'bad', post: { filters: { views: { gte: 'x' } } } }).success).toBe(
      false,
    );
    const other = { query: 'pasta' };
    expect(created(other).post).toEqual(other);
    expect(created(sent).post).toEqual(sent);
  });

  it('refuses similar_to, at creation and when read back', () => {
    const post = { similar_to: 'SClk-1' };
    const refused = createSavedSearchSchema.safeParse({ name: 'alike', post });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues.map((i) => i.path.join('/'))).toEqual(['post/similar_to']);
    expect(storedSavedSearchSchema.safeParse({ post }).success).toBe(false);
  });
});
