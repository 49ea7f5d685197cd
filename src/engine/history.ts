import type { MetricPoint } from '../domain/history.ts';
import type { EntityKind } from '../domain/records.ts';

/** What the history endpoints need of the engine: one record's metric points. */
export interface HistoryReads {
  /**
   * The points of record `id` observed in `[from, to]`, in time order; null when there are more
   * than `limit`. Near real time. Empty when the history is off.
   */
  points(entity: EntityKind, id: string, from: string, to: string, limit: number): Promise<MetricPoint[] | null>;
}
