import type { CountWindow } from '../query/count-window.ts';
import type { FieldDef } from '../query/fields.ts';
import type { PostSearch } from '../query/search-codec.ts';
import type { PostRanking } from './search.ts';

/** One bucket of post counts. */
export interface CountBucket {
  /** Its start, epoch milliseconds. */
  start: number;
  count: number;
  /** With a breakdown: the window's top values, each with its count in this bucket (0 included). */
  breakdown?: Array<{ value: string; count: number }>;
  /** With a breakdown: the bucket's posts that carry none of those values. */
  other?: number;
}

/** Post counts over a window: the total and every bucket of the window, in time order. */
export interface PostCountSeries {
  total: number;
  buckets: CountBucket[];
}

/** What post counts need of the engine. */
export interface CountEngine {
  /**
   * The posts a post search with this ranking returns across all its pages (hybrid: lexical
   * matches and the semantic window; semantic: the window; as facets count them), those posted in
   * the window, by bucket of the window's calendar; with a breakdown, the `size` most frequent
   * values of the field over the window, counted in each bucket. On a first page's snapshot.
   */
  postCounts(
    search: PostSearch,
    window: CountWindow,
    options: {
      ranking: PostRanking;
      keepAliveSeconds: number;
      breakdown?: { field: FieldDef; size: number } | null;
      /** Every bucket start of the window ({@link bucketStarts}): the engine's calendar must cut the same. */
      starts: readonly number[];
    },
  ): Promise<PostCountSeries>;
}
