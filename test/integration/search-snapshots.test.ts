import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Two API nodes on the same data. First pages share a point in time per node for up to
// SEARCH_SNAPSHOT_MAX_AGE_MS (a minute here, so only the visibility epoch can retire it).
let stack: Stack;
let other: { runtime: TestRuntime; app: FastifyInstance };

beforeAll(async () => {
  stack = await startStack('snapshots', { SEARCH_SNAPSHOT_MAX_AGE_MS: '60000' });
  const runtime = openTestRuntime(stack.config);
  await runtime.ready();
  const app = runtime.api.app;
  await app.ready();
  other = { runtime, app };
  await stack.ingest([
    accountObs({ platform_id: 'snap-a', handle: 'snap.author' }),
    postObs('snap-a', { platform_id: 'snap-p1', caption: 'lantern festival night' }),
  ]);
});

afterAll(async () => {
  await other?.app.close();
  await other?.runtime.close();
  await stack?.close();
});

async function searchOnOther(query: string): Promise<string[]> {
  const response = await other.app.inject({
    method: 'POST',
    url: '/v1/social/posts/search',
    headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ post: { query }, limit: 10 }),
  });
  expect(response.statusCode).toBe(200);
  return response
    .json()
    .data.map((p: { id: string }) => platformIds.get(p.id) ?? p.id)
    .sort();
}

/** Results are named by platform ID, for readable failures. */
const platformIds = new Map(['snap-p1', 'snap-p2', 'snap-p3'].map((id) => [mintId('post', id), id]));
const named = (...ids: string[]) => ids.sort();

/** Waits until the worker has nothing queued or running. */
async function drain(timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await stack.runtime.jobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(c).every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`queue not drained: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('shared search snapshots', () => {
  it('a write made visible with ?wait=true on one node is seen at once by a search on another', async () => {
    expect(await searchOnOther('lantern')).toEqual(named('snap-p1'));
    const response = await stack.ingest([postObs('snap-a', { platform_id: 'snap-p2', caption: 'lantern parade' })]);
    expect(response.statusCode).toBe(200);
    expect(await searchOnOther('lantern')).toEqual(named('snap-p1', 'snap-p2'));
  });

  it('first pages within the age limit share one snapshot until the epoch advances', async () => {
    expect(await searchOnOther('lantern')).toEqual(named('snap-p1', 'snap-p2'));
    // Indexed and refreshed, but nobody asked to see it: the node keeps serving its snapshot.
    await stack.ingest([postObs('snap-a', { platform_id: 'snap-p3', caption: 'lantern lights' })], { wait: false });
    await drain();
    await stack.runtime.engine.intake.refresh();
    expect(await searchOnOther('lantern')).toEqual(named('snap-p1', 'snap-p2'));
    await stack.runtime.visibility.advance();
    expect(await searchOnOther('lantern')).toEqual(named('snap-p1', 'snap-p2', 'snap-p3'));
  });

  it('pages of a search that started on a shared snapshot still never repeat or skip', async () => {
    await stack.ingest(
      Array.from({ length: 12 }, (_, i) =>
        postObs('snap-a', { platform_id: `snap-q${i}`, caption: `kite flying day ${i}` }),
      ),
    );
    const first = await stack.post('/v1/social/posts/search', { post: { query: 'kite' }, limit: 5 });
    const seen: string[] = first.body.data.map((p: { id: string }) => p.id);
    // Another search shares the same snapshot and finishes; the first one's cursor must survive it.
    const concurrent = await stack.post('/v1/social/posts/search', { post: { query: 'kite' }, limit: 100 });
    expect(concurrent.body.has_more).toBe(false);
    await stack.ingest([postObs('snap-a', { platform_id: 'snap-q-late', caption: 'kite festival' })]);
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await stack.post('/v1/social/posts/search', { cursor });
      expect(page.statusCode).toBe(200);
      seen.push(...page.body.data.map((p: { id: string }) => p.id));
      cursor = page.body.next_cursor;
    }
    expect(seen.sort()).toEqual(Array.from({ length: 12 }, (_, i) => mintId('post', `snap-q${i}`)).sort());
  });
});
