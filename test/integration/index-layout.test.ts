import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createElasticsearchEngine } from '../../src/engine/elasticsearch/engine.ts';
import { templatesDir } from '../../src/internal/paths.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * INDEX_SHARDS and INDEX_REPLICAS (the shard layout of a cluster), on the local single node: what
 * `indices apply` and `status` do with them, and that searches and their counts stay exact over
 * several shards.
 */

let one: Stack;
let three: Stack;
const observations = [...generateObservations({ posts: 300, accounts: 30, seed: 41 })];

beforeAll(async () => {
  [one, three] = await Promise.all([startStack('layout-one'), startStack('layout-three', { INDEX_SHARDS: '3' })]);
  // The same data in a one-shard and a three-shard pair of indices.
  for (const stack of [one, three]) {
    for (let i = 0; i < observations.length; i += 500) {
      const answer = await stack.ingest(observations.slice(i, i + 500));
      expect(answer.statusCode, JSON.stringify(answer.body)).toBe(200);
    }
  }
});

afterAll(async () => {
  await Promise.all([one?.close(), three?.close()]);
});

/** An admin of `stack`'s indices with another layout, as `indices apply` with other settings. */
const adminWith = (stack: Stack, layout: { shards?: number; replicas?: number; refreshInterval?: string }) =>
  createElasticsearchEngine({
    client: stack.runtime.es,
    indexPrefix: stack.config.INDEX_PREFIX,
    templatesDir: templatesDir(),
    visibility: stack.runtime.visibility,
    layout,
  }).admin;

describe('index layout', () => {
  it('new indices take INDEX_SHARDS; status shows the shards and where each copy is', async () => {
    const status = await three.runtime.indexAdmin.status();
    // The posts' vector index is reported with the posts (and built like them).
    for (const index of [...status, ...(status[0]!.companions ?? [])]) {
      expect(index.shards).toEqual({ primaries: 3, replicas: 0 });
      expect(index.allocation.map((c) => [c.shard, c.primary, c.state])).toEqual([
        [0, true, 'STARTED'],
        [1, true, 'STARTED'],
        [2, true, 'STARTED'],
      ]);
      expect(index.allocation.every((c) => typeof c.node === 'string' && c.node.length > 0)).toBe(true);
    }
    expect((await one.runtime.indexAdmin.status()).map((s) => s.shards)).toEqual([
      { primaries: 1, replicas: 0 },
      { primaries: 1, replicas: 0 },
    ]);
  });

  it('apply sets INDEX_REPLICAS on the live indices, no rebuild needed; a new INDEX_SHARDS asks for a rebuild', async () => {
    const posts = (await one.runtime.indexAdmin.status())[0]!;
    const withReplica = await adminWith(one, { shards: 1, replicas: 1 }).apply();
    expect(withReplica).toContainEqual({
      object: `replicas of ${posts.indices[0]}`,
      action: 'updated',
      detail: '0 → 1 (INDEX_REPLICAS)',
    });
    // The index templates did not change: a replica count is no reason to rebuild.
    expect(withReplica).toContainEqual({
      object: `replicas of ${posts.companions![0]!.indices[0]}`,
      action: 'updated',
      detail: '0 → 1 (INDEX_REPLICAS)',
    });
    expect(withReplica.filter((l) => l.object.startsWith('index template')).map((l) => l.action)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
    const yellow = (await one.runtime.indexAdmin.status())[0]!;
    // One node cannot hold a shard's replica next to its primary: the copy stays unassigned.
    expect(yellow).toMatchObject({ shards: { primaries: 1, replicas: 1 }, health: 'yellow', up_to_date: true });
    expect(yellow.allocation.map((c) => [c.primary, c.node])).toEqual([
      [true, expect.any(String)],
      [false, null],
    ]);
    const back = await one.runtime.indexAdmin.apply();
    expect(back).toContainEqual({
      object: `replicas of ${posts.indices[0]}`,
      action: 'updated',
      detail: '1 → 0 (INDEX_REPLICAS)',
    });
    expect((await one.runtime.indexAdmin.apply()).every((l) => l.action === 'unchanged')).toBe(true);

    const twoShards = adminWith(one, { shards: 2, replicas: 0 });
    const lines = await twoShards.apply();
    expect(lines.find((l) => l.object === `index template ${one.config.INDEX_PREFIX}-posts`)).toMatchObject({
      action: 'updated',
    });
    expect(lines.find((l) => l.object.startsWith(`alias ${one.config.INDEX_PREFIX}-posts `))?.detail).toBe(
      'has 1 primary shard, 2 configured (INDEX_SHARDS); run `social-search indices rebuild posts`',
    );
    const rebuilt = await twoShards.rebuild('posts');
    const twoShardPosts = (await twoShards.status())[0]!;
    expect(twoShardPosts).toMatchObject({
      indices: [rebuilt.to],
      shards: { primaries: 2, replicas: 0 },
      up_to_date: true,
      docs: posts.docs,
    });
    expect(twoShardPosts.companions![0]).toMatchObject({ shards: { primaries: 2, replicas: 0 }, up_to_date: true });
    // Back to the configured layout, for the next test.
    await one.runtime.indexAdmin.apply();
    await one.runtime.indexAdmin.rebuild('posts');
  });

  it('apply sets INDEX_REFRESH_INTERVAL on the live indices, no rebuild needed, and a rebuilt index keeps it', async () => {
    /** The refresh interval of the posts and accounts indices, and the set of the history months' ones. */
    const liveInterval = async (family: 'records' | 'history' = 'records') => {
      const prefix = one.config.INDEX_PREFIX;
      const settings = await one.runtime.es.indices.getSettings({
        index:
          family === 'records'
            ? `${prefix}-posts-*,${prefix}-post-vectors-*,${prefix}-accounts-*`
            : `${prefix}-metrics-*`,
        name: 'index.refresh_interval',
        flat_settings: true,
      });
      const values = Object.values(settings).map(
        (s) => (s.settings as Record<string, string | undefined>)['index.refresh_interval'] ?? '1s',
      );
      return family === 'records' ? values : [...new Set(values)];
    };
    const [posts, accounts] = await one.runtime.indexAdmin.status();
    const backfill = adminWith(one, { shards: 1, replicas: 0, refreshInterval: '30s' });
    const lines = await backfill.apply();
    expect(lines).toContainEqual({
      object: `refresh interval of ${posts!.indices[0]}`,
      action: 'updated',
      detail: '1s → 30s (INDEX_REFRESH_INTERVAL)',
    });
    expect(lines).toContainEqual({
      object: `refresh interval of ${accounts!.indices[0]}`,
      action: 'updated',
      detail: '1s → 30s (INDEX_REFRESH_INTERVAL)',
    });
    expect(lines).toContainEqual({
      object: `refresh interval of ${posts!.companions![0]!.indices[0]}`,
      action: 'updated',
      detail: '1s → 30s (INDEX_REFRESH_INTERVAL)',
    });
    expect(lines.filter((l) => l.object.startsWith('index template')).map((l) => l.action)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
    expect(await liveInterval()).toEqual(['30s', '30s', '30s']);
    // Not the metric history's months (the demo data's posts were observed over a year): they keep
    // the engine's own schedule, which stops refreshing a month nobody searches.
    expect((await backfill.historyStatus()).months.length).toBeGreaterThan(10);
    expect(await liveInterval('history')).toEqual([]); // no month carries the setting
    expect((await backfill.status()).map((s) => s.refresh_interval)).toEqual(['30s', '30s']);
    // A rebuild ends with the configured interval, not the engine's default.
    const rebuilt = await backfill.rebuild('posts');
    expect((await backfill.status())[0]).toMatchObject({ indices: [rebuilt.to], up_to_date: true });
    expect(await liveInterval()).toEqual(['30s', '30s', '30s']);
    // Back to the configured interval.
    expect(await one.runtime.indexAdmin.apply()).toContainEqual({
      object: `refresh interval of ${rebuilt.to}`,
      action: 'updated',
      detail: '30s → 1s (INDEX_REFRESH_INTERVAL)',
    });
    expect(await liveInterval()).toEqual(['1s', '1s', '1s']);
    expect(await liveInterval('history')).toEqual([]); // no month carries the setting
  });

  it('over three shards, searches, facets and posts-scoped account searches answer as over one', async () => {
    const requests: Array<[string, unknown]> = [
      [
        '/v1/social/posts/search',
        { post: { filters: { views: { gte: 0 } } }, sort: { by: 'views', order: 'desc' }, limit: 50 },
      ],
      [
        '/v1/social/accounts/search',
        {
          account: { posts: { minimum_matching_posts: 3, filters: { views: { gte: 100 } } } },
          sort: { by: 'followers_count', order: 'desc' },
          limit: 50,
        },
      ],
      [
        '/v1/social/accounts/search',
        {
          account: { posts: { minimum_matching_posts: 1 } },
          sort: { by: 'followers_count', order: 'desc' },
          limit: 50,
        },
      ],
      [
        '/v1/social/posts/facets',
        {
          post: {},
          facets: [
            { field: 'format' },
            { field: 'topics', size: 5 },
            { field: 'hashtags', size: 10 },
            { field: 'author.niches', size: 3 },
            { field: 'views', ranges: [{ to: 1000 }, { from: 1000 }] },
          ],
        },
      ],
      [
        '/v1/social/accounts/facets',
        {
          account: {},
          facets: [
            { field: 'niches', size: 4 },
            { field: 'country_codes', size: 2 },
          ],
        },
      ],
    ];
    for (const [path, body] of requests) {
      const [a, b] = await Promise.all([one.post(path, body), three.post(path, body)]);
      expect(a.statusCode, JSON.stringify(a.body)).toBe(200);
      expect(b.statusCode, `${path}: ${JSON.stringify(b.body)}`).toBe(200);
      const { request_id: _a, next_cursor: _c, ...left } = a.body;
      const { request_id: _b, next_cursor: _d, ...right } = b.body;
      expect(right, path).toEqual(left);
    }
  });

  it('a facet count whose snapshot is lost between its count and its exact re-count answers as undisturbed', async () => {
    const body = { post: {}, facets: [{ field: 'hashtags', size: 10 }, { field: 'format' }] };
    const undisturbed = await three.post('/v1/social/posts/facets', body);
    expect(undisturbed.statusCode, JSON.stringify(undisturbed.body)).toBe(200);
    // The engine forgets the snapshot right before the re-count (as when a node restarts or leaves).
    const es = three.runtime.es;
    const search = es.search.bind(es);
    let recounts = 0;
    const spy = vi.spyOn(es, 'search').mockImplementation((async (request: {
      pit?: { id: string };
      track_total_hits?: boolean;
    }) => {
      if (request.pit && request.track_total_hits === false && recounts++ === 0)
        await es.closePointInTime({ id: request.pit.id });
      return search(request);
    }) as never);
    try {
      const disturbed = await three.post('/v1/social/posts/facets', body);
      expect(disturbed.statusCode, JSON.stringify(disturbed.body)).toBe(200);
      const { request_id: _a, ...left } = undisturbed.body;
      const { request_id: _b, ...right } = disturbed.body;
      expect(right).toEqual(left);
      expect(recounts, 'over three shards the hashtags are counted again (the fault fired)').toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
    }
  });
});
