import type { MetricPoint } from '../domain/history.ts';
/**
 * Computes the next state of one record from its current state (null when absent). Returns the
 * current object unchanged (or an equal one) when there is nothing to write, or null to leave an
 * absent record absent. Must be pure: the engine calls it again after a write conflict.
 */
export type RecordUpdate<R> = (id: string, current: R | null) => R | null;

/** What a merge wrote: the new state of every record whose state changed, with its previous state. */
export type MergeOutcome<R> = Map<string, { before: R | null; after: R }>;

/** Reads records of one kind by ID. */
export interface RecordReader<R> {
  /** Current records by ID, read in real time (no refresh needed); absent IDs are left out. */
  get(ids: readonly string[]): Promise<Map<string, R>>;
}

/** A record with the engine's token for its current version (changes with every write of it). */
export interface Versioned<R> {
  record: R;
  version: string;
}

/** A store of records of one kind: real-time reads and concurrency-safe merges. */
export interface RecordStore<R> extends RecordReader<R> {
  /** As {@link RecordReader.get}, each record with its version token. */
  getVersioned(ids: readonly string[]): Promise<Map<string, Versioned<R>>>;
  /**
   * The version token of each record, read in real time without the record itself (much cheaper
   * for the engine than a get); absent IDs are left out. Equal tokens mean an unchanged record.
   */
  versions(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Applies `update` to each record atomically with respect to concurrent merges (optimistic
   * concurrency: a conflicting write is re-read and re-applied), so no field is ever lost.
   * `points` go to the metric history in the same bulk requests, each once (a point already
   * there is left as it is), whether or not its record changed. `beforeWrite` is told of the
   * writes each round is about to send (a round after a conflict again, with what it re-read);
   * a throw stops the merge before they are sent. With `recheck`, what the store derives from each
   * record in documents of its own is compared and written again where it differs, changed record
   * or not: for a retried job, whose earlier attempt may have died after a record's write was
   * taken and its derived one refused. With `companionOnly`, a record whose change lies wholly in
   * what the store derives from it into a document of its own (a post's new vectors) is not
   * written itself: only that document is, and the record is in the outcome if it was not
   * written meanwhile (else it is read and its update applied again).
   */
  merge(
    ids: readonly string[],
    update: RecordUpdate<R>,
    extra?: {
      points?: readonly MetricPoint[];
      beforeWrite?: (writes: ReadonlyArray<{ before: R | null; after: R }>) => Promise<void>;
      recheck?: boolean;
      companionOnly?: boolean;
    },
  ): Promise<MergeOutcome<R>>;
}
