import type { Logger } from 'pino';
import type { JobHandler } from '../queues/consumers.ts';
import type { HistoryRetention } from '../services/indices/history-retention.ts';

/**
 * The handler of the `maintenance` queue (hourly): the metric history's retention pass, which
 * drops months past METRIC_HISTORY_RETENTION_DAYS and thins months older than 30 days once.
 */
export function maintenanceJob(deps: {
  retention: HistoryRetention;
  logger: Pick<Logger, 'info'>;
}): JobHandler<'maintenance'> {
  return async () => {
    const done = await deps.retention.run(new Date());
    const result = { dropped: done.dropped, thinned: done.thinned, points_deleted: done.pointsDeleted };
    if (done.dropped.length + done.thinned.length > 0) deps.logger.info(result, 'metric history retention applied');
    return result;
  };
}
