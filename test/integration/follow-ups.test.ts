import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { createProducer, requestFollowUp } from '../../src/queues/registry.ts';
import { startQueueConsumers } from '../../src/queues/consumers.ts';
import { parseObservation } from '../../src/contract/observations.ts';
import { createFollowUpBacklog } from '../../src/services/intake/follow-up-backlog.ts';
import type { FollowUpWork } from '../../src/services/intake/follow-ups.ts';
import { createFollowUps } from '../../src/services/intake/follow-ups.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { currentSnapshotKey } from '../../src/domain/snapshots.ts';
import { accountObs, at, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * Batches nobody waits on leave fan-out and baselines to the `follow-ups` queue, which does the
 * work of many batches in one run. These tests hold it to the same end state as the inline path,
 * and check the two things its safety rests on: a run never misses work recorded before it was
 * asked for, and a run that dies keeps its work for its re-run.
 */

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-follow-ups-${randomUUID().slice(0, 8)}`;
const connections: Redis[] = [];
const connection = () => {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  connections.push(redis);
  return redis;
};
const quiet = { warn: () => undefined, error: () => undefined };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('follow-ups');
});
afterAll(async () => {
  await stack?.close();
  const redis = connection();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  for (const c of connections) c.disconnect();
});

/** Waits until no queue of the pipeline holds a job, then refreshes. */
async function drain(timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await stack.runtime.jobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed');
    expect(c.failed).toBe(0);
    if ((c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0) break;
    if (Date.now() > deadline) throw new Error(`queues not drained: ${JSON.stringify(c)}`);
    await sleep(50);
  }
  // Posts and accounts visible to search (refresh() alone makes posts visible to the intake's lookups).
  await stack.runtime.engine.intake.publish();
}

describe('follow-ups of batches nobody waits on', () => {
  it('give every post its author’s newest snapshot and its baseline ratio, in fewer runs than batches', async () => {
    const views = [100, 200, 300, 600, 1000];
    const requests = [
      [accountObs({ platform_id: 'fu-a', handle: 'fu.before' })],
      ...views.map((v, i) => [
        postObs('fu-a', { platform_id: `fu-p${i}`, posted_at: at(i * 60 * 24, '2026-05-01T12:00:00Z'), views: v }),
      ]),
      [accountObs({ platform_id: 'fu-a', handle: 'fu.after', observed_at: at(5) })],
    ];
    for (const observations of requests) {
      const response = await stack.ingest(observations, { wait: false });
      expect(response.statusCode).toBe(202);
    }
    await drain();

    const posts = await Promise.all(views.map((_, i) => stack.get(`/v1/social/posts/${mintId('post', `fu-p${i}`)}`)));
    expect(posts.map((p) => p.body.author.handle)).toEqual(views.map(() => 'fu.after'));
    // views / median views of the author's earlier posts (null with fewer than three of them):
    // 600 / median(100, 200, 300) = 3; 1000 / median(100, 200, 300, 600) = 4.
    expect(posts.map((p) => p.body.view_ratio_to_account_baseline)).toEqual([null, null, null, 3, 4]);

    const followUps = stack.runtime.queues.find((q) => q.name === 'follow-ups')!;
    const runs = (await followUps.getJobCounts('completed')).completed ?? 0;
    expect(runs).toBeGreaterThan(0);
    expect(runs).toBeLessThan(requests.length);
  });

  it('fan out to more posts than one merge holds: every one of an account’s 1,200 posts gets its new snapshot', async () => {
    const ids = Array.from({ length: 1200 }, (_, i) => `fu-many-p${i}`);
    expect(
      (await stack.ingest([accountObs({ platform_id: 'fu-many', handle: 'many.before' })], { wait: true })).statusCode,
    ).toBe(200);
    for (let i = 0; i < ids.length; i += 400) {
      const batch = ids.slice(i, i + 400).map((platformId) => postObs('fu-many', { platform_id: platformId }));
      expect((await stack.ingest(batch, { wait: true })).statusCode).toBe(200);
    }
    // One account change, fanned out by a follow-up run in slices of 500 merged two at a time.
    const changed = await stack.ingest(
      [accountObs({ platform_id: 'fu-many', handle: 'many.after', observed_at: at(5) })],
      { wait: false },
    );
    expect(changed.statusCode).toBe(202);
    await drain();

    const account = mintId('account', 'fu-many');
    const records = await stack.runtime.engine.intake.posts.get(ids.map((p) => mintId('post', p)));
    expect(records.size).toBe(ids.length);
    const handles = [...records.values()].map((r) => r.accounts[account]?.profile?.handle);
    expect(handles.filter((h) => h !== 'many.after')).toEqual([]);
  });
});

describe('fan-out', () => {
  it('reads only the posts whose copy of a changed account reads differently, account by account', async () => {
    const ingested = await stack.ingest(
      [
        accountObs({ platform_id: 'hs-a', handle: 'held.a' }),
        accountObs({ platform_id: 'hs-c', handle: 'held.c' }),
        postObs('hs-a', { platform_id: 'hs-solo' }),
        postObs('hs-a', { platform_id: 'hs-with-c', coauthor_platform_ids: ['hs-c'] }),
      ],
      { wait: true },
    );
    expect(ingested.statusCode).toBe(200);
    const store = stack.runtime.engine.intake;
    const [a, c] = ['hs-a', 'hs-c'].map((p) => mintId('account', p));
    const accounts = await store.accounts.get([a!, c!]);
    const linked = async (keys: Map<string, string>) => {
      const ids: string[] = [];
      for await (const page of store.postIdsLinkedTo([a!, c!], keys)) ids.push(...page);
      return ids.sort();
    };
    const key = (id: string) => currentSnapshotKey(accounts.get(id)!);
    // Both posts hold both accounts as they are: nothing to read.
    expect(
      await linked(
        new Map([
          [a!, key(a!)],
          [c!, key(c!)],
        ]),
      ),
    ).toEqual([]);
    // The coauthor reads differently now: only the post linking to it, though it holds the author's
    // current snapshot too.
    const renamed = {
      ...accounts.get(c!)!,
      profile: { ...accounts.get(c!)!.profile!, v: { ...accounts.get(c!)!.profile!.v, handle: 'held.c2' } },
    };
    expect(
      await linked(
        new Map([
          [a!, key(a!)],
          [c!, currentSnapshotKey(renamed)],
        ]),
      ),
    ).toEqual([mintId('post', 'hs-with-c')]);
    // Without keys, every linked post.
    expect(await linked(new Map())).toEqual([mintId('post', 'hs-solo'), mintId('post', 'hs-with-c')].sort());
  });
});

describe('a post’s first write', () => {
  // Written as an observations job writes them, its follow-up work kept for the test to run.
  function intake() {
    const work: FollowUpWork[] = [];
    const store = stack.runtime.engine.intake;
    const locks = createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
    const process = createObservationProcessor({ store, locks, followUps: { add: async (w) => void work.push(w) } });
    const followUps = createFollowUps({ store, locks });
    const write = (observations: object[]) =>
      process(
        observations.map((o) => {
          const parsed = parseObservation(o);
          if (!parsed.ok) throw new Error(parsed.detail);
          return parsed.value;
        }),
        { refresh: false },
      );
    const follow = () =>
      followUps.runDeferred({ accounts: [], authors: [...new Set(work.splice(0).flatMap((w) => w.authors))] });
    return { write, follow, store };
  }
  const ratios = async (store: ReturnType<typeof intake>['store'], ids: string[]) => {
    const records = await store.posts.get(ids.map((p) => mintId('post', p)));
    return ids.map((p) => records.get(mintId('post', p))?.view_ratio_to_account_baseline);
  };

  it('carries the baseline ratio its batch can tell, and the follow-up run corrects what a later batch changes', async () => {
    const { write, follow, store } = intake();
    // A profile's page as a pipeline sends it: newest first, in one batch.
    const views = [1000, 600, 300, 200, 100];
    const ids = views.map((_, i) => `fw-p${i}`);
    await write([
      accountObs({ platform_id: 'fw-a' }),
      ...views.map((v, i) =>
        postObs('fw-a', { platform_id: ids[i], posted_at: at(-i * 60 * 24, '2026-05-20T12:00:00Z'), views: v }),
      ),
    ]);
    // No follow-up has run: 1000 / median(600, 300, 200, 100) = 4; 600 / median(300, 200, 100) = 3.
    expect(await ratios(store, ids)).toEqual([4, 3, null, null, null]);
    // So the follow-up run finds every ratio right and rewrites no post for it.
    expect((await follow()).baselinesUpdated).toBe(0);

    // An older post found later: the newer posts' ratios are its follow-up's to correct.
    await write([postObs('fw-a', { platform_id: 'fw-old', posted_at: '2026-05-01T12:00:00Z', views: 400 })]);
    expect(await ratios(store, [...ids, 'fw-old'])).toEqual([4, 3, null, null, null, null]);
    expect((await follow()).baselinesUpdated).toBe(3);
    // 1000 / median(600, 300, 200, 100, 400) = 1000 / 300; 600 / median(300, 200, 100, 400) = 2.4;
    // 300 / median(200, 100, 400) = 1.5.
    expect(await ratios(store, [...ids, 'fw-old'])).toEqual([1000 / 300, 2.4, 1.5, null, null, null]);
  });
});

describe('follow-up backlog', () => {
  it('a run that dies before settling finds its claim again, with the work added since', async () => {
    let requested = 0;
    const backlog = createFollowUpBacklog({ redis: connection(), prefix, requestRun: async () => void requested++ });
    await backlog.add({ accounts: ['acc_1', 'acc_2'], authors: ['acc_1'], history: ['acc_1'] });
    await backlog.add({ accounts: ['acc_2'], authors: [] });
    expect(requested).toBe(2);

    const first = await backlog.claim('run-1');
    expect({ ...first, accounts: first.accounts.sort() }).toEqual({
      accounts: ['acc_1', 'acc_2'],
      authors: ['acc_1'],
      history: ['acc_1'],
    });
    // run-1 dies here; meanwhile a batch adds more.
    await backlog.add({ accounts: [], authors: ['acc_3'] });
    // Another run sees only what nobody claimed.
    expect(await backlog.claim('run-2')).toEqual({ accounts: [], authors: ['acc_3'], history: [] });
    await backlog.settle('run-2');
    await backlog.add({ accounts: ['acc_4'], authors: [] });
    // run-1 runs again: its own claim plus what was added since.
    const again = await backlog.claim('run-1');
    expect({ ...again, accounts: again.accounts.sort() }).toEqual({
      accounts: ['acc_1', 'acc_2', 'acc_4'],
      authors: ['acc_1'],
      history: ['acc_1'],
    });
    await backlog.settle('run-1');
    expect(await backlog.claim('run-1')).toEqual({ accounts: [], authors: [], history: [] });
  });

  it('asking for a run while one is pending adds none; while one runs, exactly one more follows it', async () => {
    const queue = createProducer('follow-ups', { connection: connection(), prefix });
    for (let i = 0; i < 5; i++) await requestFollowUp(queue);
    expect(await queue.getJobCounts('delayed', 'waiting')).toEqual({ delayed: 1, waiting: 0 });

    let runs = 0;
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const workers = startQueueConsumers(
      {
        'follow-ups': async () => {
          if (++runs === 1) await blocked;
          return { accounts: 0, authors: 0, fanned_out: 0, baselines_updated: 0, metrics_updated: 0 };
        },
      },
      { connection, prefix, configuredConcurrency: 1, logger: quiet },
    );
    try {
      const deadline = Date.now() + 10_000;
      while (runs === 0 && Date.now() < deadline) await sleep(50);
      expect(runs).toBe(1);
      // Work recorded after the active run claimed its share must not wait for a later batch.
      for (let i = 0; i < 3; i++) await requestFollowUp(queue);
      release();
      while (runs < 2 && Date.now() < deadline) await sleep(50);
      await sleep(1500);
      expect(runs).toBe(2);
    } finally {
      await workers.close();
      await queue.close();
    }
  });
});
