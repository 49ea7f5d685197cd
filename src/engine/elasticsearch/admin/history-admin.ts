import type { Client, estypes } from '@elastic/elasticsearch';
import type { ApplyLine, HistoryStatus, PruneOutcome } from '../../index-admin.ts';
import { COMPLETE_RESULTS } from '../errors.ts';
import { monthEnd, type MetricHistoryNames } from '../documents/metric-history.ts';
import { adminCall, hashOf, putIndexTemplateIfChanged, type TemplateFile } from './templates.ts';
import { firstString } from '../response-values.ts';
import { fieldOf } from '../../../internal/typed-objects.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Points older than this may be thinned to the last of each (record, UTC day). */
const THIN_AFTER_DAYS = 30;
const PAGE = 10_000;

/**
 * Operator side of the metric history (`indices apply`, `indices status`, retention): its index
 * template, what its monthly indices hold, and dropping or thinning old months. The monthly
 * layout is described in `metric-history.ts`.
 */
export function createHistoryAdmin(deps: {
  client: Client;
  names: MetricHistoryNames;
  /** `index-templates/metrics.index.json`. */
  file: TemplateFile;
  /** Primary shards of months created from now on, and their replicas (INDEX_SHARDS, INDEX_REPLICAS). */
  layout: { shards: number; replicas: number };
}) {
  const { client, names, file } = deps;
  // Not composed of the shared settings: those carry text analysis the history has no use for and
  // an explicit refresh interval, which would keep every month refreshing each second. Left unset,
  // a month nobody searched for 30 s stops refreshing, and the next search refreshes it first.
  const settings = { ...file.template.settings, number_of_shards: deps.layout.shards };
  // The replica count changes live (apply sets it), so it is not part of what shapes a month.
  const hash = hashOf({ settings, mappings: file.template.mappings, version: file.version });

  /** The monthly indices, oldest first, with their points, size and whether they were thinned. */
  async function months(): Promise<Array<{ index: string; docs: number; bytes: number; thinned: boolean }>> {
    const rows = await adminCall(() =>
      client.cat.indices({
        index: names.pattern,
        format: 'json',
        h: ['index', 'docs.count', 'store.size'],
        bytes: 'b',
      }),
    );
    const indices = rows.map((r) => String(r.index)).filter((i) => monthEnd(names, i) !== null);
    if (indices.length === 0) return [];
    const mappings = await adminCall(() => client.indices.getMapping({ index: indices }));
    return rows
      .filter((r) => indices.includes(String(r.index)))
      .map((r) => ({
        index: String(r.index),
        docs: Number(r['docs.count'] ?? 0),
        bytes: Number(r['store.size'] ?? 0),
        thinned: fieldOf(mappings[String(r.index)]?.mappings._meta, 'thinned') === true,
      }))
      .sort((a, b) => a.index.localeCompare(b.index));
  }

  /** Keeps the last point of each (record, UTC day) of a month; returns how many it deleted. */
  async function thin(index: string): Promise<number> {
    await adminCall(() => client.indices.refresh({ index }));
    let deleted = 0;
    let after: estypes.SortResults | undefined;
    // The previous hit's (record, day) key, never empty (it holds a `|`), and document.
    const last = { key: '', docId: '' };
    for (;;) {
      const page = await adminCall(() =>
        client.search({
          ...COMPLETE_RESULTS,
          index,
          _source: false,
          docvalue_fields: [{ field: 'id' }, { field: '@timestamp', format: 'strict_date_time' }],
          sort: [{ id: 'asc' }, { '@timestamp': 'asc' }],
          size: PAGE,
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = page.hits.hits;
      const doomed: string[] = [];
      for (const hit of hits) {
        const key = `${firstString(hit, 'id')}|${firstString(hit, '@timestamp')?.slice(0, 10)}`;
        // Sorted by time within a record: a later point of the same day replaces the one before.
        if (last.key === key) doomed.push(last.docId);
        last.key = key;
        last.docId = hit._id!;
      }
      if (doomed.length > 0) {
        await adminCall(() =>
          client.bulk({ operations: doomed.map((id) => ({ delete: { _index: index, _id: id } })) }),
        );
        deleted += doomed.length;
      }
      if (hits.length < PAGE) break;
      after = hits.at(-1)!.sort;
    }
    await adminCall(() => client.indices.refresh({ index }));
    await adminCall(() => client.indices.putMapping({ index, _meta: { thinned: true } }));
    return deleted;
  }

  return {
    /** Installs the history's index template (creating no index: months come with their points). */
    install(): Promise<ApplyLine> {
      return putIndexTemplateIfChanged(
        client,
        names.template,
        {
          index_patterns: [names.pattern],
          priority: file.priority ?? 200,
          version: file.version,
          _meta: { ...file._meta, content_hash: hash, managed_by: 'social-search' },
          template: {
            ...file.template,
            settings: { ...settings, number_of_replicas: deps.layout.replicas },
            aliases: { [names.read]: {} },
          },
        },
        hash,
        { rebuildHint: 'months created from now on take it; earlier months keep theirs' },
      );
    },

    /** The monthly indices that exist (for live settings such as replicas). */
    async indices(): Promise<string[]> {
      return (await months()).map((m) => m.index);
    },

    async status(retentionDays: number): Promise<HistoryStatus> {
      // Counts and sizes of what was written, not of what the last periodic refresh made visible.
      await adminCall(() =>
        client.indices.refresh({ index: names.read, ignore_unavailable: true, allow_no_indices: true }),
      );
      const installed = await adminCall(() => client.indices.existsIndexTemplate({ name: names.template }));
      const all = await months();
      let oldest: string | null = null;
      let newest: string | null = null;
      if (all.some((m) => m.docs > 0)) {
        const range = await adminCall(() =>
          client.search<unknown, Record<'oldest' | 'newest', estypes.AggregationsMinAggregate>>({
            index: names.read,
            size: 0,
            track_total_hits: false,
            aggs: { oldest: { min: { field: '@timestamp' } }, newest: { max: { field: '@timestamp' } } },
          }),
        );
        oldest = range.aggregations?.oldest.value_as_string ?? null;
        newest = range.aggregations?.newest.value_as_string ?? null;
      }
      const points = all.reduce((n, m) => n + m.docs, 0);
      const bytes = all.reduce((n, m) => n + m.bytes, 0);
      return {
        read_alias: names.read,
        template_installed: installed,
        retention_days: retentionDays,
        months: all.map((m) => ({ index: m.index, points: m.docs, store_bytes: m.bytes, thinned: m.thinned })),
        points,
        store_bytes: bytes,
        bytes_per_point: points > 0 ? Math.round((bytes / points) * 10) / 10 : null,
        oldest,
        newest,
      };
    },

    /**
     * Drops every month whose last instant is older than `retentionDays`, and thins each month
     * older than 30 days once (the last point of each record and UTC day stays).
     */
    async prune(now: Date, retentionDays: number): Promise<PruneOutcome> {
      const outcome: PruneOutcome = { dropped: [], thinned: [], pointsDeleted: 0 };
      for (const month of await months()) {
        const end = monthEnd(names, month.index)!.getTime();
        if (end <= now.getTime() - retentionDays * DAY_MS) {
          await adminCall(() => client.indices.delete({ index: month.index }));
          outcome.dropped.push(month.index);
        } else if (!month.thinned && end <= now.getTime() - THIN_AFTER_DAYS * DAY_MS) {
          outcome.pointsDeleted += await thin(month.index);
          outcome.thinned.push(month.index);
        }
      }
      return outcome;
    },
  };
}

/** The operator side of the metric history. */
export type HistoryAdmin = ReturnType<typeof createHistoryAdmin>;
