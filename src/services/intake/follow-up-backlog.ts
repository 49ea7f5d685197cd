import type { Redis } from 'ioredis';
import type { FollowUpWork } from './follow-ups.ts';
import { STRINGS, replyOf } from '../../internal/redis-replies.ts';

/**
 * Follow-up work that batches left for later, kept in Redis until a run has done it.
 *
 * Batches add to three sets (accounts, authors, history) and ask for a run; a run claims everything at once
 * by moving the sets into claimed sets named after its job, does the work, then settles (deletes
 * them). A run that dies or fails before settling keeps its claim: the same job runs again (as
 * stalled, as a retry, or when an operator retries it) and claims it again with whatever was added
 * since. Nothing is lost, and redoing a follow-up is safe (it recomputes from the current state).
 */
export interface FollowUpBacklog {
  /** Records work, then makes sure a run will start after this call (coalescing with a pending one). */
  add(work: FollowUpWork): Promise<void>;
  /** Everything job `runId` has to do: its earlier attempt's unsettled claim plus all work added since. */
  claim(runId: string): Promise<FollowUpWork>;
  /** Forgets job `runId`'s claim: call once its work is done. */
  settle(runId: string): Promise<void>;
}

/** The sets of follow-up work (FollowUpWork's members). */
const WORK_SETS = ['accounts', 'authors', 'history'] as const;
type WorkSet = (typeof WORK_SETS)[number];

/** Moves `from` into `to` (a union) and empties `from`, atomically; returns the members of `to`. */
const CLAIM = `
if redis.call('exists', KEYS[1]) == 1 then
  redis.call('sunionstore', KEYS[2], KEYS[2], KEYS[1])
  redis.call('del', KEYS[1])
end
return redis.call('smembers', KEYS[2])`;

/** Creates the backlog; `requestRun` enqueues a deduplicated, slightly delayed follow-up job. */
export function createFollowUpBacklog(deps: {
  redis: Redis;
  prefix: string;
  requestRun: () => Promise<void>;
}): FollowUpBacklog {
  const pending = (set: WorkSet) => `${deps.prefix}:follow-ups:${set}:pending`;
  const claimed = (set: WorkSet, runId: string) => `${deps.prefix}:follow-ups:${set}:claimed:${runId}`;
  return {
    async add(work) {
      if (work.accounts.length === 0 && work.authors.length === 0) return;
      const pipeline = deps.redis.multi();
      for (const set of WORK_SETS) {
        const ids = work[set] ?? [];
        if (ids.length > 0) pipeline.sadd(pending(set), ...ids);
      }
      const results = await pipeline.exec();
      const failed = results?.find(([error]) => error);
      if (!results || failed) throw failed?.[0] ?? new Error('follow-up work was not recorded');
      // After the work is in Redis: a run that starts after this point sees it.
      await deps.requestRun();
    },

    async claim(runId) {
      const [accounts, authors, history] = await Promise.all(
        WORK_SETS.map(async (set) =>
          replyOf(await deps.redis.eval(CLAIM, 2, pending(set), claimed(set, runId)), STRINGS),
        ),
      );
      return { accounts: accounts ?? [], authors: authors ?? [], history: history ?? [] };
    },

    async settle(runId) {
      await deps.redis.del(...WORK_SETS.map((set) => claimed(set, runId)));
    },
  };
}
