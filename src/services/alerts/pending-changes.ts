import type { PostWriteRecorder } from '../../domain/records.ts';
import type { AlertStore, PendingChange } from './alert-store.ts';

/** Where writers (intake, embeddings) leave the posts saved searches must look at again. */
export type PendingChanges = PostWriteRecorder;

/**
 * Creates the recorder. Each post keeps the version it had before its first write since the last
 * pass (the pass asks whether that version matched: only a post that comes to match is an event).
 * While no saved search exists, nothing is recorded: a batch pays one count (ZCARD), not cached,
 * so that a search created a moment ago sees the very next write.
 */
export function createPendingChanges(deps: {
  store: Pick<AlertStore, 'recordPending' | 'searchCount'>;
  requestPass: () => Promise<void>;
  now?: () => number;
}): PendingChanges {
  const now = deps.now ?? Date.now;
  return {
    async record(writes) {
      const changes = new Map<string, PendingChange>();
      const at = new Date(now()).toISOString();
      for (const { before, after } of writes) {
        if (changes.has(after.id)) continue;
        changes.set(after.id, { at, before: before ? JSON.stringify(before) : null });
      }
      if (changes.size === 0 || (await deps.store.searchCount()) === 0) return;
      await deps.store.recordPending(changes);
      await deps.requestPass();
    },
  };
}
