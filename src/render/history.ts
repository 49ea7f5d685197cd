import type { AccountHistory, HistoryInterval, PostHistory } from '../contract/api.ts';
import type { MetricPoint } from '../domain/history.ts';

/** A metric history as the history endpoints answer it: the bare resource, points in time order. */
export function renderHistory(
  id: string,
  query: { from: string; to: string; interval: HistoryInterval },
  points: readonly MetricPoint[],
): AccountHistory & PostHistory {
  return {
    id,
    interval: query.interval,
    points: points.map((p) => ({ at: p.at, ...p.counters })),
    from: query.from,
    to: query.to,
  };
}
