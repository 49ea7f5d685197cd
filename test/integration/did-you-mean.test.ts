import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSearchResponseSchema } from '../../src/contract/api.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('did-you-mean');
  const posts = [
    'My sourdough starter after five days',
    'Feeding a sourdough starter twice a day',
    'Sourdough loaf with a crackly crust',
    'A rye starter for dense bread',
    'Weekend baking: sourdough focaccia',
    // "matcha" is carried by two posts, "macha" (one edit away) by one.
    'Breakfast matcha with oat milk',
    'Iced matcha for lunch',
    'Macha tea ceremony',
  ];
  const written = await stack.ingest(
    [
      accountObs({ platform_id: 'dym-a' }),
      ...posts.map((caption, i) => postObs('dym-a', { platform_id: `dym-p${i}`, caption, hashtags: [] })),
    ],
    { vectors: false },
  );
  expect(written.statusCode).toBe(200);
});
afterAll(async () => stack?.close());

async function search(query: string) {
  const response = await stack.post('/v1/social/posts/search', { post: { query }, limit: 10 });
  expect(response.statusCode).toBe(200);
  return postSearchResponseSchema.parse(response.body);
}

describe('suggested_query', () => {
  it('is not needed for a word no post carries: ranked by words alone, the search corrects it itself', async () => {
    const body = await search('sourdugh startr');
    expect(body.corrected_query).toBe('sourdough starter');
    expect(body.data.length).toBeGreaterThanOrEqual(3);
    expect(body).not.toHaveProperty('suggested_query');
  });

  it('corrects a query with exact entities, which is searched as typed, keeping case, other words and entities', async () => {
    const body = await search('Sourdugh STARTR with #sourdugh');
    expect(body).not.toHaveProperty('corrected_query');
    expect(body.suggested_query).toBe('Sourdough STARTER with #sourdugh');
  });

  it('corrects a word a post carries when a neighbour finds more, after the spec members', async () => {
    const body = await search('macha');
    expect(body.suggested_query).toBe('matcha');
    expect(Object.keys(body)).toEqual(['request_id', 'data', 'has_more', 'next_cursor', 'suggested_query']);
  });

  it('never suggests a word that finds fewer posts', async () => {
    // "matcha" (two posts) finds fewer than 3, but its neighbour "macha" is carried by fewer still.
    const kept = await search('matcha');
    expect(kept.data).toHaveLength(2);
    expect(kept).not.toHaveProperty('suggested_query');
    // The other way round, the neighbour finds more: it is suggested.
    const corrected = await search('macha');
    expect(corrected.data).toHaveLength(1);
    expect(corrected.suggested_query).toBe('matcha');
  });

  it('is absent when the query found 3 posts or more, or nothing is misspelt', async () => {
    const found = await search('sourdough');
    expect(found.data.length).toBeGreaterThanOrEqual(3);
    expect(found).not.toHaveProperty('suggested_query');
    const nothing = await search('zxqv wplkj');
    expect(nothing.data).toHaveLength(0);
    expect(nothing).not.toHaveProperty('suggested_query');
  });

  it('is absent from filters-only searches and continuations', async () => {
    const filtered = await stack.post('/v1/social/posts/search', {
      post: { filters: { views: { gte: 1 } } },
      limit: 1,
    });
    expect(filtered.statusCode).toBe(200);
    expect(filtered.body).not.toHaveProperty('suggested_query');
    const next = await stack.post('/v1/social/posts/search', { cursor: filtered.body.next_cursor });
    expect(next.statusCode).toBe(200);
    expect(next.body).not.toHaveProperty('suggested_query');
  });
});
