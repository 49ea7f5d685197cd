import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { INDEX_NAMES, type IndexName } from '../../engine/elasticsearch/names.ts';
import { createEmbeddingQueue } from '../../queues/embeddings.ts';
import { createRecordEmbeddings } from '../intake/record-embeddings.ts';
import { acquireRebuildLock, rebuildRunning } from './rebuild-lock.ts';
import type { Runtime } from '../../start/runtime.ts';

/** What {@link rebuildIndex} did. */
export type RebuildOutcome =
  | { status: 'rebuilt'; from: string[]; to: string; copied: number; removedOrphans: string[] }
  | { status: 'busy'; heldBy: string };

/**
 * `indices rebuild NAME`: copies an index into a fresh one built from the current template and
 * swaps the aliases, with reads served throughout.
 *
 * - One rebuild per index at a time (a Redis lock); a second answers `busy`.
 * - What an interrupted rebuild left (its partial copy) is removed first.
 * - Intake and embedding jobs pause while the copy runs (they keep queueing in Redis; none is
 *   lost) and resume afterwards, whatever happens.
 * - With a model configured, records whose vector is missing or from another model are embedded
 *   during the copy: how existing data gets vectors, or moves to a new model.
 * - `signal` cancels between pages: the partial copy is deleted, the live index is untouched.
 */
export async function rebuildIndex(
  runtime: Runtime,
  logger: Pick<Logger, 'warn'>,
  name: IndexName,
  options: { keepOld?: boolean; signal?: AbortSignal; onProgress?: (copied: number) => void } = {},
): Promise<RebuildOutcome> {
  const { indexAdmin, queue, visibility, config } = runtime;
  const acquired = await acquireRebuildLock(runtime.redis, config.REDIS_PREFIX, name);
  if ('heldBy' in acquired) return { status: 'busy', heldBy: acquired.heldBy };
  try {
    const removedOrphans = await indexAdmin.removeOrphans(name);
    if (removedOrphans.length > 0) logger.warn(`removed ${removedOrphans.join(', ')}, left by an interrupted rebuild`);
    const embedder = runtime.embedder();
    await embedder.ready();
    const records = embedder.status().state === 'ready' ? createRecordEmbeddings({ engine: runtime.engine, embedder }) : null;
    if (records) logger.warn(`records without a current ${records.modelId} vector are embedded during the copy`);
    const embeddings = createEmbeddingQueue({ connection: runtime.redis, prefix: config.REDIS_PREFIX });
    const paused = [queue, embeddings];
    await Promise.all(paused.map((q) => q.pause()));
    try {
      while ((await Promise.all(paused.map((q) => q.getActiveCount()))).some((n) => n > 0)) await sleep(200);
      const result = await indexAdmin.rebuild(name, {
        keepOld: options.keepOld === true,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(records ? { transform: (page: any[]) => records.withVectors(name, page) } : {}),
      });
      // Search nodes must stop serving first pages from snapshots of the old index.
      await visibility.advance();
      return { status: 'rebuilt', ...result, removedOrphans };
    } finally {
      await Promise.all(paused.map((q) => q.resume()));
      await embeddings.close();
    }
  } finally {
    await acquired.lock.release();
  }
}

/**
 * Resumes intake and embedding queues that a rebuild paused and never resumed (it was killed
 * outright): only a rebuild pauses them, so a paused queue with no rebuild running is abandoned.
 * The worker calls this at start. Returns the names of the queues it resumed.
 */
export async function resumeAbandonedPause(runtime: Runtime, logger: Pick<Logger, 'warn'>): Promise<string[]> {
  const { config } = runtime;
  const running = await Promise.all(INDEX_NAMES.map((name) => rebuildRunning(runtime.redis, config.REDIS_PREFIX, name)));
  if (running.some(Boolean)) return [];
  const embeddings = createEmbeddingQueue({ connection: runtime.redis, prefix: config.REDIS_PREFIX });
  try {
    const resumed: string[] = [];
    for (const queue of [runtime.queue, embeddings]) {
      if (!(await queue.isPaused())) continue;
      await queue.resume();
      resumed.push(queue.name);
    }
    if (resumed.length > 0) logger.warn(`resumed ${resumed.join(' and ')}, left paused by an interrupted index rebuild`);
    return resumed;
  } finally {
    await embeddings.close();
  }
}
