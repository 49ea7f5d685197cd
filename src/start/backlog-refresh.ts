import type { Logger } from 'pino';
import type { IndexAdmin } from '../engine/index-admin.ts';
import { startBacklogRefresh, type BacklogRefresh } from '../internal/backlog-refresh.ts';
import type { Config } from '../internal/config.ts';
import type { Producer } from '../queues/registry.ts';

/**
 * The worker's backlog refresh (BACKLOG_REFRESH_INTERVAL; src/internal/backlog-refresh.ts): the
 * observations queue's oldest waiting job, read each second; null when `off`.
 */
export function openBacklogRefresh(
  config: Config,
  queue: Pick<Producer<'observations'>, 'isPaused' | 'getJobs'>,
  admin: Pick<IndexAdmin, 'refreshForBacklog'>,
  logger: Pick<Logger, 'info'>,
): BacklogRefresh | null {
  if (config.BACKLOG_REFRESH_INTERVAL === 'off') return null;
  const interval = config.BACKLOG_REFRESH_INTERVAL;
  return startBacklogRefresh({
    interval,
    async sample() {
      const [paused, [oldest]] = await Promise.all([queue.isPaused(), queue.getJobs(['wait'], 0, 0, true)]);
      return { paused, oldestWaitingMs: oldest ? Math.max(0, Date.now() - oldest.timestamp) : null };
    },
    apply: (raiseTo) => admin.refreshForBacklog(raiseTo),
    onChange: (change, sample) =>
      change === 'behind'
        ? logger.info(
            { oldest_waiting_s: Math.round((sample.oldestWaitingMs ?? 0) / 1000), refresh_interval: interval },
            'the intake is behind: new writes are made visible, and follow-ups run, every refresh interval until it catches up',
          )
        : logger.info(
            { refresh_interval: config.INDEX_REFRESH_INTERVAL },
            'the intake has caught up: refresh interval set back',
          ),
  });
}
