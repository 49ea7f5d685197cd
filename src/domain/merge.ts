import { mintId } from '../contract/ids.ts';
import {
  MEDIA_ENRICHMENT_FIELDS,
  POST_ENRICHMENT_FIELDS,
  type AccountEnrichmentObservation,
  type AccountObservation,
  type Observation,
  type PostEnrichmentObservation,
  type PostObservation,
} from '../contract/observations.ts';
import {
  emptyAccount,
  emptyPost,
  isNewerVersion,
  mediaEnrichmentOf,
  type AccountRecord,
  type AccountSnapshot,
  type Lww,
  type PostRecord,
  type RawPost,
} from './records.ts';
import { stableStringify } from '../internal/stable-json.ts';
import type { AccountMetrics } from './derived.ts';

/**
 * Pure merge functions: one per observation kind, each returning a new record. Every register is
 * last-writer-wins on its stamp with a content tie-break, which makes the result independent of
 * arrival order and of duplicates (see `model/records.ts`).
 */

/** The later of two registers; equal stamps keep the larger content, so the pick is symmetric. */
export function pickLww<T>(a: Lww<T> | null | undefined, b: Lww<T> | null | undefined): Lww<T> | null {
  if (!a) return b ?? null;
  if (!b) return a;
  if (a.t !== b.t) return a.t > b.t ? a : b;
  // The same observation again (a retry, a replay) is the common tie: either pick is the same, and
  // comparing in place spares two key-sorted serializations.
  if (sameRecord(a.v, b.v)) return a;
  return stableStringify(a.v) >= stableStringify(b.v) ? a : b;
}

/** Applies an `account` observation. */
export function applyAccount(record: AccountRecord, obs: AccountObservation): AccountRecord {
  const next: AccountRecord = {
    ...record,
    status: pickLww(record.status, { t: obs.observed_at, v: obs.status }),
  };
  if (obs.status === 'active') {
    const { kind: _k, platform_id: _p, observed_at: _o, status: _s, ...profile } = obs;
    next.profile = pickLww(record.profile, { t: obs.observed_at, v: profile });
  }
  return next;
}

/** Applies an `account_enrichment` observation; absent fields are left as they were. */
export function applyAccountEnrichment(record: AccountRecord, obs: AccountEnrichmentObservation): AccountRecord {
  const next = { ...record };
  const t = obs.produced_at;
  if (obs.publishing_summary !== undefined) {
    next.publishing_summary = pickLww(record.publishing_summary, { t, v: obs.publishing_summary });
  }
  if (obs.publishing_languages !== undefined) {
    next.publishing_languages = pickLww(record.publishing_languages, { t, v: obs.publishing_languages });
  }
  if (obs.niches !== undefined) next.niches = pickLww(record.niches, { t, v: obs.niches });
  return next;
}

// \p{M}: combining marks belong to the tag (Devanagari vowel signs, decomposed accents).
const HASHTAG = /(?:^|[^\p{L}\p{M}\p{N}_&])#([\p{L}\p{M}\p{N}_]+)/gu;

/** Hashtags written in a caption, without the marker, first spelling kept, case-insensitively distinct. */
export function hashtagsFromCaption(caption: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const match of caption.matchAll(HASHTAG)) {
    const tag = match[1]!;
    const key = tag.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      out.push(tag);
    }
  }
  return out;
}

/** Applies a `post` observation. */
export function applyPost(record: PostRecord, obs: PostObservation): PostRecord {
  const next: PostRecord = {
    ...record,
    status: pickLww(record.status, { t: obs.observed_at, v: obs.status }),
  };
  if (obs.status === 'available') {
    const { kind: _k, platform_id: _p, observed_at: _o, status: _s, hashtags, ...rest } = obs;
    const raw: RawPost = { ...rest, hashtags: hashtags ?? hashtagsFromCaption(obs.caption) };
    next.raw = pickLww(record.raw, { t: obs.observed_at, v: raw });
  }
  return next;
}

/** Applies a `post_enrichment` observation field by field (and media item by media item). */
export function applyPostEnrichment(record: PostRecord, obs: PostEnrichmentObservation): PostRecord {
  const t = obs.produced_at;
  const enrichment = { ...record.enrichment };
  for (const field of POST_ENRICHMENT_FIELDS) mergeRegister(enrichment, obs, field, t);
  const media_enrichment = { ...record.media_enrichment };
  for (const item of obs.media ?? []) {
    const current = { ...mediaEnrichmentOf({ media_enrichment }, item.platform_id) };
    for (const field of MEDIA_ENRICHMENT_FIELDS) mergeRegister(current, item, field, t);
    // Defined, not assigned: assigning `__proto__` would set the object's prototype, and the
    // item's enrichment would vanish from the stored JSON.
    Object.defineProperty(media_enrichment, item.platform_id, {
      value: current,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { ...record, enrichment, media_enrichment };
}

/** Merges `given[field]` (absent: untouched) into the register `registers[field]`, stamped `t`. */
function mergeRegister<V, K extends keyof V>(
  registers: { [P in keyof V]?: Lww<V[P]> },
  given: Partial<V>,
  field: K,
  t: string,
): void {
  const value: V[K] | undefined = given[field];
  if (value !== undefined) registers[field] = pickLww(registers[field], { t, v: value }) ?? undefined;
}

/** The observations of one batch that apply to one record, in batch order. */
export interface RecordGroup<O> {
  platformId: string;
  observations: O[];
}

/** Observations that apply to an account record. */
export type AccountBatchObservation = AccountObservation | AccountEnrichmentObservation;
/** Observations that apply to a post record. */
export type PostBatchObservation = PostObservation | PostEnrichmentObservation;

/** A batch's observations grouped by the service ID of the record each applies to. */
export interface GroupedBatch {
  accounts: Map<string, RecordGroup<AccountBatchObservation>>;
  posts: Map<string, RecordGroup<PostBatchObservation>>;
}

/** Groups a batch by record: one merge per record, however many observations it has. */
export function groupBatch(observations: readonly Observation[]): GroupedBatch {
  const batch: GroupedBatch = { accounts: new Map(), posts: new Map() };
  const add = <O>(groups: Map<string, RecordGroup<O>>, id: string, platformId: string, o: O) => {
    const group = groups.get(id);
    if (group) group.observations.push(o);
    else groups.set(id, { platformId, observations: [o] });
  };
  for (const o of observations) {
    if (o.kind === 'account') add(batch.accounts, mintId('account', o.platform_id), o.platform_id, o);
    else if (o.kind === 'account_enrichment')
      add(batch.accounts, mintId('account', o.account_platform_id), o.account_platform_id, o);
    else if (o.kind === 'post') add(batch.posts, mintId('post', o.platform_id), o.platform_id, o);
    else add(batch.posts, mintId('post', o.post_platform_id), o.post_platform_id, o);
  }
  return batch;
}

/** Applies a group's observations, in order, to account `id` (a new record when there is none). */
export function mergeAccountGroup(
  current: AccountRecord | null,
  id: string,
  group: RecordGroup<AccountBatchObservation>,
): AccountRecord {
  let record = current ?? emptyAccount(id, group.platformId);
  for (const o of group.observations) {
    record = o.kind === 'account' ? applyAccount(record, o) : applyAccountEnrichment(record, o);
  }
  return record;
}

/** Applies a group's observations, in order, to post `id` (a new record when there is none). */
export function mergePostGroup(
  current: PostRecord | null,
  id: string,
  group: RecordGroup<PostBatchObservation>,
): PostRecord {
  let record = current ?? emptyPost(id, group.platformId);
  for (const o of group.observations) {
    record = o.kind === 'post' ? applyPost(record, o) : applyPostEnrichment(record, o);
  }
  return record;
}

/**
 * The account with `metrics` as its derived metrics: the same object when they are already those,
 * else stamped `now`, or just after the previous stamp when the clock says otherwise, so that
 * every change moves the account's version forward.
 */
export function withAccountMetrics(record: AccountRecord, metrics: AccountMetrics, now: Date): AccountRecord {
  const held = record.metrics;
  if (held && sameRecord(held.v, metrics)) return record;
  const after = held ? Date.parse(held.t) + 1 : 0;
  return { ...record, metrics: { t: new Date(Math.max(now.getTime(), after)).toISOString(), v: metrics } };
}

/** Keeps `snapshot` of account `accountId` in the post when it is newer than the one held. */
export function applyAccountSnapshot(record: PostRecord, accountId: string, snapshot: AccountSnapshot): PostRecord {
  const held = record.accounts[accountId];
  if (held && !replacesSnapshot(snapshot, held)) return record;
  return { ...record, accounts: { ...record.accounts, [accountId]: snapshot } };
}

/**
 * True when a post holding `held` should take `next`: a later state of the account that reads
 * differently. A later state with the same content (counters moved within their buckets) is not
 * worth a write: the held one says the same, and any later change of content replaces it, since
 * versions only move forward.
 */
export function replacesSnapshot(next: AccountSnapshot, held: AccountSnapshot): boolean {
  return isNewerVersion(next.version, held.version) && !sameSnapshotContent(next, held);
}

/**
 * Whether two snapshots read alike, their versions aside: compared in place (sameRecord takes an
 * `undefined` key as absent), since the intake asks it of every account it writes and of every
 * snapshot a post may take.
 */
export function sameSnapshotContent(a: AccountSnapshot, b: AccountSnapshot): boolean {
  return sameRecord({ ...a, version: undefined }, { ...b, version: undefined });
}

/**
 * True when two records hold the same state (a merge that changed nothing is not written): equal
 * as JSON, so key order does not matter and a key holding `undefined` counts as absent.
 *
 * Compared in place rather than as two key-sorted serializations: the intake compares every
 * record it is about to write, and those serializations (with a sorted copy of every object) were
 * a large share of the worker's allocations, hence of its garbage collection.
 */
export function sameRecord(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    // JSON writes an `undefined` array element as null.
    return a.every((x, i) => sameRecord(x ?? null, b[i] ?? null));
  }
  // Objects that are neither null nor arrays: records read from JSON, indexed by their own keys
  // (plain property reads, no per-key check, on the intake's hottest comparison).
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>; // as x
  let keys = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    keys++;
    if (!sameRecord(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) keys--;
  return keys === 0;
}
