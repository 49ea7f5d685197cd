import type { PostRecord } from '../../../domain/records.ts';
import { withoutMemoizing } from '../../../text/languages.ts';
import { projectPost } from './projection.ts';

/** How long after saved searches last asked for a written post's projection writes keep theirs. */
export const KEEP_WHILE_ASKED_MS = 60_000;

/** The projections of posts as written, for matching at the write (alert-matching.ts). */
export interface WrittenProjections {
  /** Projects `record` for its write; keeps the projection while matching asks for them. */
  project(this: void, record: PostRecord): Record<string, unknown>;
  /** `record`'s projection: the one its write made when kept, else made now (without memoizing its texts). */
  of(this: void, record: PostRecord): Record<string, unknown>;
}

/**
 * Creates the store of written posts' projections. A job that writes posts then matches them
 * against the saved searches (services/alerts/matching.ts) with the same record objects in hand: the
 * projection its write made is the one matching reads, kept in a weak map by record (gone with the
 * job's records), and only while saved searches are matched (asked for within
 * {@link KEEP_WHILE_ASKED_MS}): without them, no write keeps anything.
 *
 * Why (bench/alerts.md): matching projected every written post a second time, 0.9 of the ~15 s of
 * process time 1,000 saved searches added to a round of 20,000 posts in a CPU profile.
 */
export function createWrittenProjections(now: () => number = () => performance.now()): WrittenProjections {
  const kept = new WeakMap<PostRecord, Record<string, unknown>>();
  let askedAt = -Infinity;
  return {
    project(record) {
      const doc = projectPost(record);
      if (now() - askedAt < KEEP_WHILE_ASKED_MS) kept.set(record, doc);
      return doc;
    },
    of(record) {
      askedAt = now();
      // Read, not stored: a version read back (an earlier one, or by the recovery pass) was projected when written.
      return kept.get(record) ?? withoutMemoizing(() => projectPost(record));
    },
  };
}
