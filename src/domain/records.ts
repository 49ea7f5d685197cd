import type {
  AccountObservation,
  MediaEnrichmentField,
  MediaEnrichmentValues,
  PostEnrichmentField,
  PostEnrichmentValues,
  PostObservation,
} from '../contract/observations.ts';
import type { AccountMetrics } from './derived.ts';
import { coarseProfile } from './volatile-facts.ts';

/**
 * The merged state the service keeps per entity. Records are engine-neutral: an engine adapter
 * stores them whole and indexes a projection of them; the HTTP layer renders them.
 *
 * Every independently observed part is a last-writer-wins register ({@link Lww}) stamped with the
 * time its source produced it (`observed_at` for raw observations, `produced_at` for enrichment).
 * Merging takes, per register, the larger stamp (ties broken by content), so a merge is
 * idempotent, commutative and associative: any set of observations applied in any order, any
 * number of times, yields the same record.
 */
export interface Lww<T> {
  /** Normalized ISO 8601 UTC timestamp; string order is time order. */
  t: string;
  v: T;
}

/**
 * A record's text vector: which model made it, from which text (hash of the embedding text), and
 * the vector itself (little-endian float32, base64). An account keeps it inside its record, so
 * that every rewrite and every index rebuild carries it forward without embedding again. A post's
 * vectors live in its vector document (the engine's), and its stored record may say only which
 * model made them from which text: a post is rewritten at every re-observation, its vectors only
 * when its text changes (bench/steady-state.md, "The vectors in the record").
 */
export interface StoredEmbedding {
  model: string;
  text_hash: string;
  /**
   * Empty when the model cannot read the text (src/embedding): no vector, never similar to
   * anything. Absent from a post read back from the engine: its vectors are in its vector document.
   */
  vector?: string;
  /**
   * Posts only, and only those whose caption is longer than one passage: the vectors of the
   * caption's passages (src/text/embedding-text.ts), in text order, those the model cannot read
   * left out. The hash covers them too.
   */
  passages?: string[];
}

/** Whether an embedding has a vector (in hand, or in the post's vector document): not a text the model cannot read. */
export const hasVector = (embedding: StoredEmbedding | undefined): boolean =>
  embedding !== undefined && embedding.vector !== '';

/** The kinds of entity the service tracks; singular wherever a kind is named in code. */
export type EntityKind = 'post' | 'account';

export type AccountStatus = 'active' | 'deactivated' | 'deleted' | 'unobservable';
export type PostStatus = 'available' | 'unavailable';

/** The profile facts of an active account observation. */
export type AccountProfile = Omit<
  Extract<AccountObservation, { status: 'active' }>,
  'kind' | 'platform_id' | 'observed_at' | 'status'
>;

export interface AccountRecord {
  id: string;
  platform_id: string;
  status: Lww<AccountStatus> | null;
  /** The last active observation's profile; non-active observations leave it as it was. */
  profile: Lww<AccountProfile> | null;
  publishing_summary: Lww<string | null> | null;
  publishing_languages: Lww<string[] | null> | null;
  niches: Lww<string[] | null> | null;
  /**
   * Derived by the service from the account's metric history and posts, after each observation
   * of either (absent until first computed). Stamped with when it was computed, always later
   * than the previous stamp, so that snapshots of the account keep a total order.
   */
  metrics?: Lww<AccountMetrics>;
  /** Absent until the worker embeds the account (only with embeddings on). */
  embedding?: StoredEmbedding;
  /**
   * What the account publishes as one vector (domain/lookalike.ts), recomputed as its posts and
   * text get vectors; absent with embeddings off.
   */
  lookalike?: StoredLookalike;
}

/** An account's lookalike vector: which model's vectors made it, from how many posts, and the vector. */
export interface StoredLookalike {
  model: string;
  posts: number;
  /** Little-endian float32, base64, like {@link StoredEmbedding.vector}. */
  vector: string;
}

/** The raw facts of an available post observation. */
export type RawPost = Omit<
  Extract<PostObservation, { status: 'available' }>,
  'kind' | 'platform_id' | 'observed_at' | 'status' | 'hashtags'
> & { hashtags: string[] };

/**
 * What a post keeps of an account it links to (author, coauthor, credited audio account): the
 * author summary plus the account facts that post search filters on. `version` orders snapshots
 * of the same account (see {@link accountVersion}).
 */
export interface AccountSnapshot {
  version: string;
  status: AccountStatus | null;
  profile: AccountProfile | null;
  niches: string[] | null;
  publishing_languages: string[] | null;
}

export type MediaEnrichment = { [K in MediaEnrichmentField]?: Lww<MediaEnrichmentValues[K]> };

/** A post's enrichment registers, each typed as its observation schema parses it. */
export type PostEnrichment = { [K in PostEnrichmentField]?: Lww<PostEnrichmentValues[K]> };

export interface PostRecord {
  id: string;
  platform_id: string;
  status: Lww<PostStatus> | null;
  raw: Lww<RawPost> | null;
  enrichment: PostEnrichment;
  /** Keyed by media platform ID, so enrichment may arrive before the post that lists the media. */
  media_enrichment: Record<string, MediaEnrichment>;
  /** Snapshots of linked accounts, keyed by account service ID. */
  accounts: Record<string, AccountSnapshot>;
  /** Derived by the service from the author's other posts (contract §4). */
  view_ratio_to_account_baseline: number | null;
  /** Absent until the worker embeds the post (only with embeddings on). */
  embedding?: StoredEmbedding;
  /**
   * When the service first wrote the post (ISO 8601 UTC), set by that write: saved searches judge
   * by it whether the post can be news to them (created after them, within 30 days).
   */
  first_seen_at?: string;
}

/** One write of a post: the record before it (null: the post is new) and after. */
export interface PostWrite {
  before: PostRecord | null;
  after: PostRecord;
}

/**
 * Told of post writes (saved searches match them: services/alerts). A writer that runs as a retried
 * job tells it twice: `intend` before each write, then `record` after, both with its job's id, so
 * that an attempt failing between its write and `record` leaves what it wrote for the next attempt
 * to hand on (whose own merge finds nothing left to write).
 */
export interface PostWriteRecorder {
  intend?(job: string, writes: Iterable<PostWrite>): Promise<void>;
  record(writes: Iterable<PostWrite>, job?: string): Promise<void>;
}

/**
 * A post record as searches read it: without the per-media enrichment (transcripts, on-screen
 * text, visual descriptions), which summaries never render and which is often most of a record.
 */
export type SearchedPost = Omit<PostRecord, 'media_enrichment'>;

/** An empty account record. */
export function emptyAccount(id: string, platformId: string): AccountRecord {
  return {
    id,
    platform_id: platformId,
    status: null,
    profile: null,
    publishing_summary: null,
    publishing_languages: null,
    niches: null,
  };
}

/** An empty post record. */
export function emptyPost(id: string, platformId: string): PostRecord {
  return {
    id,
    platform_id: platformId,
    status: null,
    raw: null,
    enrichment: {},
    media_enrichment: {},
    accounts: {},
    view_ratio_to_account_baseline: null,
  };
}

/**
 * The enrichment of a post's media item `platformId` (empty when none arrived). Media platform IDs
 * are the pipeline's strings, so one may be `__proto__` or `constructor`: only the record's own
 * entry counts, never what an object inherits.
 */
export function mediaEnrichmentOf(record: Pick<PostRecord, 'media_enrichment'>, platformId: string): MediaEnrichment {
  return Object.hasOwn(record.media_enrichment, platformId) ? record.media_enrichment[platformId]! : {};
}

/**
 * A total order over the states of one account. Every merge only moves an account's registers
 * forward, so a later state has every stamp ≥ an earlier one; comparing the concatenated stamps
 * therefore orders snapshots of the same account by recency.
 */
function accountVersion(account: AccountRecord): string {
  const stamp = (r: Lww<unknown> | null) => r?.t ?? '0000-00-00T00:00:00.000Z';
  return [
    account.profile,
    account.status,
    account.publishing_summary,
    account.publishing_languages,
    account.niches,
    account.metrics ?? null,
  ]
    .map(stamp)
    .join('|');
}

/** True when `a` is a strictly later state of the same account than `b`. */
export function isNewerVersion(a: string, b: string): boolean {
  const pa = a.split('|');
  const pb = b.split('|');
  // Component-wise ≥ with at least one >: later states dominate earlier ones in every stamp.
  let greater = false;
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    if (x < y) return false;
    if (x > y) greater = true;
  }
  return greater;
}

/**
 * The snapshot a post keeps of a linked account, its counters coarsened and without its metrics
 * (src/domain/volatile-facts.ts): an observation that moves only counters within their buckets,
 * or metrics, leaves it as it was, so the account's posts are not rewritten.
 */
export function snapshotOf(account: AccountRecord): AccountSnapshot {
  const known = snapshots.get(account);
  if (known) return known;
  const profile = account.profile?.v ?? null;
  const snapshot: AccountSnapshot = {
    version: accountVersion(account),
    status: account.status?.v ?? null,
    profile: profile && coarseProfile(profile),
    niches: account.niches?.v ?? null,
    publishing_languages: account.publishing_languages?.v ?? null,
  };
  snapshots.set(account, snapshot);
  return snapshot;
}

/**
 * One snapshot object per account record: a batch gives every post of an author the same object,
 * so what is derived from a snapshot (its held key, src/domain/snapshots.ts) is computed once per
 * account, not once per post. Sound because records and snapshots are values, never changed once
 * built (merges return new objects: RecordUpdate); the 50k intake bench computed a snapshot's key
 * per post, ~4 % of the worker's CPU (bench/intake.md, "Where the extra work is now").
 */
const snapshots = new WeakMap<AccountRecord, AccountSnapshot>();
