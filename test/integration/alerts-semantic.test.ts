import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, longCaption, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Saved searches with the real model: a post that shares no word with the query matches by its
// meaning once its vector arrives (the similarity floor), the same rule a hybrid search applies.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const QUERY = 'night-time skincare routine';
const POSTS = {
  // No word in common with the query: only its meaning can match it.
  bedtime: 'Bedtime face care steps I swear by: cleanser, serum, moisturiser',
  evening: 'My evening skin care regimen before sleep, products linked in bio',
  tyre: 'How to change a flat tyre on the motorway safely',
};
const id = (key: keyof typeof POSTS) => mintId('post', `alsem-${key}`);
let stack: Stack;

beforeAll(async () => {
  stack = await startStack('alerts-semantic', { MODEL_DIR, SEARCH_RANKING: 'hybrid', SAVED_SEARCHES_PER_HOLDER: '2' });
  await stack.runtime.embedder.ready();
});

afterAll(async () => {
  await stack?.close();
});

describe('a saved search with a query, with the model', () => {
  it('matches posts by meaning once their vectors exist, and never one below the floor', async () => {
    const created = await stack.post('/v1/social/saved-searches', {
      name: 'skincare at night',
      post: { query: QUERY },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    const ingested = await stack.ingest([
      accountObs({ platform_id: 'alsem-a', handle: 'alerts.semantic' }),
      ...Object.entries(POSTS).map(([key, caption]) => postObs('alsem-a', { platform_id: `alsem-${key}`, caption })),
    ]);
    expect(ingested.statusCode).toBe(200);
    const matched = async () => {
      const page = await stack.get(`/v1/social/saved-searches/${created.body.id}/matches?limit=100`);
      expect(page.statusCode, JSON.stringify(page.body)).toBe(200);
      return (page.body.data as Array<{ data: { post: { id: string } } }>).map((e) => e.data.post.id).sort();
    };
    const expected = [id('bedtime'), id('evening')].sort();
    const deadline = Date.now() + 30_000;
    while ((await matched()).length < expected.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    // Passes run about a second apart: one more shows nothing else arrives.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await matched()).toEqual(expected);
  });

  it("matches a long post by a passage past its head, as a search's neighbours are found", async () => {
    const created = await stack.post('/v1/social/saved-searches', {
      name: 'bike repairs',
      post: { query: 'how to fix a flat bicycle tire' },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    const ingested = await stack.ingest([
      postObs('alsem-a', { platform_id: 'alsem-mend', caption: longCaption({ mend: true }) }),
      // The same hike without the repair: its head and passages are about the hike alone.
      postObs('alsem-a', { platform_id: 'alsem-hike', caption: longCaption({ mend: false }) }),
    ]);
    expect(ingested.statusCode).toBe(200);
    const matched = async () => {
      const page = await stack.get(`/v1/social/saved-searches/${created.body.id}/matches?limit=100`);
      expect(page.statusCode, JSON.stringify(page.body)).toBe(200);
      return (page.body.data as Array<{ data: { post: { id: string } } }>).map((e) => e.data.post.id);
    };
    const mend = mintId('post', 'alsem-mend');
    const deadline = Date.now() + 30_000;
    while (!(await matched()).includes(mend) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 2500));
    const events = await matched();
    expect(events).toContain(mend);
    expect(events).not.toContain(mintId('post', 'alsem-hike'));
  });
});

describe('a holder at the saved-search cap', () => {
  it('is refused before its query is embedded: no model time for a 409', async () => {
    const { key } = await stack.runtime.api.keys.create({
      owner: 'capped@example.com',
      name: 'capped',
      scopes: ['search'],
    });
    const create = (query: string) =>
      stack.inject({
        method: 'POST',
        url: '/v1/social/saved-searches',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: query, post: { query } }),
      });
    for (let i = 0; i < 2; i++) expect((await create(`capped query number ${i}`)).statusCode).toBe(201);
    const before = stack.runtime.embedder.stats().queries;
    const refused = await create('one query too many, never embedded');
    expect(refused.statusCode).toBe(409);
    expect(stack.runtime.embedder.stats().queries).toBe(before);
    // Within the cap, a query is embedded (the count moves): the check above can tell.
    expect(before).toBeGreaterThanOrEqual(2);
  });
});

describe('a post embedded long before, brought under a saved search by a re-observation', () => {
  it('matches by meaning with the vectors its vector document holds (its stored record keeps none)', async () => {
    const { key } = await stack.runtime.api.keys.create({
      owner: 'settled@example.com',
      name: 'settled',
      scopes: ['search'],
    });
    const as = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      stack.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const post = (views: number, observedAt: string) =>
      postObs('alsem-a', { platform_id: 'alsem-settled', caption: POSTS.bedtime, views, observed_at: observedAt });
    const settled = mintId('post', 'alsem-settled');
    const created = await as('POST', '/v1/social/saved-searches', {
      name: 'viral skincare at night',
      post: { query: QUERY, filters: { views: { gte: 1_000_000 } } },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as { id: string }).id;
    // Observed and embedded under the search's views, then observed again: its record is stored without its vectors.
    expect((await stack.ingest([post(10_000, '2026-06-01T10:00:00Z')])).statusCode).toBe(200);
    expect((await stack.ingest([post(10_000, '2026-06-01T11:00:00Z')])).statusCode).toBe(200);
    const stored = await stack.runtime.es.get<{ record: { embedding?: Record<string, unknown> } }>({
      index: `${stack.config.INDEX_PREFIX}-posts`,
      id: settled,
    });
    expect(Object.keys(stored._source!.record.embedding!).sort()).toEqual(['model', 'text_hash']);

    const matched = async () => {
      const page = await as('GET', `/v1/social/saved-searches/${id}/matches?limit=100`);
      expect(page.statusCode, JSON.stringify(page.body)).toBe(200);
      return (page.body as { data: Array<{ data: { post: { id: string } } }> }).data.map((e) => e.data.post.id);
    };
    // Its views cross the filter: it comes to match, by meaning (it shares no word with the query).
    expect((await stack.ingest([post(2_000_000, '2026-06-02T10:00:00Z')])).statusCode).toBe(200);
    const deadline = Date.now() + 30_000;
    while (!(await matched()).includes(settled) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await matched()).toEqual([settled]);
  });
});
