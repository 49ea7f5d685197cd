import type { Redis } from 'ioredis';
import type { FollowUpWork } from './follow-ups.ts';

/**
 * Follow-up work that batches left for later, kept in Redis until a run has done it.
 *
 * Batches add to two sets (accounts, authors) and ask for a run; a run claims everything at once
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
  const pending = (set: 'accounts' | 'authors') => `${deps.prefix}:follow-ups:${set}:pending`;
  const claimed = (set: 'accounts' | 'authors', runId: string) => `${deps.prefix}:follow-ups:${set}:claimed:${runId}`;
  return {
    async add(work) {
      if (work.accounts.length === 0 && work.authors.length === 0) return;
      const pipeline = deps.redis.multi();
      if (work.accounts.length > 0) pipeline.sadd(pending('accounts'), ...work.accounts);
      if (work.authors.length > 0) pipeline.sadd(pending('authors'), ...work.authors);
      const results = await pipeline.exec();
      const failed = results?.find(([error]) => error);
      if (!results || failed) throw failed?.[0] ?? new Error('follow-up work was not recorded');
      // After the work is in Redis: a run that starts after this point sees it.
      await deps.requestRun();
    },

    async claim(runId) {
      const [accounts, authors] = await Promise.all(
        (['accounts', 'authors'] as const).map(
          (set) => deps.redis.eval(CLAIM, 2, pending(set), claimed(set, runId)) as Promise<string[]>,
        ),
      );
      return { accounts: accounts ?? [], authors: authors ?? [] };
    },

    async settle(runId) {
      await deps.redis.del(claimed('accounts', runId), claimed('authors', runId));
    },
  };
}
