import type { IndexAdmin, PruneOutcome } from '../../engine/index-admin.ts';

/** The metric history's retention: what the hourly maintenance job runs. */
export interface HistoryRetention {
  /** Drops the months past retention and thins the months older than 30 days, as of `now`. */
  run(now: Date): Promise<PruneOutcome>;
}

/** Creates the retention pass over the index admin. */
export function createHistoryRetention(deps: { admin: Pick<IndexAdmin, 'pruneHistory'> }): HistoryRetention {
  return { run: (now) => deps.admin.pruneHistory(now) };
}
