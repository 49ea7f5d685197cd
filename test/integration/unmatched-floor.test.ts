import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { cosine } from '../../src/domain/lookalike.ts';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// SEARCH_SIMILARITY_FLOOR_UNMATCHED, with the real model: a query none of whose words any post
// carries or English holds (slips it cannot correct, another language) answers only neighbours
// above it, in its search, its facets and its counts alike; a query with a word posts carry, a
// misspelling the service corrects, or English words no post carries keeps the ordinary floor.
// (For a model whose cosines sit in a narrow band: bench/relevance.md, "Other models".) The
// floors sit low for all-MiniLM-L6-v2's cosines of such slips.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const FLOOR = 0.1;
const UNMATCHED = 0.3;
const POSTS = {
  bedtime: 'Bedtime skincare steps I swear by: cleanser, serum, moisturiser before sleep',
  evening: 'My evening skincare regimen, products linked in bio',
  serum: 'Which serum goes first? Layering actives without irritation',
  tyre: 'How to change a flat tyre on the motorway safely',
};
const id = (key: keyof typeof POSTS) => mintId('post', `unm-${key}`);
// Slips too far from any word posts carry to be corrected ("skincare" is three edits away).
const UNMATCHED_QUERY = 'skinkair nitely';
// No post carries "nightly", "complexion" or "upkeep", words of English; "serum" is carried.
const ENGLISH_QUERY = 'nightly complexion upkeep';
const MATCHED_QUERY = 'nightly complexion serum';

let stack: Stack;
let plain: TestRuntime;
let cosines: Map<string, number>;

beforeAll(async () => {
  stack = await startStack('unmatched', {
    MODEL_DIR,
    SEARCH_RANKING: 'hybrid',
    SEARCH_SIMILARITY_FLOOR: String(FLOOR),
    SEARCH_SIMILARITY_FLOOR_UNMATCHED: String(UNMATCHED),
  });
  await stack.runtime.embedder.ready();
  // The same indices and model without the unmatched floor.
  const { SEARCH_SIMILARITY_FLOOR_UNMATCHED: _, ...config } = stack.config;
  plain = openTestRuntime(config);
  await plain.ready();
  await plain.api.app.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'unm-a', handle: 'unmatched.author' }),
    ...Object.entries(POSTS).map(([key, caption]) =>
      postObs('unm-a', { platform_id: `unm-${key}`, caption, format: key === 'tyre' ? 'reel' : 'carousel' }),
    ),
  ]);
  expect(response.statusCode).toBe(200);
  // Each post's cosine to the unmatched query, as the kNN side reads it.
  const query = await stack.runtime.embedder.embedQuery(UNMATCHED_QUERY);
  const vectors = await stack.runtime.engine.reads.postVectors(
    Object.keys(POSTS).map((k) => id(k as keyof typeof POSTS)),
  );
  cosines = new Map([...vectors].map(([postId, vector]) => [postId, cosine(vector, query)]));
}, 120_000);

afterAll(async () => {
  await plain?.api.app.close();
  await plain?.close();
  await stack?.close();
});

/** The same request answered without the unmatched floor. */
async function withoutUnmatchedFloor(url: string, body: Record<string, unknown>) {
  const response = await plain.api.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

const search = (query: string) => stack.post('/v1/social/posts/search', { post: { query }, limit: 10 });
const ids = (body: { data: Array<{ id: string }> }) => body.data.map((p) => p.id);

describe('the unmatched floor (SEARCH_SIMILARITY_FLOOR_UNMATCHED)', () => {
  it('holds a query no post has a word of to neighbours above it, where the ordinary floor shows more', async () => {
    const between = [...cosines].filter(([, c]) => c >= FLOOR && c < UNMATCHED).map(([postId]) => postId);
    // The fixture's point: some skincare post is nearer than the ordinary floor, none above the unmatched one.
    expect(between.length, JSON.stringify([...cosines])).toBeGreaterThan(0);
    const above = [...cosines].filter(([, c]) => c >= UNMATCHED).map(([postId]) => postId);

    const gated = await search(UNMATCHED_QUERY);
    expect(gated.statusCode).toBe(200);
    expect(ids(gated.body).sort()).toEqual(above.sort());

    const ordinary = await withoutUnmatchedFloor('/v1/social/posts/search', {
      post: { query: UNMATCHED_QUERY },
      limit: 10,
    });
    expect(ids(ordinary)).toEqual(expect.arrayContaining(between));
  });

  it('counts and facets what the search shows', async () => {
    const shown = ids((await search(UNMATCHED_QUERY)).body).length;
    const facets = await stack.post('/v1/social/posts/facets', {
      post: { query: UNMATCHED_QUERY },
      facets: [{ field: 'format' }],
    });
    expect(facets.statusCode).toBe(200);
    const counted = (facets.body.facets.format as Array<{ count: number }>).reduce((sum, f) => sum + f.count, 0);
    expect(counted).toBe(shown);
    // The fixtures' posts are all of 30 May 2026.
    const request = {
      post: {
        query: UNMATCHED_QUERY,
        filters: { posted_at: { gte: '2026-05-01T00:00:00Z', lt: '2026-07-01T00:00:00Z' } },
      },
      interval: 'month',
    };
    const counts = await stack.post('/v1/social/posts/counts', request);
    expect(counts.statusCode, JSON.stringify(counts.body)).toBe(200);
    expect(counts.body.total).toBe(shown);
    // Without it, the neighbours under it are counted too.
    const ordinary = await withoutUnmatchedFloor('/v1/social/posts/counts', request);
    expect(ordinary.total).toBeGreaterThan(shown);
  });

  it('answers a query of English words no post carries as the ordinary floor does: it is no nonsense', async () => {
    const query = await stack.runtime.embedder.embedQuery(ENGLISH_QUERY);
    const vectors = await stack.runtime.engine.reads.postVectors(
      Object.keys(POSTS).map((k) => id(k as keyof typeof POSTS)),
    );
    const between = [...vectors].filter(([, v]) => cosine(v, query) >= FLOOR && cosine(v, query) < UNMATCHED);
    // The fixture's point: some post lies between the two floors.
    expect(between.length).toBeGreaterThan(0);
    const ordinary = await withoutUnmatchedFloor('/v1/social/posts/search', {
      post: { query: ENGLISH_QUERY },
      limit: 10,
    });
    const found = await search(ENGLISH_QUERY);
    expect(ids(found.body).sort()).toEqual(ids(ordinary).sort());
  });

  it('keeps the ordinary floor for a query with a word posts carry, a misspelling it corrects, and English words', async () => {
    for (const query of [MATCHED_QUERY, 'nightly skincre upkeep', ENGLISH_QUERY]) {
      const response = await search(query);
      expect(response.statusCode).toBe(200);
      const found = ids(response.body);
      // The skincare posts only the meaning side finds, under the ordinary floor.
      expect(found, query).toContain(id('bedtime'));
      expect(found, query).toContain(id('evening'));
    }
  });
});
