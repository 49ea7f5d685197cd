import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Text the model cannot read (mostly word pieces outside its vocabulary: emoji runs, Thai) never
// counts as similar to anything, as a query or as a post (src/embedding/embedding-thread.mjs).
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const POSTS = {
  japanese: '夜のスキンケアルーティン、毎日やってます',
  japanese2: '自炊の基本レシピを紹介します',
  thai: 'วิธีดูแลผิวหน้าให้สวยใส',
  english: 'Evening skincare routine with retinol and a gentle cleanser',
};
const id = (key: keyof typeof POSTS) => mintId('post', `unr-${key}`);
let stack: Stack;

beforeAll(async () => {
  stack = await startStack('unreadable', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'unr-a', handle: 'unreadable.author' }),
    ...Object.entries(POSTS).map(([key, caption]) => postObs('unr-a', { platform_id: `unr-${key}`, caption })),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
});

afterAll(async () => {
  await stack?.close();
});

const search = (query: string) => stack.post('/v1/social/posts/search', { post: { query } });

describe('text the model cannot read', () => {
  it('a query of emoji finds no post by meaning (it found Japanese posts)', async () => {
    const response = await search('🔥🔥🔥');
    expect(response.statusCode).toBe(200);
    expect(response.body.data.map((p: { id: string }) => p.id)).toEqual([]);
  });

  it('a post in a script outside the vocabulary has no vector; the others have theirs', async () => {
    const es = stack.runtime.connections.elasticsearch();
    const withVector = await es.search({
      index: `${stack.config.INDEX_PREFIX}-post-vectors`,
      query: { exists: { field: 'embedding' } },
      _source: false,
      size: 10,
    });
    expect(withVector.hits.hits.map((h) => h._id).sort()).toEqual(
      [id('japanese'), id('japanese2'), id('english')].sort(),
    );
    // An English query still finds the English post by meaning, and never the Thai one.
    const found = await search('night-time face care steps');
    const ids = found.body.data.map((p: { id: string }) => p.id);
    expect(ids).toContain(id('english'));
    expect(ids).not.toContain(id('thai'));
  });

  it('refuses similar_to a post it cannot read, naming the member', async () => {
    const response = await stack.post('/v1/social/posts/search', { post: { similar_to: id('thai') } });
    expect(response.statusCode).toBe(422);
    expect(response.body.detail).toMatch(/^\/post\/similar_to/);
  });
});
