import type { Client, estypes } from '@elastic/elasticsearch';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';
import type { IndexStatus, RebuildTransform, ShardCopy } from '../../index-admin.ts';
import type { IndexNames } from '../names.ts';
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

/** The concrete indices `alias` points to, sorted (none when it does not exist). */
export async function aliasTargets(client: Client, alias: string): Promise<string[]> {
  const exists = await engineCall(() => client.indices.existsAlias({ name: alias }));
  if (!exists) return [];
  const response = await engineCall(() => client.indices.getAlias({ name: alias }));
  return Object.keys(response).sort();
}

/** Those of `indices` whose mapping was not built from the template with content hash `hash`. */
export async function staleIndices(client: Client, indices: string[], hash: string): Promise<string[]> {
  const mappings = await engineCall(() => client.indices.getMapping({ index: indices }));
  return indices.filter((i) => fieldOf(mappings[i]?.mappings._meta, 'template_hash') !== hash);
}

/** What `indices status` reports of an index, but its name. */
export type IndexReport = Omit<IndexStatus, 'name' | 'companions'>;

/** What `indices status` reports of the index behind `names` (its name apart), `hash` its template's. */
export async function inspectIndex(client: Client, names: IndexNames, hash: string): Promise<IndexReport> {
  const targets = await aliasTargets(client, names.read);
  const base = { read_alias: names.read, write_alias: names.write, indices: targets };
  if (targets.length === 0)
    return {
      ...base,
      template_version: null,
      up_to_date: false,
      docs: 0,
      health: 'missing',
      shards: null,
      refresh_interval: null,
      allocation: [],
    };
  const mappings = await engineCall(() => client.indices.getMapping({ index: targets }));
  const versions = targets.map((i) => fieldOf(mappings[i]?.mappings._meta, 'template_version'));
  const count = await engineCall(() => client.count({ index: names.read }));
  const health = await engineCall(() => client.cluster.health({ index: targets, level: 'cluster' }));
  const live = (await liveSettings(client, targets)).get(targets[0]!);
  return {
    ...base,
    template_version: versions.every((v) => typeof v === 'number') ? Math.min(...versions) : null,
    up_to_date: (await staleIndices(client, targets, hash)).length === 0,
    docs: count.count,
    health: health.status,
    shards: live ? { primaries: live.primaries, replicas: live.replicas } : null,
    refresh_interval: live?.refreshInterval ?? null,
    allocation: await shardAllocation(client, targets),
  };
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

/** One document a record is projected into: the index it is written to (under the record's `_id`) and its body. */
export interface ProjectedWrite {
  index: string;
  doc: Record<string, unknown>;
}

/** What a copy wrote: how many records it read, and how many documents it wrote into each index. */
export interface CopyOutcome {
  records: number;
  written: Map<string, number>;
}

/**
 * Copies every record of `from` (an alias) into the documents `project` makes of it (one or
 * several, each into its own index, all under the record's `_id`), through a point in time in
 * `_shard_doc` order. Projections are recomputed from the records, so a rebuild also picks up new
 * indexed fields. `onProgress` counts records. Stops between pages when `signal` aborts.
 */
export async function copyRecords<R extends PostRecord | AccountRecord>(
  client: Client,
  options: {
    from: string;
    project: (record: R) => ProjectedWrite[];
    /** What each page's records need before `transform` (a post's vectors from its vector document). */
    prepare?: (records: R[]) => Promise<R[]>;
    transform?: RebuildTransform;
    signal?: AbortSignal;
    onProgress?: (copied: number) => void;
  },
): Promise<CopyOutcome> {
  const outcome: CopyOutcome = { records: 0, written: new Map() };
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
      const read = hits.map((h) => h._source!.record);
      const records = options.prepare ? await options.prepare(read) : read;
      const rewritten = options.transform ? await options.transform(records) : records;
      const writes = rewritten.flatMap((record, i) => options.project(record).map((w) => ({ ...w, id: hits[i]!._id })));
      await inFlight;
      inFlight = writePage(client, writes).then(() => {
        for (const { index } of writes) outcome.written.set(index, (outcome.written.get(index) ?? 0) + 1);
        outcome.records += hits.length;
        options.onProgress?.(outcome.records);
      });
      // Surfaces a failed bulk at the next await, not as an unhandled rejection meanwhile.
      inFlight.catch(() => undefined);
      after = hits.at(-1)!.sort;
    }
    await inFlight;
  } finally {
    await client.closePointInTime({ id: pit.id }).catch(() => undefined);
  }
  return outcome;
}

/** Writes one page of a copy in one bulk; throws on the first document refused. */
async function writePage(client: Client, writes: Array<ProjectedWrite & { id: string | undefined }>): Promise<void> {
  if (writes.length === 0) return;
  const operations = writes.flatMap(({ index, doc, id }) => [{ index: { _index: index, _id: id } }, doc]);
  const result = await engineCall(() => client.bulk({ operations }));
  if (!result.errors) return;
  const failed = result.items.find((i) => i.index?.error)?.index;
  throw new Error(`copy into ${failed?._index} failed: ${failed?.error?.type}: ${failed?.error?.reason}`);
}
