import type { Logger } from 'pino';
import type { PostWrite, PostWriteRecorder } from '../../domain/records.ts';
import type { AlertStore } from './alert-store.ts';
import type { PendingChange } from './pending-entries.ts';
import type { WriteMatching } from './write-matching.ts';

/** Where writers (intake, embeddings) leave the posts saved searches must look at again. */
export type PendingChanges = PostWriteRecorder;

/**
 * Creates the recorder. Each post keeps the version it had before its first write since the last
 * pass (the pass asks whether that version matched: only a post that comes to match is an event).
 * While no saved search exists, nothing is recorded: a job's batch pays a count (ZCARD) before
 * its write, and after it a read of the saved searches' version with one script call (without
 * `matchWrites`: a second count, with the intent's check), not cached, so that a search created
 * a moment ago sees the very next write.
 *
 * With `matchWrites`, the writes are matched at once, in the writer's job, and their matches
 * recorded for the pass in place of the posts: the pass then neither reads nor matches them.
 *
 * A job's changes are first recorded as its intent (before the engine write), then replaced by
 * their matches, or moved into pending as they are (after it). Recording only after the write
 * lost them when that step failed (Redis timing out under load, the worker killed): the retried
 * job's merge then found nothing left to write, so nothing to record (bench/alerts.md,
 * 2026-11-27: 2,852 events of one run). The retry moves what the failed attempt left in its
 * intent into pending as plain changes, which the pass matches itself.
 */
export function createPendingChanges(deps: {
  store: Pick<AlertStore, 'recordPending' | 'searchCount' | 'recordIntent' | 'confirmIntent'> &
    Partial<Pick<AlertStore, 'recordMatched'>>;
  requestPass: () => Promise<void>;
  /**
   * Matches the writes at once (write-matching.ts): the pass then only records their events. When
   * absent, or when it fails (the engine unreachable), the writes are left to the pass as they are.
   */
  matchWrites?: WriteMatching | undefined;
  logger?: Pick<Logger, 'warn'> | undefined;
  now?: () => number;
}): PendingChanges {
  const now = deps.now ?? Date.now;

  function changesOf(writes: Iterable<PostWrite>): Map<string, PendingChange> {
    const changes = new Map<string, PendingChange>();
    const at = new Date(now()).toISOString();
    for (const { before, after } of writes) {
      if (changes.has(after.id)) continue;
      changes.set(after.id, { at, before: before ? JSON.stringify(before) : null });
    }
    return changes;
  }

  return {
    async intend(job, writes) {
      const changes = changesOf(writes);
      if (changes.size === 0 || (await deps.store.searchCount()) === 0) return;
      await deps.store.recordIntent(job, changes);
    },

    async record(writes, job) {
      const list = [...writes];
      if (deps.matchWrites && deps.store.recordMatched) {
        const matched = await deps.matchWrites(list).catch((error: unknown) => {
          deps.logger?.warn({ err: error }, 'matching at the write failed: the posts are left to the pass');
          return null;
        });
        if (matched) {
          const written = list.map((w) => w.after.id);
          if (await deps.store.recordMatched(matched, written, job)) await deps.requestPass();
          return;
        }
      }
      return recordPlain(list, job);
    },
  };

  /** Leaves the writes (and job `job`'s intent) to the pass, which reads and matches them. */
  async function recordPlain(writes: readonly PostWrite[], job: string | undefined): Promise<void> {
    // The intent holds every change the job planned (a retry's included); without one (no saved
    // search when the job wrote, or a writer without a job) the writes themselves are recorded.
    if (job !== undefined && (await deps.store.confirmIntent(job))) return deps.requestPass();
    const changes = changesOf(writes);
    if (changes.size === 0 || (await deps.store.searchCount()) === 0) return;
    await deps.store.recordPending(changes);
    await deps.requestPass();
  }
}
