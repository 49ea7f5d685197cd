import type { Logger } from 'pino';
import type { IndexAdmin } from '../engine/index-admin.ts';
import { startBacklogRefresh, type BacklogRefresh } from '../internal/backlog-refresh.ts';
import type { Config } from '../internal/config.ts';
import { oldestWaitingAt, type Producer } from '../queues/registry.ts';

/**
 * The worker's backlog refresh (BACKLOG_REFRESH_INTERVAL; src/internal/backlog-refresh.ts): the
 * observations queue's oldest waiting job, read each second; null when `off`. Once caught up, a
 * follow-up run still delayed by the backlog interval starts at once instead of waiting it out.
 */
export function openBacklogRefresh(
  config: Config,
  queues: {
    observations: Pick<Producer<'observations'>, 'isPaused' | 'getRanges' | 'getBackend' | 'toKey'>;
    followUps: Pick<Producer<'follow-ups'>, 'getDelayed'>;
  },
  admin: Pick<IndexAdmin, 'refreshForBacklog'>,
  logger: Pick<Logger, 'info'>,
): BacklogRefresh | null {
  if (config.BACKLOG_REFRESH_INTERVAL === 'off') return null;
  const interval = config.BACKLOG_REFRESH_INTERVAL;
  const { observations, followUps } = queues;
  const promoteFollowUps = async () => {
    for (const job of await followUps.getDelayed()) await job.promote().catch(() => undefined);
  };
  return startBacklogRefresh({
    interval,
    async sample() {
      const [paused, oldestAt] = await Promise.all([observations.isPaused(), oldestWaitingAt(observations)]);
      return { paused, oldestWaitingMs: oldestAt === null ? null : Math.max(0, Date.now() - oldestAt) };
    },
    apply: (raiseTo) => admin.refreshForBacklog(raiseTo),
    onChange(change, sample) {
      if (change === 'behind') {
        logger.info(
          { oldest_waiting_s: Math.round((sample.oldestWaitingMs ?? 0) / 1000), refresh_interval: interval },
          'the intake is behind: new writes are made visible, and follow-ups run, every refresh interval until it catches up',
        );
        return;
      }
      logger.info(
        { refresh_interval: config.INDEX_REFRESH_INTERVAL },
        'the intake has caught up: refresh interval set back',
      );
      // Advisory like the rest: a run left delayed starts at its time anyway.
      promoteFollowUps().catch(() => undefined);
    },
  });
}
