import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import type { PostRecord } from '../../src/domain/records.ts';
import type { AlertQuery } from '../../src/engine/alerts.ts';
import { alertScratchIndex } from '../../src/engine/elasticsearch/names.ts';
import { projectPost } from '../../src/engine/elasticsearch/projection.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// The matching pass asks many saved searches at once, each a named clause of one engine search
// (alert-matching.ts). Whatever the grouping, each saved search must match exactly the posts its
// own post search finds: checked here against the post search API, for 150 saved searches over
// 60 posts.
const WORDS = ['sourdough', 'espresso', 'kayak', 'retinol', 'woodworking', 'budget', 'marathon', 'origami'];
const TAGS = ['baking', 'coffee', 'outdoors', 'skincare'];
const FORMATS = ['reel', 'image', 'carousel'] as const;
let stack: Stack;
const postIds: string[] = [];

beforeAll(async () => {
  stack = await startStack('alert-matching', { SEARCH_RANKING: 'lexical' });
  const posts = Array.from({ length: 60 }, (_, i) => {
    const words = [WORDS[i % 8]!, WORDS[(i * 3 + 1) % 8]!];
    postIds.push(mintId('post', `am-${i}`));
    return postObs('am-author', {
      platform_id: `am-${i}`,
      caption: `Notes on ${words.join(' and ')} #${TAGS[i % 4]}`,
      hashtags: [TAGS[i % 4]],
      views: 100 * (i + 1),
      format: FORMATS[i % 3],
    });
  });
  const response = await stack.ingest([accountObs({ platform_id: 'am-author', handle: 'am.author' }), ...posts]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
});

afterAll(async () => {
  await stack?.close();
});

/** Every post a post search finds, across its pages. */
async function searched(post: object): Promise<string[]> {
  const found: string[] = [];
  let body: object = { post, limit: 100 };
  for (;;) {
    const page = await stack.post('/v1/social/posts/search', body);
    expect(page.statusCode, JSON.stringify(page.body)).toBe(200);
    found.push(...(page.body.data as Array<{ id: string }>).map((p) => p.id));
    if (!page.body.has_more) return found.sort();
    body = { cursor: page.body.next_cursor };
  }
}

describe('matching many saved searches at once', () => {
  it('gives each saved search exactly the posts its own post search finds', async () => {
    const scopes: object[] = Array.from({ length: 150 }, (_, i) => {
      const views = { gte: 100 * ((i * 7) % 60) };
      return i % 3 === 0
        ? { query: `${WORDS[i % 8]}${i % 2 === 0 ? ` ${WORDS[(i + 3) % 8]}` : ''}` }
        : i % 3 === 1
          ? { filters: { hashtags: { contains_any: [TAGS[i % 4]] }, views } }
          : { query: WORDS[(i * 5) % 8], filters: { views, format: { in: [FORMATS[i % 3]] } } };
    });
    // Saved searches whose queries expand to thousands of clauses each: together in one group they
    // pass the engine's clause limit, and the group is asked one search at a time.
    const filler = Array.from({ length: 240 }, (_, i) => `fl${i.toString(36)}`).join(' ');
    for (const word of WORDS) scopes.push({ query: `${word} ${filler}` });
    const queries: AlertQuery[] = scopes.map((post, i) => {
      const request = parsePostSearchRequest({ post });
      if (request.kind !== 'initial') throw new Error('expected an initial request');
      return { id: `ss_${i}`, search: request.search, vector: null };
    });
    const matches = await stack.runtime.engine.alerts.matchCurrent(postIds, queries);
    let matching = 0;
    for (const [i, post] of scopes.entries()) {
      const expected = await searched(post);
      expect([...(matches.get(`ss_${i}`) ?? [])].sort(), JSON.stringify(post)).toEqual(expected);
      if (expected.length > 0) matching++;
    }
    // Not a vacuous check: most saved searches match something, and none matches everything.
    expect(matching).toBeGreaterThan(100);
    expect(Math.max(...[...matches.values()].map((s) => s.size))).toBeLessThan(postIds.length);
  });

  it('ignores, and clears, posts a crashed pass left in the scratch index', async () => {
    const es = stack.runtime.connections.elasticsearch();
    const scratch = alertScratchIndex(stack.config.INDEX_PREFIX);
    // A crash mid-batch: copies of every post under other IDs, still in the scratch index.
    const current = await es.mget<{ record: PostRecord }>({
      index: `${stack.config.INDEX_PREFIX}-posts`,
      ids: postIds,
    });
    const operations = current.docs.flatMap((doc) => {
      const record = (doc as { _source: { record: PostRecord } })._source.record;
      return [
        { index: { _index: scratch, _id: `left-${record.id}` } },
        projectPost({ ...record, id: `left-${record.id}` }),
      ];
    });
    await es.bulk({ operations, refresh: true });
    const request = parsePostSearchRequest({ post: { query: 'espresso' } });
    if (request.kind !== 'initial') throw new Error('expected an initial request');
    const batch = postIds.slice(0, 10);
    const matches = await stack.runtime.engine.alerts.matchCurrent(batch, [
      { id: 'espresso', search: request.search, vector: null },
    ]);
    const expected = (await searched({ query: 'espresso' })).filter((id) => batch.includes(id));
    expect(expected.length).toBeGreaterThan(0);
    expect([...(matches.get('espresso') ?? [])].sort()).toEqual(expected);
    expect((await es.count({ index: scratch })).count).toBe(0);
  });
});
