import type { Client } from '@elastic/elasticsearch';
import { durationMs } from '../../../internal/backlog-refresh.ts';
import { fieldOf } from '../../../internal/typed-objects.ts';
import { adminCall as engineCall } from './templates.ts';

/**
 * Sets the refresh interval of the live indices behind `aliases` for the intake's backlog
 * (src/internal/backlog-refresh.ts): with `raiseTo`, on those whose interval is shorter (one an
 * operator raised further stays); with null, `steady` (INDEX_REFRESH_INTERVAL) on those that
 * differ. Missing indices are skipped. Returns the indices it changed.
 */
export async function setBacklogRefresh(
  client: Client,
  aliases: string[],
  steady: string,
  raiseTo: string | null,
): Promise<string[]> {
  const settings = await engineCall(() =>
    client.indices.getSettings({
      index: aliases,
      name: 'index.refresh_interval',
      flat_settings: true,
      ignore_unavailable: true,
      allow_no_indices: true,
    }),
  );
  const change = Object.entries(settings).flatMap(([index, s]) => {
    const value = fieldOf(s.settings, 'index.refresh_interval');
    // Never set: the engine's default, 1 s.
    const interval = typeof value === 'string' ? value : '1s';
    const differs = raiseTo === null ? interval !== steady : durationMs(interval) < durationMs(raiseTo);
    return differs ? [index] : [];
  });
  if (change.length > 0)
    await engineCall(() =>
      client.indices.putSettings({ index: change, settings: { refresh_interval: raiseTo ?? steady } }),
    );
  return change;
}
