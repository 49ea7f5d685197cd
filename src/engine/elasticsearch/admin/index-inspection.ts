import type { Client, estypes } from '@elastic/elasticsearch';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';
import type { RebuildTransform, ShardCopy } from '../../index-admin.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { adminCall as engineCall } from './templates.ts';
import { fieldOf } from '../../../internal/typed-objects.ts';

/** What the index admin reads of live indices (their settings, where their copies are) and copies between them. */

/** What `apply` reads of a live index to compare with the layout. */
export interface LiveSettings {
  primaries: number;
  replicas: number;
  refreshInterval: string;
}

/** Primary shards, replicas per shard and refresh interval of each index, as the cluster reports them. */
export async function liveSettings(client: Client, indices: string[]): Promise<Map<string, LiveSettings>> {
  const settings = await engineCall(() =>
    client.indices.getSettings({
      index: indices,
      name: ['index.number_of_shards', 'index.number_of_replicas', 'index.refresh_interval'],
      flat_settings: true,
    }),
  );
  return new Map(
    Object.entries(settings).map(([index, s]) => {
      // Flat settings: dotted names as keys, values as strings.
      const interval = fieldOf(s.settings, 'index.refresh_interval');
      return [
        index,
        {
          primaries: Number(fieldOf(s.settings, 'index.number_of_shards')),
          replicas: Number(fieldOf(s.settings, 'index.number_of_replicas')),
          // Absent when never set: the engine's default.
          refreshInterval: typeof interval === 'string' ? interval : '1s',
        },
      ];
    }),
  );
}

/** Where every copy of every shard of `indices` is (`_cat/shards`), in shard order, primaries first. */
export async function shardAllocation(client: Client, indices: string[]): Promise<ShardCopy[]> {
  const rows = await engineCall(() =>
    client.cat.shards({ index: indices, format: 'json', h: ['index', 'shard', 'prirep', 'state', 'node'] }),
  );
  return rows
    .map((r) => ({
      index: String(r.index),
      shard: Number(r.shard),
      primary: r.prirep === 'p' || r.prirep === 'primary',
      state: String(r.state),
      node: r.node ?? null,
    }))
    .sort(
      (a, b) =>
        a.index.localeCompare(b.index) ||
        a.shard - b.shard ||
        Number(b.primary) - Number(a.primary) ||
        String(a.node).localeCompare(String(b.node)),
    );
}

/**
 * Copies every record of `from` (an alias) into index `to`, projected anew by `project` (so a
 * rebuild also picks up new indexed fields), through a point in time in `_shard_doc` order.
 * Returns how many it copied. Stops between pages when `signal` aborts.
 */
export async function copyRecords<R extends PostRecord | AccountRecord>(
  client: Client,
  options: {
    from: string;
    to: string;
    project: (record: R) => Record<string, unknown>;
    transform?: RebuildTransform;
    signal?: AbortSignal;
    onProgress?: (copied: number) => void;
  },
): Promise<number> {
  const { to, project } = options;
  let copied = 0;
  const pit = await engineCall(() => client.openPointInTime({ index: options.from, keep_alive: '5m' }));
  try {
    let after: estypes.SortResults | undefined;
    // One bulk in flight while the next page is read and projected: the engine indexes while
    // this process computes, instead of each waiting for the other.
    let inFlight: Promise<void> | null = null;
    for (;;) {
      options.signal?.throwIfAborted();
      const page = await engineCall(() =>
        client.search<{ record: R }>({
          // A page missing a lost shard would be missing from the new index too.
          ...COMPLETE_RESULTS,
          pit: { id: pit.id, keep_alive: '5m' },
          sort: [{ _shard_doc: 'asc' }],
          size: 1000,
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = page.hits.hits;
      if (hits.length === 0) break;
      // Projections are recomputed from records, so a rebuild also picks up new indexed fields.
      const records = hits.map((h) => h._source!.record);
      const rewritten = options.transform ? await options.transform(records) : records;
      const operations = rewritten.flatMap((record, i) => [
        { index: { _index: to, _id: hits[i]!._id } },
        project(record),
      ]);
      await inFlight;
      inFlight = engineCall(() => client.bulk({ operations })).then((result) => {
        if (result.errors) {
          const first = result.items.find((i) => i.index?.error)?.index?.error;
          throw new Error(`copy into ${to} failed: ${first?.type}: ${first?.reason}`);
        }
        copied += hits.length;
        options.onProgress?.(copied);
      });
      // Surfaces a failed bulk at the next await, not as an unhandled rejection meanwhile.
      inFlight.catch(() => undefined);
      after = hits.at(-1)!.sort;
    }
    await inFlight;
  } finally {
    await client.closePointInTime({ id: pit.id }).catch(() => undefined);
  }
  return copied;
}
