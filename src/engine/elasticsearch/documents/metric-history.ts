import type { Client, estypes } from '@elastic/elasticsearch';
import { COUNTERS, type Counter, type MetricPoint } from '../../../domain/history.ts';
import type { FollowersPoint } from '../../../domain/derived.ts';
import type { EntityKind } from '../../../domain/records.ts';
import { COMPLETE_RESULTS, engineCall, indicesNotInstalled, refreshAll } from '../errors.ts';
import { firstNumber, firstString } from '../response-values.ts';

/**
 * Metric history in Elasticsearch: one time series index per calendar month of the point's time
 * (UTC), named `<prefix>-metrics-YYYY.MM`, all behind the read alias `<prefix>-metrics`. Months are
 * created on their first point from the `<prefix>-metrics` index template (which carries the
 * alias), so retention drops whole indices instead of deleting documents, and a rebuild of the
 * posts or accounts index never touches them. The record ID is the series' dimension: the engine
 * derives a point's document ID from (record ID, `@timestamp`), so the same observation sent twice
 * is one point (the second `create` is a conflict).
 *
 * A time series index: a fifth of a plain index's disk a point, for the same engine CPU
 * (bench/intake.md, "Metric history: cost and disk per point").
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

/** The bulk action and document of a point (`create`: an existing point is left as it is). */
export function pointWrite(names: MetricHistoryNames, point: MetricPoint): { action: object; doc: string } {
  return {
    // A month's index is created by its first point, from the template; require_alias is the
    // records' guard (a write before `indices apply` must fail) and does not apply to points.
    // No `_id`: the engine derives it from the series and the time.
    action: { create: { _index: monthIndex(names, point.at), require_alias: false } },
    doc: JSON.stringify({ id: point.id, '@timestamp': point.at, ...point.counters }),
  };
}

const PAGE = 5000;

/** The monthly indices a time range spans. */
export function monthsBetween(names: MetricHistoryNames, from: string, to: string): string[] {
  const out: string[] = [];
  const end = new Date(to);
  for (let d = new Date(Date.UTC(Number(from.slice(0, 4)), Number(from.slice(5, 7)) - 1, 1)); d <= end;) {
    out.push(monthIndex(names, d.toISOString()));
    d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  }
  return out;
}

/**
 * Most months a request names one by one; more are asked of the read alias. Each name is ~30
 * bytes in the request line, and the engine refuses a line over 4,096 bytes
 * (too_long_http_line_exception: observations spread over decades, sent by a fuzzer, named ~60
 * months). Retention keeps ~13 months, so a real range is always named month by month.
 */
const MAX_NAMED_MONTHS = 24;

/**
 * The indices to ask for `months`: the months themselves, or the read alias when they are too many
 * to name in a request line (a search or refresh through the alias wakes every month).
 */
export function monthTargets(names: MetricHistoryNames, months: readonly string[]): string | string[] {
  return months.length <= MAX_NAMED_MONTHS ? [...months] : names.read;
}

/** The indices to ask for points in `[from, to]` (see {@link monthTargets}). */
export function rangeTargets(names: MetricHistoryNames, from: string, to: string): string | string[] {
  const years = Number(to.slice(0, 4)) - Number(from.slice(0, 4));
  // Counting first: a range over centuries must not build a list of thousands of names.
  return years * 12 > MAX_NAMED_MONTHS ? names.read : monthTargets(names, monthsBetween(names, from, to));
}

/** Reads, writes and maintenance of the metric history. */
export function createMetricHistory(deps: { client: Client; names: MetricHistoryNames }) {
  const { client, names } = deps;
  let installed: Promise<void> | null = null;

  /**
   * Every point of the months `[from, to]` spans matching `filter`, sorted by record then time.
   * Only those months are searched: a search wakes every month it touches, and a month woken from
   * idle refreshes before it answers.
   */
  async function* scan(
    from: string,
    to: string,
    filter: estypes.QueryDslQueryContainer[],
    counters: readonly Counter[],
  ) {
    const months = rangeTargets(names, from, to);
    // No month at all must not become "every index": an empty list is the whole cluster.
    if (months.length === 0) return;
    const range = { range: { '@timestamp': { gte: from, lte: to } } };
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await engineCall(() =>
        client.search({
          ...COMPLETE_RESULTS,
          index: months,
          ignore_unavailable: true,
          allow_no_indices: true,
          query: { bool: { filter: [...filter, range] } },
          _source: false,
          docvalue_fields: [{ field: 'id' }, { field: '@timestamp', format: 'strict_date_time' }, ...counters],
          sort: [{ id: 'asc' }, { '@timestamp': 'asc' }],
          size: PAGE,
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = response.hits.hits;
      yield* hits;
      if (hits.length < PAGE) return;
      after = hits.at(-1)!.sort;
    }
  }

  function toPoint(entity: EntityKind, hit: estypes.SearchHit): MetricPoint {
    const counters: MetricPoint['counters'] = {};
    for (const counter of COUNTERS[entity]) {
      const value = firstNumber(hit, counter);
      if (value !== undefined) counters[counter] = value;
    }
    return { entity, id: String(firstString(hit, 'id')), at: String(firstString(hit, '@timestamp')), counters };
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
      for await (const hit of scan(from, to, [{ term: { id } }], COUNTERS[entity])) {
        if (out.length === limit) return null;
        out.push(toPoint(entity, hit));
      }
      return out;
    },

    /**
     * Observed `followers_count` of each account in `[from, to]`. With `fresh`, every point written
     * before the call is included: the months the range spans are refreshed first (only those, and
     * only when asked: a refresh of every month on each follow-up run cost more engine CPU than
     * writing the points; bench/intake.md, "Metric history: cost and disk per point").
     */
    async followers(
      accountIds: readonly string[],
      from: string,
      to: string,
      options: { fresh?: boolean } = {},
    ): Promise<Map<string, FollowersPoint[]>> {
      const out = new Map<string, FollowersPoint[]>(accountIds.map((id) => [id, []]));
      if (accountIds.length === 0 || from > to) return out;
      if (options.fresh) await refreshAll(client, rangeTargets(names, from, to), { allowMissing: true });
      for await (const hit of scan(from, to, [{ terms: { id: [...accountIds] } }], ['followers_count'])) {
        const point = toPoint('account', hit);
        const followers = point.counters.followers_count;
        if (followers !== undefined) out.get(point.id)?.push({ at: point.at, followers });
      }
      return out;
    },
  };
}

/** The metric history of one INDEX_PREFIX. */
export type MetricHistory = ReturnType<typeof createMetricHistory>;
