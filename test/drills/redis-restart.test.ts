import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import {
  buildDrillDataset,
  checkState,
  drain,
  jobCounts,
  openDrill,
  problemsOf,
  rerunsOf,
  sendObservations,
  summary,
  waitForCounts,
  type Drill,
} from '../helpers/drill.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import type { Redis } from 'ioredis';

/**
 * Drill: Redis (AOF, fsync on every write) is shut down in the middle of a 20,000-observation
 * intake and started again from its data directory. The intake answers 503 while it is down (the
 * client sends those requests again, as a pipeline would); jobs already accepted are in the AOF and
 * must all be processed once Redis is back.
 *
 * A dedicated redis-server on its own port and directory: the shared Redis serves every other test
 * file, so it is never stopped. The API (in process) and the worker (a subprocess) use this one.
 */

const DOWN_MS = 5000;
const dataset = buildDrillDataset({ seed: 53 });
let redis: RedisServer | undefined;
let drill: Drill | undefined;

/** The per-author locks (src/services/intake/keyed-locks.ts) in Redis: key → holder's token, time to live. */
async function lockTokens(redis: Redis, prefix: string) {
  const keys = await redis.keys(`${prefix}:lock:*`);
  const tokens = keys.length > 0 ? await redis.mget(...keys) : [];
  const ttls = await Promise.all(keys.map((k) => redis.pttl(k)));
  return new Map(keys.map((k, i) => [k, { token: tokens[i] ?? '', ttl: ttls[i]! }]));
}

beforeAll(async () => {
  redis = await startRedisServer();
  drill = await openDrill('redis-restart', { redisUrl: redis.url });
});
afterAll(async () => {
  await drill?.close();
  await redis?.close();
});

it('processes every accepted observation exactly once, with its newest fields, after Redis restarts mid-intake', async () => {
  const d = drill!;
  const server = redis!;
  onTestFailed(() => d.keepLogs());
  expect(await server.command('CONFIG GET appendonly')).toMatch(/appendonly\r\n\$3\r\nyes/);
  const worker = await d.startWorkerProcess({ WORKER_CONCURRENCY: '4' });
  const started = performance.now();
  // A small backlog, so that requests are still being sent when Redis goes away.
  const sending = sendObservations(d.stack, dataset.observations, { requestSize: 2500, maxQueuedJobs: 5 });
  sending.catch(() => undefined);

  await waitForCounts(d.stack, (c) => (c.completed ?? 0) >= 10, 180_000, 'a quarter of the jobs');
  const before = await jobCounts(d.stack);
  const activeAtStop = (await d.stack.runtime.queue.getActive()).map((j) => j.id!);
  const stoppedAt = performance.now();
  await server.stop('shutdown-nosave');
  await sleep(DOWN_MS);
  await server.start();
  const restartedAt = performance.now();
  const after = await waitForCounts(d.stack, () => true, 60_000, 'Redis to answer the API again');
  // The locks are read on the request path's connection, which fails fast and reconnects on its own
  // schedule, behind the queue's that answered the counts (it failed this drill once, f9cbd54).
  expect(await d.stack.runtime.ready(60_000)).toBe(true);
  // Locks still held 10 s later by the same token: nobody releases them, they only expire.
  const orphans = (async () => {
    const first = await lockTokens(d.stack.runtime.redis, d.prefix);
    await sleep(10_000);
    const later = await lockTokens(d.stack.runtime.redis, d.prefix);
    const kept = [...first].filter(([key, token]) => later.get(key)?.token === token.token);
    return {
      count: kept.length,
      tokens: new Set(kept.map(([, t]) => t.token)).size,
      ttlLeft: Math.max(0, ...kept.map(([key]) => later.get(key)!.ttl)),
    };
  })();
  orphans.catch(() => undefined);
  await waitForCounts(
    d.stack,
    (c) => (c.completed ?? 0) > (after.completed ?? 0),
    180_000,
    'a job to complete after the restart',
  );
  const firstCompletion = performance.now();

  const sent = await sending;
  const end = await drain(d.stack);
  const drained = performance.now();
  const report = await checkState(d.es, d.prefix, dataset.expected);
  const stoppedAtEpoch = Date.now() - Math.round(performance.now() - stoppedAt);
  const jobsActiveAtStop = await Promise.all(activeAtStop.map((id) => d.stack.runtime.queue.getJob(id)));
  const reruns = await rerunsOf(d.stack);
  await worker.stop();

  summary('redis-restart', {
    observations: sent.sent,
    posts: `${report.posts.count}/${report.posts.expected}`,
    accounts: `${report.accounts.count}/${report.accounts.expected}`,
    redis_down_ms: Math.round(restartedAt - stoppedAt),
    jobs_before: before,
    jobs_after_restart: after,
    intake_answers: sent.statuses,
    // The jobs running when Redis stopped: how often they were started, when they last started and finished (ms after the stop).
    jobs_active_at_stop: jobsActiveAtStop.map(
      (j) =>
        `${j?.id}: started ${j?.attemptsStarted}x, finished ${j?.attemptsMade}x, last start +${(j?.processedOn ?? 0) - stoppedAtEpoch}, end +${(j?.finishedOn ?? 0) - stoppedAtEpoch}`,
    ),
    job_reruns: reruns,
    locks_still_held_10s_after_restart: await orphans.then(
      (o) => `${o.count} (tokens ${o.tokens}, expiring in ≤ ${o.ttlLeft} ms)`,
    ),
    first_completion_after_restart_ms: Math.round(firstCompletion - restartedAt),
    drained_after_restart_ms: Math.round(drained - restartedAt),
    total_ms: Math.round(drained - started),
    jobs: end,
  });
  // Nothing accepted before the shutdown was lost with it (AOF).
  expect(
    (after.completed ?? 0) + (after.active ?? 0) + (after.waiting ?? 0) + (after.delayed ?? 0),
  ).toBeGreaterThanOrEqual(
    (before.completed ?? 0) + (before.active ?? 0) + (before.waiting ?? 0) + (before.delayed ?? 0),
  );
  expect(problemsOf(report)).toEqual([]);
});
