import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestStream } from '../../src/services/intake/stream-ingest.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A streamed load that waits (`seed --wait`, `ingest --wait`) against the real worker, queues and
// engine: everything it sent is visible and exact when it returns, and the indices were refreshed
// once for the load, not once per job. A 30 s refresh interval, so that only the load's own
// refreshes make anything visible within the test.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('stream-wait', { INDEX_REFRESH_INTERVAL: '30s' });
});
afterAll(async () => stack?.close());

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
const filler = (from: number, n: number, observedAt: string) =>
  Array.from({ length: n }, (_, i) =>
    accountObs({ platform_id: `sw-fill-${from + i}`, followers_count: 100, observed_at: observedAt }),
  );

/** External refreshes of the stack's index `family` so far (primaries). */
async function refreshes(family: 'posts' | 'accounts'): Promise<number> {
  const stats = await stack.runtime.es.indices.stats({
    index: `${stack.config.INDEX_PREFIX}-${family}`,
    metric: 'refresh',
  });
  return stats._all.primaries?.refresh?.external_total ?? 0;
}

describe('a streamed load that waits', () => {
  it('returns with every observation visible, its derived counters and history included, after a handful of refreshes', async () => {
    const first = daysAgo(40);
    const recent = daysAgo(1);
    // Request 1 (5,000): the author, its posts and fillers. Request 2: the author again with ten
    // times the followers (a fan-out its posts get from a follow-up run) and fillers. Request 3:
    // fillers. Jobs of 500: 21 in all.
    const author = accountObs({
      platform_id: 'sw-author',
      handle: 'stream.author',
      followers_count: 5_000,
      observed_at: first,
    });
    const posts = Array.from({ length: 4 }, (_, i) =>
      postObs('sw-author', {
        platform_id: `sw-post-${i}`,
        observed_at: first,
        caption: `Stream wait post ${i} #streamwait`,
      }),
    );
    const grown = { ...author, followers_count: 50_000, observed_at: recent };
    const observations = [
      author,
      ...posts,
      ...filler(0, 4_995, first),
      grown,
      ...filler(10_000, 4_999, recent),
      ...filler(20_000, 500, recent),
    ];
    const before = { posts: await refreshes('posts'), accounts: await refreshes('accounts') };

    const result = await ingestStream(
      observations.map((value, i) => ({ line: i + 1, value })),
      stack.runtime.api.intake,
      { wait: true, requestId: 'req_stream_wait', waitTimeoutMs: 120_000 },
    );
    expect(result).toEqual({ accepted: 10_500, rejected: 0, jobs: 21 });

    // Searchable at once, the authors' counters fanned out to the posts exactly.
    const search = await stack.post('/v1/social/posts/search', {
      post: { author: { filters: { followers_count: { gte: 50_000 } } } },
      limit: 10,
    });
    expect(search.statusCode).toBe(200);
    expect(search.body.data.map((p: { shortcode: string }) => p.shortcode).sort()).toEqual(
      posts.map((p) => p.shortcode).sort(),
    );
    const accounts = await stack.post('/v1/social/accounts/search', {
      account: { filters: { followers_count: { lte: 100 } } },
      limit: 1,
    });
    expect(accounts.body.data).toHaveLength(1);

    // Both months of the author's history, the first one written by the load's first request.
    const range = `from=${encodeURIComponent(daysAgo(45))}&to=${encodeURIComponent(daysAgo(0))}`;
    const history = await stack.get(`/v1/social/accounts/@stream.author/history?interval=raw&${range}`);
    expect(history.statusCode).toBe(200);
    expect(history.body.points.map((p: { followers_count: number }) => p.followers_count)).toEqual([5_000, 50_000]);

    // Refreshed for the load, not for each of its 21 jobs: each job used to refresh the indices
    // (42 refreshes of the posts, 21 of the accounts). The posts are also refreshed by each
    // follow-up run before it reads them, as in any pipeline's load, so only the accounts' count
    // is the load's own.
    const after = { posts: await refreshes('posts'), accounts: await refreshes('accounts') };
    expect(after.accounts - before.accounts).toBeLessThanOrEqual(3);
    expect(after.posts - before.posts).toBeLessThan(21);
  });
});
