import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import {
  buildDrillDataset,
  checkState,
  drain,
  jobCounts,
  openDrill,
  problemsOf,
  sendObservations,
  summary,
  waitForCounts,
  type Drill,
} from '../helpers/drill.ts';

/**
 * Drill: the worker process is SIGKILLed while it runs jobs of a 20,000-observation intake, and a
 * new one is started. Its jobs were mid-batch (some of their writes landed, some did not); their
 * locks expire and BullMQ's stalled-job check moves them back to wait, so the new worker runs them
 * again. Merges are idempotent, so the re-run must leave every record exactly as if the batch had
 * run once.
 *
 * With BullMQ's defaults (src/queues/consumers.ts sets neither lockDuration nor stalledInterval,
 * both 30 s) a killed worker's jobs are re-run about 60 s after the kill: a job is moved back only
 * by the second stalled check that finds it without a lock. The per-author locks the killed worker
 * held (src/services/intake/keyed-locks.ts, 60 s) lapse in that time too.
 */

const dataset = buildDrillDataset({ seed: 37 });
let drill: Drill | undefined;

beforeAll(async () => {
  drill = await openDrill('worker-kill');
});
afterAll(async () => drill?.close());

it('re-runs the jobs of a SIGKILLed worker: every observation indexed exactly once, with its newest fields', async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const first = await d.startWorkerProcess({ WORKER_CONCURRENCY: '4' });
  const started = performance.now();
  const sending = sendObservations(d.stack, dataset.observations, { requestSize: 2500, maxQueuedJobs: 10 });
  sending.catch(() => undefined);

  // Mid-intake, with jobs running.
  await waitForCounts(
    d.stack,
    (c) => (c.completed ?? 0) >= 10 && (c.active ?? 0) >= 2,
    180_000,
    'running jobs after a quarter of the intake',
  );
  first.kill('SIGKILL');
  const killedAt = performance.now();
  const killedAtEpoch = Date.now();
  const exit = await first.exited;
  // No worker runs now: every active job is one the killed worker held.
  const killedJobs = (await d.stack.runtime.queue.getActive()).map((j) => j.id!);
  const second = await d.startWorkerProcess({ WORKER_CONCURRENCY: '4' });
  const restartedAt = performance.now();

  // Recovered once every job the killed worker held has completed (re-run by the new worker).
  const deadline = Date.now() + 180_000;
  let recoveredAt: number;
  for (;;) {
    const states = await Promise.all(killedJobs.map((id) => d.stack.runtime.queue.getJobState(id)));
    if (states.every((s) => s === 'completed')) {
      recoveredAt = performance.now();
      break;
    }
    expect(states, 'a killed job failed for good').not.toContain('failed');
    if (Date.now() > deadline) throw new Error(`killed jobs not re-run: ${JSON.stringify(states)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const rerun = await Promise.all(killedJobs.map((id) => d.stack.runtime.queue.getJob(id)));

  const sent = await sending;
  const end = await drain(d.stack);
  const drained = performance.now();
  const report = await checkState(d.es, d.prefix, dataset.expected);
  await second.stop();

  summary('worker-sigkill', {
    observations: sent.sent,
    posts: `${report.posts.count}/${report.posts.expected}`,
    accounts: `${report.accounts.count}/${report.accounts.expected}`,
    killed: `${exit.signal} with ${killedJobs.length} active jobs (${killedJobs.join(',')})`,
    attempts_started_of_killed_jobs: rerun.map((j) => j?.attemptsStarted),
    // When the new worker took each killed job again (stalled check), and how long the re-run took.
    rerun_started_after_kill_ms: rerun.map((j) => (j?.processedOn ?? 0) - killedAtEpoch),
    rerun_ms: rerun.map((j) => (j?.finishedOn ?? 0) - (j?.processedOn ?? 0)),
    new_worker_ready_ms: Math.round(restartedAt - killedAt),
    killed_jobs_rerun_ms: Math.round(recoveredAt - killedAt),
    drained_after_kill_ms: Math.round(drained - killedAt),
    total_ms: Math.round(drained - started),
    jobs: end,
  });
  expect(exit.signal).toBe('SIGKILL');
  expect(killedJobs.length).toBeGreaterThan(0);
  // Each killed job ran (at least) twice: the cut run and the re-run.
  for (const job of rerun) expect(job?.attemptsStarted).toBeGreaterThanOrEqual(2);
  expect((await jobCounts(d.stack)).failed).toBe(0);
  expect(problemsOf(report)).toEqual([]);
});
