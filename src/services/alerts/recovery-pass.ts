import type { RecordReads } from '../../engine/reads.ts';
import type { MatchResult, MatchWrites } from './matching.ts';
import type { PendingStore } from './pending-store.ts';

/** Posts one pass takes; more wait for the next pass, asked for at once. */
export const POSTS_PER_PASS = 5000;
/** Posts read and matched at once. */
const POSTS_PER_READ = 1000;

/**
 * Creates the recovery pass (the `alerts` queue, one run at a time): it matches the posts written
 * but not matched at their write (the writer's attempt failed between its write and its matching,
 * or matching failed), read as they are now, through the same matching as every writer. The
 * version a write replaced is not known here: every pair the post matches counts as news, and the
 * event store's record of the pairs already recorded keeps each to one event. Its claim is keyed
 * by the run: a re-run takes it again.
 */
export function createRecoveryPass(deps: {
  pending: Pick<PendingStore, 'claim' | 'release'>;
  reads: Pick<RecordReads, 'posts'>;
  matchWrites: MatchWrites;
  requestPass: () => Promise<void>;
}): (run: string) => Promise<MatchResult> {
  return async function pass(run) {
    const result: MatchResult = { posts: 0, searches: 0, events: 0, dropped: 0 };
    const { posts, left } = await deps.pending.claim(run, POSTS_PER_PASS);
    for (let i = 0; i < posts.length; i += POSTS_PER_READ) {
      const records = await deps.reads.posts.get(posts.slice(i, i + POSTS_PER_READ));
      const matched = await deps.matchWrites([...records.values()].map((after) => ({ before: null, after })));
      result.posts += matched.posts;
      result.searches += matched.searches;
      result.events += matched.events;
      result.dropped += matched.dropped;
    }
    await deps.pending.release(run);
    if (left > 0) await deps.requestPass();
    return result;
  };
}
