import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import {
  bucketStartBefore,
  bucketStartOf,
  bucketStartText,
  nextBucketStart,
  type CountWindow,
} from '../../query/count-window.ts';
import type { VolumeRule } from '../../query/alert-request.ts';
import type { PostSearch } from '../../query/search-codec.ts';
import { exceededTail, spikedTail, volumeEventHead, volumeEventIdOf } from './events.ts';
import type { VolumeCount, VolumeStore } from './volume-store.ts';

/** Baseline queries one worker runs at once (each one date histogram of the engine). */
const BASELINES_AT_ONCE = 4;
/** How long a baseline that could not be computed waits before it is tried again. */
const BASELINE_RETRY_MS = 60_000;

/** A saved search's news as its volume rule counts it: the posts, each by its posted_at. */
export interface VolumeNews {
  search: { id: string; owner: string; webhook_endpoint_id: string | null; volume: VolumeRule };
  /** Its post search: what the baseline counts. */
  query: PostSearch;
  posts: ReadonlyArray<{ id: string; postedAt: number }>;
}

/** The posts of `search` in each bucket of `window`, oldest first: the counts service's countPosts. */
export type CountBuckets = (search: PostSearch, window: CountWindow) => Promise<readonly number[]>;

/** The window of `ms` under `rule`: its start and end (epoch ms). */
export function volumeWindowOf(ms: number, rule: Pick<VolumeRule, 'interval' | 'time_zone'>) {
  const calendar = { interval: rule.interval, timeZone: rule.time_zone };
  const start = bucketStartOf(ms, calendar);
  return { start, end: nextBucketStart(start, calendar) };
}

/** The windows whose keys may exist at `now` (the current one and the one before): what deleting a search deletes. */
export function liveWindowStarts(rule: Pick<VolumeRule, 'interval' | 'time_zone'>, now: number): number[] {
  const { start } = volumeWindowOf(now, rule);
  return [bucketStartBefore(start, { interval: rule.interval, timeZone: rule.time_zone }, 1), start];
}

/** The median of counts (the mean of the middle two for an even number). */
export function median(counts: readonly number[]): number {
  const sorted = [...counts].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Creates the volume side of matching: the news of saved searches with a volume rule counted into
 * windows of their posts' posted_at (calendar hours or days of the rule's zone, as post counts cut
 * them), each post once per (search, window) however often it is news, and the rule checked as it
 * is counted (volume-store.ts, one script call per job). Only the current window gives events: a
 * post observed late counts in its past window (while its keys live: one interval after it ends)
 * and never alerts; one older still is not counted at all.
 *
 * A spike's baseline is the median of the rule's windows before the current one, counted by the
 * engine over the corpus (`countPosts`: right for a search created today, since the corpus has
 * its history) once per (search, window), when the window first reaches `min_count` (a window that
 * cannot spike costs no query), and kept in the window's hash for every worker. Queries are
 * bounded per worker ({@link BASELINES_AT_ONCE}); a failed one is logged once per window and tried
 * again a minute later, with the next post counted.
 */
export function createVolumeWatch(deps: {
  store: Pick<VolumeStore, 'count'>;
  countBuckets: CountBuckets;
  logger?: Pick<Logger, 'warn'> | undefined;
}) {
  const baselines = new LRUCache<string, Promise<{ spikeAt: number; tail: string } | null>>({
    max: 20_000,
    ttl: 2 * 24 * 60 * 60 * 1000,
  });

  function baselineOf(news: VolumeNews, start: number) {
    const name = `${news.search.id}\t${start}`;
    const cached = baselines.get(name);
    if (cached) return cached;
    const { spike, interval, time_zone: timeZone } = news.search.volume;
    const calendar = { interval, timeZone };
    const window = { from: bucketStartBefore(start, calendar, spike!.baseline_intervals), to: start, ...calendar };
    const computed = deps
      .countBuckets(news.query, window)
      .then((counts) => {
        const middle = median(counts);
        return {
          spikeAt: Math.max(spike!.min_count, Math.floor(spike!.factor * middle) + 1),
          tail: spikedTail(spike!.factor, { median: middle, counts }),
        };
      })
      .catch((error: unknown) => {
        deps.logger?.warn(
          { err: error, saved_search: news.search.id },
          'a volume rule’s baseline could not be counted: its spike is checked again in a minute',
        );
        baselines.set(name, Promise.resolve(null), { ttl: BASELINE_RETRY_MS });
        return null;
      });
    baselines.set(name, computed);
    return computed;
  }

  /** Counts `news` into their windows and records the events they cross to; returns events recorded and dropped. */
  return async function watch(news: readonly VolumeNews[], now: number) {
    const at = new Date(now).toISOString();
    const windows: Array<{ news: VolumeNews; count: VolumeCount }> = [];
    for (const item of news) {
      const rule = item.search.volume;
      const calendar = { interval: rule.interval, timeZone: rule.time_zone };
      const current = volumeWindowOf(now, rule);
      const previous = bucketStartBefore(current.start, calendar, 1);
      const byWindow = new Map<number, string[]>();
      for (const post of item.posts) {
        const start = bucketStartOf(post.postedAt, calendar);
        if (start < previous || start > current.start) continue;
        const ids = byWindow.get(start);
        if (ids) ids.push(post.id);
        else byWindow.set(start, [post.id]);
      }
      for (const [start, posts] of byWindow) {
        const end = nextBucketStart(start, calendar);
        const texts = {
          start,
          startText: bucketStartText(start, rule.time_zone),
          endText: bucketStartText(end, rule.time_zone),
        };
        const { above, spike } = rule;
        windows.push({
          news: item,
          count: {
            search: item.search,
            start,
            expireAt: end + (end - start),
            current: start === current.start,
            posts,
            exceeded:
              above === undefined
                ? null
                : {
                    above,
                    id: volumeEventIdOf(item.search.id, 'volume.exceeded', start),
                    head: volumeEventHead(item.search.id, 'volume.exceeded', texts, at),
                    tail: exceededTail(above),
                  },
            spiked:
              spike === undefined
                ? null
                : {
                    minCount: spike.min_count,
                    id: volumeEventIdOf(item.search.id, 'volume.spiked', start),
                    head: volumeEventHead(item.search.id, 'volume.spiked', texts, at),
                  },
            at,
          },
        });
      }
    }
    const result = { events: 0, dropped: 0 };
    if (windows.length === 0) return result;
    const counted = await deps.store.count(
      windows.map((w) => w.count),
      now,
    );
    const add = (c: { recorded: number; dropped: number }) => {
      result.events += c.recorded;
      result.dropped += c.dropped;
    };
    counted.forEach(add);

    // Windows that reached min_count without a baseline: count it, then check again with it.
    const waiting = windows.filter((_, i) => counted[i]!.needsBaseline);
    const again: VolumeCount[] = [];
    for (let i = 0; i < waiting.length; i += BASELINES_AT_ONCE) {
      const batch = waiting.slice(i, i + BASELINES_AT_ONCE);
      const found = await Promise.all(batch.map((w) => baselineOf(w.news, w.count.start)));
      batch.forEach((w, j) => {
        if (found[j]) again.push({ ...w.count, posts: [], baseline: found[j] });
      });
    }
    if (again.length > 0) (await deps.store.count(again, now)).forEach(add);
    return result;
  };
}

/** The volume side of matching (volume.ts). */
export type VolumeWatch = ReturnType<typeof createVolumeWatch>;
