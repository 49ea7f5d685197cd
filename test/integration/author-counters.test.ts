import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { indexNames } from '../../src/engine/elasticsearch/names.ts';
import { accountObs, at, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Posts keep their author's counters coarse (src/domain/volatile-facts.ts): an account observation
// that moves them within their bucket rewrites none of its posts, and yet every author filter,
// facet and rendered summary answers what the accounts index says at once.
let stack: Stack;
let es: Client;

const FOLLOWERS = { a: 10_400, b: 10_900, c: 9_000, d: 12_500 } as const;
type Key = keyof typeof FOLLOWERS;
const POSTS: Record<Key, string[]> = { a: ['a1', 'a2'], b: ['b1'], c: ['c1'], d: ['d1'] };
const postId = (p: string) => mintId('post', `vc-${p}`);
const accountId = (k: Key) => mintId('account', `vc-${k}`);
const postsOf = (...keys: Key[]) => keys.flatMap((k) => POSTS[k].map(postId)).sort();

const account = (k: Key, followers: number, minutes = 0) =>
  accountObs({ platform_id: `vc-${k}`, handle: `counters.${k}`, followers_count: followers, observed_at: at(minutes) });

beforeAll(async () => {
  stack = await startStack('author-counters');
  es = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' });
  const response = await stack.ingest(
    [
      ...(Object.keys(FOLLOWERS) as Key[]).map((k) => account(k, FOLLOWERS[k])),
      ...(Object.keys(POSTS) as Key[]).flatMap((k) =>
        POSTS[k].map((p) => postObs(`vc-${k}`, { platform_id: `vc-${p}`, caption: `Counters post ${p}` })),
      ),
    ],
    { vectors: false },
  );
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
});

afterAll(async () => {
  await stack?.close();
  await es?.close();
});

async function authorFiltered(filters: Record<string, unknown>): Promise<string[]> {
  const response = await stack.post('/v1/social/posts/search', { post: { author: { filters } }, limit: 100 });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return (response.body.data as Array<{ id: string }>).map((p) => p.id).sort();
}

async function followerFacet(ranges: Array<{ from?: number; to?: number }>): Promise<number[]> {
  const response = await stack.post('/v1/social/posts/facets', {
    post: {},
    facets: [{ field: 'author.followers_count', ranges }],
  });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return (response.body.facets['author.followers_count'] as Array<{ count: number }>).map((b) => b.count);
}

async function seqNos(ids: string[]): Promise<number[]> {
  const index = indexNames(stack.config.INDEX_PREFIX, 'posts').read;
  const docs = await es.mget({ index, ids, _source: false });
  return docs.docs.map((d) => ('_seq_no' in d ? (d._seq_no ?? -1) : -1));
}

describe('author counters kept coarse in posts', () => {
  it('filters on a bound inside a bucket answer exactly', async () => {
    expect(await authorFiltered({ followers_count: { gte: 10_500 } })).toEqual(postsOf('b', 'd'));
    expect(await authorFiltered({ followers_count: { gt: 10_400 } })).toEqual(postsOf('b', 'd'));
    expect(await authorFiltered({ followers_count: { lte: 10_400 } })).toEqual(postsOf('a', 'c'));
    expect(await authorFiltered({ followers_count: { gte: 10_400, lt: 10_900 } })).toEqual(postsOf('a'));
    expect(await followerFacet([{ to: 10_500 }, { from: 10_500 }, {}])).toEqual([3, 2, 5]);
  });

  it('an observation within the bucket rewrites no post, and every read and filter follows it at once', async () => {
    const before = await seqNos(postsOf('a'));
    const response = await stack.ingest([account('a', 10_600, 60)], { vectors: false });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    expect(response.body.fanned_out ?? 0).toBe(0);
    expect(await seqNos(postsOf('a'))).toEqual(before);

    const post = await stack.get(`/v1/social/posts/${postId('a1')}`);
    expect(post.statusCode).toBe(200);
    expect(post.body.author.followers_count).toBe(10_600);
    const search = await stack.post('/v1/social/posts/search', { post: { query: 'counters' }, limit: 100 });
    const shown = (search.body.data as Array<{ id: string; author: { followers_count: number } }>).find(
      (p) => p.id === postId('a2'),
    );
    expect(shown?.author.followers_count).toBe(10_600);

    expect(await authorFiltered({ followers_count: { gte: 10_500 } })).toEqual(postsOf('a', 'b', 'd'));
    expect(await authorFiltered({ followers_count: { lte: 10_400 } })).toEqual(postsOf('c'));
    expect(await followerFacet([{ to: 10_500 }, { from: 10_500 }])).toEqual([1, 4]);
  });

  it('an observation into another bucket rewrites the posts, and round bounds read the copies alone', async () => {
    const before = await seqNos(postsOf('a'));
    const response = await stack.ingest([account('a', 12_100, 120)], { vectors: false });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const after = await seqNos(postsOf('a'));
    after.forEach((seqNo, i) => expect(seqNo).toBeGreaterThan(before[i]!));
    expect(await authorFiltered({ followers_count: { gte: 12_000 } })).toEqual(postsOf('a', 'd'));
    expect(await authorFiltered({ followers_count: { gte: 12_000, lt: 12_200 } })).toEqual(postsOf('a'));
    const profile = await stack.get(`/v1/social/accounts/${accountId('a')}`);
    expect(profile.body.followers_count).toBe(12_100);
  });

  it('posts render followers from the mirror the worker writes, and from the accounts index without it', async () => {
    const key = `${stack.config.REDIS_PREFIX}:followers`;
    const mirrored = () => stack.runtime.redis.hget(key, accountId('b'));
    const shownFor = async (p: string) => {
      const post = await stack.get(`/v1/social/posts/${postId(p)}`);
      expect(post.statusCode).toBe(200);
      return post.body.author.followers_count as number;
    };
    // Written before `?wait=true` answered: the observation's time and the stored count.
    expect(await stack.ingest([account('b', 10_950, 200)], { vectors: false })).toMatchObject({ statusCode: 200 });
    expect(await mirrored()).toBe(`${at(200)}|10950`);
    expect(await shownFor('b1')).toBe(10_950);

    // A late observation (older than the one stored) changes neither the record nor the mirror.
    expect(await stack.ingest([account('b', 10_700, 150)], { vectors: false })).toMatchObject({ statusCode: 200 });
    expect(await mirrored()).toBe(`${at(200)}|10950`);
    expect(await shownFor('b1')).toBe(10_950);

    // Without an entry (a flushed Redis, an account not observed since), the accounts index
    // answers, and its answer is mirrored for the next read.
    await stack.runtime.redis.hdel(key, accountId('b'));
    expect(await shownFor('b1')).toBe(10_950);
    await vi.waitFor(async () => expect(await mirrored()).toBe(`${at(200)}|10950`));

    // Two profiles observed at the same instant: the record keeps one by its content, and the
    // mirror, which cannot order them, drops its entry for the accounts index to answer.
    await stack.runtime.redis.hset(key, accountId('b'), `${at(250)}|1`);
    expect(await stack.ingest([account('b', 10_990, 250)], { vectors: false })).toMatchObject({ statusCode: 200 });
    expect(await mirrored()).toBeNull();
    expect(await shownFor('b1')).toBe(10_990);
    await vi.waitFor(async () => expect(await mirrored()).toBe(`${at(250)}|10990`));
  });

  it("a new post moves its author's metrics without rewriting the author's other posts", async () => {
    const existing = postsOf('a', 'b', 'c', 'd');
    const before = await seqNos(existing);
    const response = await stack.ingest(
      [postObs('vc-d', { platform_id: 'vc-d2', caption: 'Counters post d2', observed_at: at(180) })],
      { vectors: false },
    );
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    // Posts do not keep the metrics: d's moved (one post in 90 days → two), none of its posts was rewritten.
    expect(await seqNos(existing)).toEqual(before);
    const d = await stack.get(`/v1/social/accounts/${accountId('d')}`);
    expect(d.body.posts_per_week_90d).toBeCloseTo(2 / (90 / 7), 12);
    const withD2 = (...keys: Key[]) => [...postsOf(...keys), postId('d2')].sort();
    expect(await authorFiltered({ posts_per_week_90d: { gte: 0.1 } })).toEqual(withD2('a', 'd'));
    expect(await authorFiltered({ posts_per_week_90d: { lt: 0.1 } })).toEqual(postsOf('b', 'c'));
    const facets = await stack.post('/v1/social/posts/facets', {
      post: {},
      facets: [{ field: 'author.posts_per_week_90d', ranges: [{ to: 0.1 }, { from: 0.1 }] }],
    });
    expect(facets.statusCode, JSON.stringify(facets.body)).toBe(200);
    expect(facets.body.facets['author.posts_per_week_90d']).toEqual([
      { value: { from: null, to: 0.1 }, count: 2 },
      { value: { from: 0.1, to: null }, count: 4 },
    ]);
  });
});
