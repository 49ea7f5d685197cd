/**
 * The visibility epoch: a counter shared by every node (Redis) that advances whenever writes are
 * made visible on demand (`?wait=true` intake, an index rebuild). A search node may answer a
 * first page from a recent shared snapshot only if it was taken under the current epoch, so
 * whoever waited for their writes sees them on any node. The engine adapter holds it: intake
 * advances it through {@link IntakeStore.publish}, search reads it while a first page runs.
 */
export interface VisibilityEpoch {
  /** The current epoch, or null when it cannot be read (then no snapshot is reused). */
  current(): Promise<string | null>;
  /** Advances the epoch. Call after the refresh that made the writes visible. */
  advance(): Promise<void>;
}
