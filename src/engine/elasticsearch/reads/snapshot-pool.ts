import type { Client } from '@elastic/elasticsearch';
import { engineCall } from '../errors.ts';

/** A point in time to run a first page on. */
export interface Snapshot {
  pit: string;
  /** The visibility epoch read before it was opened; null for a private snapshot. */
  epoch: string | null;
  /** Shared with other searches: never close it when one search is done with it. */
  shared: boolean;
}

/** Hands out points in time for first pages. */
export interface SnapshotPool {
  /** This node's shared snapshot of `index` when it is younger than the maximum age, else null. */
  recent(index: string | string[]): Promise<Snapshot | null>;
  /**
   * Opens a snapshot tagged with `epoch`, which must have been read before this call. It becomes
   * the shared one (one open per index set and epoch, however many searches ask); with a null
   * epoch, or sharing disabled, it is private to the caller.
   */
  open(index: string | string[], epoch: string | null, keepAliveSeconds: number): Promise<Snapshot>;
  /** Forgets a shared snapshot the engine no longer knows (index rebuilt, node restarted). */
  discard(index: string | string[], pit: string): void;
  /**
   * Forgets a snapshot that lost part of itself (a node left the cluster, or restarted and forgot
   * its contexts: see isLostNode, isForgottenContext), shared or not, and counts it.
   */
  nodeLost(index: string | string[], pit: string): void;
  /** Counters since creation: snapshots opened, and first pages served from one already open. */
  stats(): SnapshotStats;
}

/** What {@link SnapshotPool.stats} reports. */
export interface SnapshotStats {
  opened: number;
  reused: number;
  /** Snapshots given up because part of them was lost (a node left or restarted, a shard moved). */
  lost: number;
}

interface Slot {
  epoch: string;
  openedAt: number;
  pit: Promise<string>;
  /** Set once the open succeeded. */
  id?: string;
}

/**
 * Why a pool: opening a point in time is a round trip (~2.5–3 ms) before every first page, which
 * dominated fast filtered searches. One point in time per node and index set, rotated after
 * `maxAgeMs`, serves every first page in between. Search stays near-real-time: a shared snapshot
 * is at most `maxAgeMs` older than the index's own refresh. Writes made visible on demand
 * (`?wait=true` intake, index rebuilds) advance the visibility epoch; a search that finds the
 * epoch newer than its snapshot's tag runs again on a new snapshot (see pagedSearch).
 *
 * Superseded snapshots are not closed (cursors may still page on them); they lapse at their
 * keep-alive, so at most one per `maxAgeMs` of traffic is held instead of one per search.
 */
export function createSnapshotPool(deps: { client: Client; maxAgeMs: number; now?: () => number }): SnapshotPool {
  const { client, maxAgeMs } = deps;
  const now = deps.now ?? (() => performance.now());
  const slots = new Map<string, Slot>();
  const keyOf = (index: string | string[]) => (Array.isArray(index) ? index.join(',') : index);
  const counts: SnapshotStats = { opened: 0, reused: 0, lost: 0 };

  const openPit = (index: string | string[], keepAliveSeconds: number) =>
    (counts.opened++, engineCall)(() => client.openPointInTime({ index, keep_alive: `${keepAliveSeconds}s` })).then(
      (r) => r.id,
    );

  return {
    async recent(index) {
      const slot = slots.get(keyOf(index));
      if (!slot || now() - slot.openedAt >= maxAgeMs) return null;
      try {
        const pit = await slot.pit;
        counts.reused++;
        return { pit, epoch: slot.epoch, shared: true };
      } catch {
        return null;
      }
    },

    async open(index, epoch, keepAliveSeconds) {
      if (maxAgeMs <= 0 || epoch === null)
        return { pit: await openPit(index, keepAliveSeconds), epoch: null, shared: false };
      const key = keyOf(index);
      const current = slots.get(key);
      if (current && current.epoch === epoch && now() - current.openedAt < maxAgeMs) {
        counts.reused++;
        return { pit: await current.pit, epoch, shared: true };
      }
      const slot: Slot = { epoch, openedAt: now(), pit: openPit(index, keepAliveSeconds) };
      slots.set(key, slot);
      slot.pit.then(
        (id) => {
          slot.id = id;
        },
        () => {
          // A failed open must not be handed to later searches.
          if (slots.get(key) === slot) slots.delete(key);
        },
      );
      return { pit: await slot.pit, epoch, shared: true };
    },

    discard(index, pit) {
      const key = keyOf(index);
      if (slots.get(key)?.id === pit) slots.delete(key);
    },

    nodeLost(index, pit) {
      counts.lost++;
      this.discard(index, pit);
    },

    stats: () => ({ ...counts }),
  };
}
