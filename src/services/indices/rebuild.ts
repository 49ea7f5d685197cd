import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { INDEX_NAMES, kindOfIndex, type IndexAdmin, type IndexName } from '../../engine/index-admin.ts';
import type { Producer, QueueName } from '../../queues/registry.ts';
import type { RecordEmbeddings } from '../intake/record-embeddings.ts';
import { acquireRebuildLock, rebuildRunning } from './rebuild-lock.ts';

/** What {@link IndexRebuilds.rebuild} did. */
export type RebuildOutcome =
  | { status: 'rebuilt'; from: string[]; to: string; copied: number; removedOrphans: string[] }
  | { status: 'busy'; heldBy: string };

/** The queues a rebuild pauses: what they need of BullMQ. */
type PausableQueue = Pick<Producer<QueueName>, 'name' | 'pause' | 'resume' | 'isPaused' | 'getActiveCount'>;

/** `indices rebuild` and the worker's clean-up after a killed one. */
export interface IndexRebuilds {
  /**
   * Copies an index into a fresh one built from the current template and swaps the aliases, with
   * reads served throughout.
   *
   * - One rebuild per index at a time (a Redis lock); a second answers `busy`.
   * - What an interrupted rebuild left (its partial copy) is removed first.
   * - Intake and embedding jobs pause while the copy runs (they keep queueing in Redis; none is
   *   lost) and resume afterwards, whatever happens.
   * - With a model, records whose vector is missing or from another model are embedded during
   *   the copy: how existing data gets vectors, or moves to a new model.
   * - `signal` cancels between pages: the partial copy is deleted, the live index is untouched.
   */
  rebuild(
    name: IndexName,
    options?: { keepOld?: boolean; signal?: AbortSignal; onProgress?: (copied: number) => void },
  ): Promise<RebuildOutcome>;
  /**
   * Resumes queues that a rebuild paused and never resumed (it was killed outright): only a
   * rebuild pauses them, so a paused queue with no rebuild running is abandoned. The worker calls
   * this at start. Returns the names of the queues it resumed.
   */
  resumeAbandonedPause(): Promise<string[]>;
}

/** Creates the rebuild service. `records` is null without an embedding model. */
export function createIndexRebuilds(deps: {
  admin: IndexAdmin;
  redis: Redis;
  prefix: string;
  /** Every queue whose jobs write to the indices. */
  queues: PausableQueue[];
  records: () => Promise<RecordEmbeddings | null>;
  logger: Pick<Logger, 'warn'>;
}): IndexRebuilds {
  const { admin, queues, logger } = deps;
  return {
    async rebuild(name, options = {}) {
      const acquired = await acquireRebuildLock(deps.redis, deps.prefix, name);
      if ('heldBy' in acquired) return { status: 'busy', heldBy: acquired.heldBy };
      try {
        const removedOrphans = await admin.removeOrphans(name);
        if (removedOrphans.length > 0)
          logger.warn(`removed ${removedOrphans.join(', ')}, left by an interrupted rebuild`);
        const records = await deps.records();
        if (records) logger.warn(`records without a current ${records.modelId} vector are embedded during the copy`);
        await Promise.all(queues.map((q) => q.pause()));
        try {
          while ((await Promise.all(queues.map((q) => q.getActiveCount()))).some((n) => n > 0)) await sleep(200);
          const result = await admin.rebuild(name, {
            keepOld: options.keepOld === true,
            ...(options.signal ? { signal: options.signal } : {}),
            ...(options.onProgress ? { onProgress: options.onProgress } : {}),
            ...(records ? { transform: (page) => records.withVectors(kindOfIndex(name), page) } : {}),
          });
          return { status: 'rebuilt', ...result, removedOrphans };
        } finally {
          await Promise.all(queues.map((q) => q.resume()));
        }
      } finally {
        await acquired.lock.release();
      }
    },

    async resumeAbandonedPause() {
      const running = await Promise.all(INDEX_NAMES.map((name) => rebuildRunning(deps.redis, deps.prefix, name)));
      if (running.some(Boolean)) return [];
      const resumed: string[] = [];
      for (const queue of queues) {
        if (!(await queue.isPaused())) continue;
        await queue.resume();
        resumed.push(queue.name);
      }
      if (resumed.length > 0)
        logger.warn(`resumed ${resumed.join(' and ')}, left paused by an interrupted index rebuild`);
      return resumed;
    },
  };
}
