import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// ALERTS_MATCHING=pass: the intake's jobs leave their posts to the matching pass, which reads them
// back and matches them itself (the default, `write`, is what every other alerts test runs).
let stack: Stack;
beforeAll(async () => {
  stack = await startStack('alerts-pass', { ALERTS_MATCHING: 'pass' });
});
afterAll(async () => {
  await stack?.close();
});

async function matchedPosts(searchId: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await stack.get(`/v1/social/saved-searches/${searchId}/matches?limit=100`);
    expect(response.statusCode).toBe(200);
    const posts = response.body.data.map((e: { data: { post: { id: string } } }) => e.data.post.id);
    if (posts.length >= count || Date.now() > deadline) return posts;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('saved searches matched by the pass', () => {
  it('give each post that comes to match one event (a new post, one crossing a bound), and a re-observed post none again', async () => {
    await stack.ingest([accountObs({ platform_id: 'pm-author' })], { vectors: false });
    const created = await stack.post('/v1/social/saved-searches', {
      name: 'kefir',
      post: { query: 'kefir', filters: { views: { gte: 1000 } } },
    });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);
    await stack.ingest(
      [
        postObs('pm-author', { platform_id: 'pm-1', caption: 'Kefir grains, week one', views: 5000 }),
        postObs('pm-author', { platform_id: 'pm-2', caption: 'Kefir smoothie', views: 10 }),
        postObs('pm-author', { platform_id: 'pm-3', caption: 'Sauerkraut in a jar', views: 5000 }),
      ],
      { vectors: false },
    );
    expect(await matchedPosts(created.body.id, 1)).toEqual([mintId('post', 'pm-1')]);
    // pm-2 crosses the views bound: news; pm-1 re-observed: not news again.
    await stack.ingest(
      [
        postObs('pm-author', { platform_id: 'pm-2', caption: 'Kefir smoothie', views: 2000 }),
        postObs('pm-author', { platform_id: 'pm-1', caption: 'Kefir grains, week one', views: 6000 }),
      ],
      { vectors: false },
    );
    expect(await matchedPosts(created.body.id, 2)).toEqual([mintId('post', 'pm-1'), mintId('post', 'pm-2')]);
  });
});
