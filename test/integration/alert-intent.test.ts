import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { createProducer, requestAlertPass } from '../../src/queues/registry.ts';
import { createAlertStore, type AlertStore } from '../../src/services/alerts/alert-store.ts';
import { createPendingChanges } from '../../src/services/alerts/pending-changes.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// An intake job that fails after writing its posts, before telling the saved searches of them:
// its retry finds nothing left to write, and must still leave them to the matching pass.

let stack: Stack;
let producer: ReturnType<typeof createProducer<'alerts'>>;
beforeAll(async () => {
  stack = await startStack('alert-intent');
  producer = createProducer('alerts', { connection: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
});
afterAll(async () => {
  await producer?.close();
  await stack?.close();
});

const valid = (o: unknown): Observation => {
  const parsed = parseObservation(o);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
};

async function matchedPosts(searchId: string): Promise<string[]> {
  const response = await stack.get(`/v1/social/saved-searches/${searchId}/matches?limit=100`);
  expect(response.statusCode).toBe(200);
  return response.body.data.map((e: { data: { post: { id: string } } }) => e.data.post.id);
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a post written by an intake job that failed before recording it', () => {
  it('still becomes an event once the job is retried, exactly once', async () => {
    await stack.ingest([accountObs({ platform_id: 'ai-author' })], { vectors: false });
    const created = await stack.post('/v1/social/saved-searches', { name: 'kombucha', post: { query: 'kombucha' } });
    expect(created.statusCode, JSON.stringify(created.body)).toBe(201);

    // The alert store fails once, at the first step after the engine write (recording the posts
    // written), as Redis timing out under load did in bench/alerts.md's run.
    const real = createAlertStore({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
    let failures = 1;
    const failOnce =
      <A extends unknown[], R>(step: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (failures-- > 0) throw new Error('the alert store is unreachable (timed out)');
        return step(...args);
      };
    const store: Pick<AlertStore, 'recordPending' | 'searchCount' | 'recordIntent' | 'confirmIntent'> = {
      searchCount: real.searchCount,
      recordIntent: real.recordIntent,
      recordPending: failOnce(real.recordPending),
      confirmIntent: failOnce(real.confirmIntent),
    };
    const process = createObservationProcessor({
      store: stack.runtime.engine.intake,
      locks: createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX }),
      changes: createPendingChanges({ store, requestPass: () => requestAlertPass(producer) }),
    });
    const observations = [
      valid(postObs('ai-author', { platform_id: 'ai-p1', caption: 'Brewing kombucha at home, second ferment' })),
    ];

    await expect(process(observations, { refresh: true, job: 'ai-job' })).rejects.toThrow(/unreachable/);
    // The post is written: the retry's merge has nothing left to write.
    expect((await stack.get(`/v1/social/posts/${mintId('post', 'ai-p1')}`)).statusCode).toBe(200);
    const retried = await process(observations, { refresh: true, retry: true, job: 'ai-job' });
    expect(retried.posts_written).toBe(0);

    const matched = await until(
      () => matchedPosts(created.body.id),
      (posts) => posts.length > 0,
    );
    expect(matched).toEqual([mintId('post', 'ai-p1')]);
    // A later pass (another post written) gives no second event for the pair.
    await stack.ingest([postObs('ai-author', { platform_id: 'ai-p2', caption: 'Kombucha flavours ranked' })], {
      vectors: false,
    });
    const after = await until(
      () => matchedPosts(created.body.id),
      (posts) => posts.length > 1,
    );
    expect(after.sort()).toEqual([mintId('post', 'ai-p1'), mintId('post', 'ai-p2')].sort());
  });
});
