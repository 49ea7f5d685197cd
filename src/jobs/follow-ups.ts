import type { Logger } from 'pino';
import type { JobHandler } from '../queues/consumers.ts';
import type { FollowUpBacklog } from '../services/intake/follow-up-backlog.ts';
import type { FollowUps } from '../services/intake/follow-ups.ts';

/**
 * The handler of the `follow-ups` queue: claims every account and author that batches left since
 * the last run, recomputes their baselines and account metrics and fans out for all of them, then settles the claim. A run
 * that dies or throws keeps its claim, and its re-run does it again.
 */
export function followUpsJob(deps: {
  backlog: Pick<FollowUpBacklog, 'claim' | 'settle'>;
  followUps: Pick<FollowUps, 'runDeferred'>;
  logger: Pick<Logger, 'debug'>;
}): JobHandler<'follow-ups'> {
  return async (_payload, job) => {
    const started = performance.now();
    // BullMQ always names a job; a run's claim is keyed by it so that its re-runs find it.
    const runId = job.id ?? 'unnamed';
    const work = await deps.backlog.claim(runId);
    const done = await deps.followUps.runDeferred(work, { recheck: job.isRetry });
    await deps.backlog.settle(runId);
    const result = {
      accounts: work.accounts.length,
      authors: work.authors.length,
      fanned_out: done.fannedOut,
      baselines_updated: done.baselinesUpdated,
      metrics_updated: done.metricsUpdated,
    };
    deps.logger.debug({ job: job.id, ms: Math.round(performance.now() - started), ...result }, 'follow-up run done');
    return result;
  };
}
