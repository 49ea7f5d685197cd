import type { PostWrite, PostWriteRecorder } from '../../domain/records.ts';
import type { AlertStore, PendingChange } from './alert-store.ts';

/** Where writers (intake, embeddings) leave the posts saved searches must look at again. */
export type PendingChanges = PostWriteRecorder;

/**
 * Creates the recorder. Each post keeps the version it had before its first write since the last
 * pass (the pass asks whether that version matched: only a post that comes to match is an event).
 * While no saved search exists, nothing is recorded: a job's batch pays a count (ZCARD) before
 * its write and one after (with the intent's check), not cached, so that a search created a
 * moment ago sees the very next write.
 *
 * A job's changes are first recorded as its intent (before the engine write), then moved into
 * pending (after it). Recording only after the write lost them when that step failed (Redis timing
 * out under load, the worker killed): the retried job's merge then found nothing left to write,
 * so nothing to record (bench/alerts.md, 2026-11-27: 2,852 events of one run).
 */
export function createPendingChanges(deps: {
  store: Pick<AlertStore, 'recordPending' | 'searchCount' | 'recordIntent' | 'confirmIntent'>;
  requestPass: () => Promise<void>;
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
      // The intent holds every change the job planned (a retry's included); without one (no saved
      // search when the job wrote, or a writer without a job) the writes themselves are recorded.
      if (job !== undefined && (await deps.store.confirmIntent(job))) return deps.requestPass();
      const changes = changesOf(writes);
      if (changes.size === 0 || (await deps.store.searchCount()) === 0) return;
      await deps.store.recordPending(changes);
      await deps.requestPass();
    },
  };
}
