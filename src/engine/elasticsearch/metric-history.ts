import type { Client, estypes } from '@elastic/elasticsearch';
import { createHash } from 'node:crypto';
import { COUNTERS, type Counter, type MetricPoint } from '../../domain/history.ts';
import type { FollowersPoint } from '../../domain/derived.ts';
import type { EntityKind } from '../../domain/records.ts';
import { COMPLETE_RESULTS, engineCall, indicesNotInstalled, refreshAll } from './errors.ts';

/**
 * Metric history in Elasticsearch: one index per calendar month of `at` (UTC), named
 * `<prefix>-metrics-YYYY.MM`, all behind the read alias `<prefix>-metrics`. Months are created on
 * their first point from the `<prefix>-metrics` index template (which carries the alias), so
 * retention drops whole indices instead of deleting documents, and a rebuild of the posts or
 * accounts index never touches them. A point's document ID is a hash of (record ID, `at`): the
 * same observation sent twice is one point.
 */

/** Names of the metric history of one INDEX_PREFIX. */
export interface MetricHistoryNames {
  /** The read alias over every month. */
  read: string;
  /** The index template (and its name). */
  template: string;
  /** Pattern of the monthly indices. */
  pattern: string;
  /** Prefix of every monthly index: `<prefix>-metrics-`. */
  monthPrefix: string;
}

export function metricHistoryNames(prefix: string): MetricHistoryNames {
  return {
    read: `${prefix}-metrics`,
    template: `${prefix}-metrics`,
    pattern: `${prefix}-metrics-*`,
    monthPrefix: `${prefix}-metrics-`,
  };
}

/** The monthly index that holds a point observed at `at`. */
export function monthIndex(names: MetricHistoryNames, at: string): string {
  return `${names.monthPrefix}${at.slice(0, 4)}.${at.slice(5, 7)}`;
}

/** The first instant after the month of a monthly index (`…-metrics-2026.11` → 2026-12-01), or null. */
export function monthEnd(names: MetricHistoryNames, index: string): Date | null {
  const match = /^(\d{4})\.(\d{2})$/.exec(index.slice(names.monthPrefix.length));
  if (!match || !index.startsWith(names.monthPrefix)) return null;
  return new Date(Date.UTC(Number(match[1]), Number(match[2]), 1));
}

/** A point's document ID: 22 base64url characters of SHA-256 over (record ID, `at`). */
export function pointId(point: Pick<MetricPoint, 'id' | 'at'>): string {
  return createHash('sha256').update(`${point.id}@${point.at}`).digest('base64url').slice(0, 22);
}

/** The bulk action and document of a point (`create`: an existing point is left as it is). */
export function pointWrite(names: MetricHistoryNames, point: MetricPoint): { action: object; doc: string } {
  return {
    // A month's index is created by its first point, from the template; require_alias is the
    // records' guard (a write before `indices apply` must fail) and does not apply to points.
    action: { create: { _index: monthIndex(names, point.at), _id: pointId(point), require_alias: false } },
    doc: JSON.stringify({ id: point.id, at: point.at, ...point.counters }),
  };
}

const PAGE = 5000;

/** Reads, writes and maintenance of the metric history. */
export function createMetricHistory(deps: { client: Client; names: MetricHistoryNames }) {
  const { client, names } = deps;
  let installed: Promise<void> | null = null;

  /** Every point matching `filter`, sorted by record then time, with the given counters. */
  async function* scan(filter: estypes.QueryDslQueryContainer[], counters: readonly Counter[]) {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await engineCall(() =>
        client.search({
          ...COMPLETE_RESULTS,
          index: names.read,
          ignore_unavailable: true,
          allow_no_indices: true,
          query: { bool: { filter } },
          _source: false,
          docvalue_fields: [{ field: 'id' }, { field: 'at', format: 'strict_date_time' }, ...counters],
          sort: [{ id: 'asc' }, { at: 'asc' }],
          size: PAGE,
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = response.hits.hits;
      for (const hit of hits) yield { _id: hit._id!, fields: hit.fields as Record<string, unknown[]> };
      if (hits.length < PAGE) return;
      after = hits.at(-1)!.sort;
    }
  }

  function toPoint(entity: EntityKind, fields: Record<string, unknown[]>): MetricPoint {
    const counters: MetricPoint['counters'] = {};
    for (const counter of COUNTERS[entity]) {
      const value = fields[counter]?.[0];
      if (typeof value === 'number') counters[counter] = value;
    }
    return { entity, id: String(fields.id?.[0]), at: String(fields.at?.[0]), counters };
  }

  return {
    names,

    /**
     * Resolves once the history's template is installed (checked once per process): without it a
     * month's first point would create an index with guessed mappings.
     */
    ensureInstalled(): Promise<void> {
      installed ??= engineCall(() => client.indices.existsIndexTemplate({ name: names.template })).then((exists) => {
        if (!exists) throw indicesNotInstalled();
      });
      installed.catch(() => (installed = null));
      return installed;
    },

    /** The points of one record in `[from, to]`, in time order; at most `limit` (null: more). */
    async points(
      entity: EntityKind,
      id: string,
      from: string,
      to: string,
      limit: number,
    ): Promise<MetricPoint[] | null> {
      const out: MetricPoint[] = [];
      const filter = [{ term: { id } }, { range: { at: { gte: from, lte: to } } }];
      for await (const hit of scan(filter, COUNTERS[entity])) {
        if (out.length === limit) return null;
        out.push(toPoint(entity, hit.fields));
      }
      return out;
    },

    /** Observed `followers_count` of each account in `[from, to]`. Near real time. */
    async followers(accountIds: readonly string[], from: string, to: string): Promise<Map<string, FollowersPoint[]>> {
      const out = new Map<string, FollowersPoint[]>(accountIds.map((id) => [id, []]));
      if (accountIds.length === 0 || from > to) return out;
      const filter = [{ terms: { id: [...accountIds] } }, { range: { at: { gte: from, lte: to } } }];
      for await (const hit of scan(filter, ['followers_count'])) {
        const point = toPoint('account', hit.fields);
        const followers = point.counters.followers_count;
        if (followers !== undefined) out.get(point.id)?.push({ at: point.at, followers });
      }
      return out;
    },

    /** Makes every written point visible to the reads above. */
    refresh(): Promise<void> {
      return refreshAll(client, names.read, { allowMissing: true });
    },
  };
}

/** The metric history of one INDEX_PREFIX. */
export type MetricHistory = ReturnType<typeof createMetricHistory>;
