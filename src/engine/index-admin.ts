import type { AccountRecord, EntityKind, PostRecord } from '../domain/records.ts';

/** The logical indices the service keeps. */
export type IndexName = 'posts' | 'accounts';
/** Every logical index, in the order operators see them. */
export const INDEX_NAMES: readonly IndexName[] = ['posts', 'accounts'];

/**
 * An index kept beside a logical one and never named by operators: `post-vectors` holds the posts'
 * vectors. It is installed with the others, rebuilt with its logical index (from that index's
 * records) and removed with it.
 */
export type CompanionName = 'post-vectors';
/** Every index kept under INDEX_PREFIX: the logical ones and their companions. */
export type StoredIndexName = IndexName | CompanionName;
/** The companions of each logical index: what `rebuild` of it builds too. */
export const COMPANIONS: Readonly<Record<IndexName, readonly CompanionName[]>> = {
  posts: ['post-vectors'],
  accounts: [],
};
/** The logical index a stored index belongs to: the one an operator rebuilds to rebuild it. */
export function ownerOf(name: StoredIndexName): IndexName {
  return name === 'post-vectors' ? 'posts' : name;
}

/** The kind of entity an index holds. */
export function kindOfIndex(name: IndexName): EntityKind {
  return name === 'posts' ? 'post' : 'account';
}

/** One line of `indices apply` output. */
export interface ApplyLine {
  object: string;
  action: 'created' | 'updated' | 'unchanged';
  detail?: string;
}

/** How many shards an index has, and their copies' places (`indices apply`, `indices status`). */
export interface IndexLayout {
  /** Primary shards of each index created from now on. */
  shards: number;
  /** Replica copies of each shard, also set on the live indices by `apply`. */
  replicas: number;
  /**
   * How often the engine makes new writes visible to search (`1s`, `30s`, `-1` for never on its
   * own), also set on the live indices by `apply`. Writes waited on are made visible regardless.
   */
  refreshInterval: string;
}

/** One copy of a shard, where the cluster put it (`node` null while unassigned). */
export interface ShardCopy {
  index: string;
  shard: number;
  primary: boolean;
  /** STARTED, INITIALIZING, RELOCATING or UNASSIGNED. */
  state: string;
  node: string | null;
}

/** One index of `indices status` output (its fields are printed as JSON by `--json`). */
export interface IndexStatus {
  name: IndexName;
  read_alias: string;
  write_alias: string;
  indices: string[];
  /** The template version the current index was built from (null when missing or unmanaged). */
  template_version: number | null;
  up_to_date: boolean;
  docs: number;
  health: string;
  /** Primary shards and replicas per shard of the live index (null when missing). */
  shards: { primaries: number; replicas: number } | null;
  /** The live index's refresh interval (null when missing): one raised for a backfill shows here. */
  refresh_interval: string | null;
  /** Every copy of every shard of the live index, and the node that holds it. */
  allocation: ShardCopy[];
  /**
   * The companion indices rebuilt with this one (posts: `post-vectors`), each reported as an index
   * is; absent when it has none. `up_to_date` above is false when one of them is not up to date
   * (missing, or built from an older template): the one rebuild of this index brings both.
   */
  companions?: CompanionStatus[];
}

/** A companion index in `indices status`: as an index is, under its own name. */
export type CompanionStatus = Omit<IndexStatus, 'name' | 'companions'> & { name: CompanionName };

/** The metric history in `indices status` (its fields are printed as JSON by `--json`). */
export interface HistoryStatus {
  read_alias: string;
  template_installed: boolean;
  retention_days: number;
  /** One index per calendar month, oldest first. */
  months: Array<{ index: string; points: number; store_bytes: number; thinned: boolean }>;
  points: number;
  store_bytes: number;
  /** Disk per point on the primary copies and replicas together; null without points. */
  bytes_per_point: number | null;
  /** The oldest and newest point's time (null without points). */
  oldest: string | null;
  newest: string | null;
}

/** What a retention pass over the metric history did. */
export interface PruneOutcome {
  /** Months dropped whole: every point in them was past retention. */
  dropped: string[];
  /** Months thinned to the last point of each record and UTC day. */
  thinned: string[];
  pointsDeleted: number;
}

/** Rewrites a page of records before it is written into the new index (e.g. to embed them). */
export type RebuildTransform = <R extends PostRecord | AccountRecord>(records: R[]) => Promise<R[]>;

/** Index lifecycle for operators: install templates, report status, rebuild behind aliases. */
export interface IndexAdmin {
  apply(): Promise<ApplyLine[]>;
  status(): Promise<IndexStatus[]>;
  /** The metric history: template, months, points, disk, time range. */
  historyStatus(): Promise<HistoryStatus>;
  /** Applies the history's retention at `now`: drops expired months, thins old ones. */
  pruneHistory(now: Date): Promise<PruneOutcome>;
  /**
   * Copies an index into a fresh one built from the current template and swaps the aliases; its
   * companions (posts: `post-vectors`) are built anew from the same records in the same pass, and
   * their aliases swapped in the same atomic update. `copied` counts the records.
   */
  rebuild(
    name: IndexName,
    options?: {
      keepOld?: boolean;
      onProgress?: (copied: number) => void;
      transform?: RebuildTransform;
      /** Stops the copy between pages; the new index is deleted and the aliases left as they were. */
      signal?: AbortSignal;
    },
  ): Promise<{ from: string[]; to: string; copied: number }>;
  /**
   * Deletes the concrete indices of `name` that an interrupted rebuild left behind: without an
   * alias and created after the live index (indices kept with `--keep-old` are older, and stay).
   * The same for its companions. Only safe while no rebuild of `name` runs. Returns what it deleted.
   */
  removeOrphans(name: IndexName): Promise<string[]>;
  /**
   * Sizes the refresh of the live indices the intake writes for its backlog
   * (src/internal/backlog-refresh.ts): `interval` raises theirs to it where shorter; null sets
   * INDEX_REFRESH_INTERVAL back where it differs. Returns the indices it changed.
   */
  refreshForBacklog(interval: string | null): Promise<string[]>;
  /** Deletes every index and template under the prefix (tests). */
  destroy(): Promise<void>;
}
