import { DateTime } from 'luxon';
import { COUNT_INTERVALS } from '../contract/search-extras.ts';
import type { FilterNode } from './ast.ts';

/**
 * The time side of post counts (docs/api-decisions.md, "Post counts"): which IANA time zones are
 * accepted and how they are spelled, the window a counts request covers, its buckets as the
 * calendar of the zone cuts them (days of 23 or 25 hours across a DST change, weeks from Monday,
 * months), and how a bucket's start is written. Luxon does the zone arithmetic (the platform's
 * ICU time-zone data); Elasticsearch cuts the same buckets with its own (Java's), and the engine
 * adapter checks that both agree.
 */

export { COUNT_INTERVALS };
/** The interval of a counts request. */
export type CountInterval = (typeof COUNT_INTERVALS)[number];

/** Bounds of a counts request. */
export const COUNT_LIMITS = Object.freeze({ buckets: 1000, defaultDays: 30 });

/**
 * An IANA time zone name as the platform's time-zone data spells it (`europe/paris` →
 * `Europe/Paris`, `US/Eastern` → `America/New_York`), or null when it names no zone. Fixed
 * offsets (`+02:00`) and abbreviations the data does not know are not zone names.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name) || name.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A window of counts: `[from, to)` in epoch milliseconds, cut into buckets of `interval` in `timeZone`. */
export interface CountWindow {
  from: number;
  to: number;
  interval: CountInterval;
  /** A canonical zone name ({@link canonicalTimeZone}). */
  timeZone: string;
}

const DAY_MS = 86_400_000;

/** The `posted_at` bounds a post filter imposes on every result: its top-level ANDed ranges. */
export function postedAtBounds(filter: FilterNode): { from: number | null; to: number | null } {
  let from: number | null = null;
  let to: number | null = null;
  const visit = (node: FilterNode) => {
    if (node.kind === 'and') node.children.forEach(visit);
    if (node.kind !== 'range' || node.field !== 'post.posted_at') return;
    const ms = (v: string | number | undefined) => (v === undefined ? null : typeof v === 'number' ? v : Date.parse(v));
    // `gt` a time still includes the bucket of that time; `lte` ends a millisecond after it.
    for (const lower of [ms(node.gte), ms(node.gt)]) if (lower !== null) from = Math.max(from ?? lower, lower);
    const lt = ms(node.lt);
    const lte = ms(node.lte);
    for (const upper of [lt, lte === null ? null : lte + 1]) if (upper !== null) to = Math.min(to ?? upper, upper);
  };
  visit(filter);
  return { from, to };
}

/**
 * The window a counts request covers: the `posted_at` bounds of its filters; without an upper
 * bound it ends now, without a lower one it starts 30 days before its end.
 */
export function countWindow(
  filter: FilterNode,
  options: { interval: CountInterval; timeZone: string; now: number },
): CountWindow {
  const bounds = postedAtBounds(filter);
  const to = bounds.to ?? options.now;
  const from = bounds.from ?? to - COUNT_LIMITS.defaultDays * DAY_MS;
  return { from, to: Math.max(from, to), interval: options.interval, timeZone: options.timeZone };
}

function startOf(ms: number, window: Pick<CountWindow, 'interval' | 'timeZone'>): DateTime {
  // Luxon's weeks are ISO weeks: they start on Monday, as Elasticsearch's calendar weeks do.
  return DateTime.fromMillis(ms, { zone: window.timeZone }).startOf(window.interval);
}

/**
 * The start of every bucket of the window (epoch milliseconds), the one holding `from` first and
 * the one holding the window's last millisecond last; an empty window has the bucket of `from`.
 * Stops after `limit` + 1 buckets: the caller refuses a window past its limit.
 */
export function bucketStarts(window: CountWindow, limit: number = COUNT_LIMITS.buckets): number[] {
  const out: number[] = [];
  const last = Math.max(window.from, window.to - 1);
  for (let start = startOf(window.from, window); start.toMillis() <= last && out.length <= limit;) {
    out.push(start.toMillis());
    start = start.plus({ [window.interval]: 1 });
  }
  return out;
}

/** The start of the bucket holding `ms` (epoch milliseconds). */
export function bucketStartOf(ms: number, window: Pick<CountWindow, 'interval' | 'timeZone'>): number {
  return startOf(ms, window).toMillis();
}

/** The start of the bucket `n` buckets before the one starting at `start` (calendar arithmetic: DST days stay days). */
export function bucketStartBefore(
  start: number,
  window: Pick<CountWindow, 'interval' | 'timeZone'>,
  n: number,
): number {
  return startOf(start, window)
    .minus({ [window.interval]: n })
    .toMillis();
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucketStart(start: number, window: Pick<CountWindow, 'interval' | 'timeZone'>): number {
  return startOf(start, window)
    .plus({ [window.interval]: 1 })
    .toMillis();
}

/** A bucket's start as ISO 8601 with the zone's offset at that instant: `2026-03-29T00:00:00+01:00`. */
export function bucketStartText(ms: number, timeZone: string): string {
  return DateTime.fromMillis(ms, { zone: timeZone }).toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
}

/** A window's first and last bucket in words, for a 422 detail. */
export function describeWindow(window: CountWindow): string {
  const at = (ms: number) => DateTime.fromMillis(ms, { zone: window.timeZone }).toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
  return `${at(window.from)} to ${at(window.to)}`;
}
