import type { CountEngine, PostCountSeries } from '../../engine/counts.ts';
import { ValidationFailedError } from '../../internal/errors.ts';
import {
  bucketStarts,
  bucketStartText,
  COUNT_LIMITS,
  countWindow,
  describeWindow,
  type CountWindow,
} from '../../query/count-window.ts';
import type { BreakdownSpec, CountsRequest } from '../../query/counts-request.ts';
import type { PostSearch } from '../../query/search-codec.ts';
import { postRankingOf, postSearchKind, type RankingPolicy } from './ranking.ts';
import type { References } from './references.ts';

/** One bucket as the API answers it. */
export interface CountsBucketView {
  start: string;
  count: number;
  breakdown?: Array<{ value: string; count: number }>;
  other?: number;
}

/** The answer of post counts, without its request id. */
export interface CountsView {
  interval: CountsRequest['interval'];
  time_zone: string;
  total: number;
  buckets: CountsBucketView[];
}

/** Post counts: how many posts a post search returns, over time. */
export interface PostCountsService {
  /** A counts request: its window from the filters' `posted_at` bounds (else the last 30 days), rendered for the API. */
  counts(request: CountsRequest): Promise<CountsView>;
  /**
   * The posts of `search` (exactly what it returns across its pages) posted in `window`, by
   * bucket: what a rule on a search's volume counts. Throws ValidationFailedError when the window
   * holds more than 1,000 buckets.
   */
  countPosts(
    search: PostSearch,
    window: CountWindow,
    breakdown?: Pick<BreakdownSpec, 'field' | 'size'> | null,
  ): Promise<PostCountSeries>;
}

/**
 * Post counts. They rank like a first page of the matching search, since the ranking decides the
 * result set (a hybrid query's semantic window; see CountEngine.postCounts).
 */
export function createPostCountsService(deps: {
  engine: CountEngine;
  ranking?: RankingPolicy;
  references: References;
  /** Snapshots opened for counts are shared with first pages, so they live as long as a cursor's. */
  keepAliveSeconds: number;
  now?: () => number;
}): PostCountsService {
  const now = deps.now ?? Date.now;

  async function countPosts(
    search: PostSearch,
    window: CountWindow,
    breakdown?: Pick<BreakdownSpec, 'field' | 'size'> | null,
  ): Promise<PostCountSeries> {
    const starts = bucketStarts(window);
    if (starts.length > COUNT_LIMITS.buckets) {
      throw new ValidationFailedError(
        `/interval: the window ${describeWindow(window)} holds more than ${COUNT_LIMITS.buckets} ${window.interval} buckets; choose a longer interval or a narrower /post/filters/posted_at range`,
      );
    }
    const ranking = await postRankingOf(await postSearchKind(search, deps));
    return deps.engine.postCounts(search, window, {
      ranking,
      keepAliveSeconds: deps.keepAliveSeconds,
      breakdown: breakdown ?? null,
      starts,
    });
  }

  return {
    countPosts,
    async counts({ search, interval, timeZone, breakdown }) {
      const window = countWindow(search.filter, { interval, timeZone, now: now() });
      const series = await countPosts(search, window, breakdown);
      return {
        interval,
        time_zone: timeZone,
        total: series.total,
        buckets: series.buckets.map((b) => ({
          start: bucketStartText(b.start, timeZone),
          count: b.count,
          ...(b.breakdown && { breakdown: b.breakdown }),
          ...(b.other !== undefined && { other: b.other }),
        })),
      };
    },
  };
}
