import type { AuthorPostFacts, IntakeStore } from '../../engine/intake-store.ts';
import { accountMetrics, viewRatiosToBaseline, type FollowersPoint } from '../../domain/derived.ts';
import { snapshotChanged } from '../../domain/changes.ts';
import { withAccountMetrics } from '../../domain/merge.ts';
import type { AccountRecord, PostRecord } from '../../domain/records.ts';
import { currentSnapshotKey, hasOlderSnapshot, withSnapshots } from '../../domain/snapshots.ts';
import { eachInFlight } from '../../internal/in-flight.ts';
import type { KeyedLocks } from './keyed-locks.ts';

/** Accounts and authors per step of a deferred run. */
const DEFERRED_SLICE = 1000;
/** Posts per merge of a step: about one batch's worth, so a run's memory stays that of a batch. */
const MERGE_SLICE = 500;
/** Merges of a step in flight: as many as a worker's default concurrency runs batches. */
const MERGES_IN_FLIGHT = 2;

/** What a follow-up run wrote. */
export interface FollowUpOutcome {
  fannedOut: number;
  baselinesUpdated: number;
  /** Accounts whose derived metrics changed. */
  metricsUpdated: number;
}

/**
 * Work left for a follow-up run: accounts whose snapshot changed, authors whose posts' baseline
 * facts changed (or who were observed anew), and accounts given metric history points old enough
 * for their growth to read (a backfill, a late observation): their growth reads make the history
 * current first. Observations as they happen need no such read-your-writes.
 */
export interface FollowUpWork {
  accounts: string[];
  authors: string[];
  history?: string[];
}

/**
 * The work that follows merges and reads through search, so it needs earlier writes visible:
 *
 * - baselines: recompute `view_ratio_to_account_baseline` for the authors whose posts changed,
 *   holding a per-author lock so that the last computation to write always read every earlier
 *   write (the refresh runs after taking the locks);
 * - account metrics: recompute the same authors' derived metrics (growth from the metric
 *   history, the post-derived medians and rate), which changes their snapshots;
 * - fan-out: copy each changed account's snapshot into every post that links to it.
 *
 * One refresh and one write per post serve all three; a further lock group (authors another run
 * held) refreshes again.
 * Batches that a caller waits on (`?wait=true`) run it inline; others leave it to the
 * `follow-ups` queue, which coalesces the work of many batches into one run (see
 * {@link FollowUps.runDeferred}). Both are recomputations from the current state, so they may
 * overlap and repeat safely.
 */
export function createFollowUps(deps: { store: IntakeStore; locks: KeyedLocks }) {
  const { store, locks } = deps;

  /**
   * IDs of the posts linking to `accounts`, except those known to hold their current snapshots:
   * those in `current`, and those whose index says they hold a snapshot that reads the same (most
   * of them: a post written after its account takes its snapshot in its first write). Near real time.
   */
  async function linkedPosts(
    accounts: ReadonlyMap<string, AccountRecord>,
    current: ReadonlySet<string>,
    recheck: boolean,
  ): Promise<Set<string>> {
    const ids = new Set<string>();
    if (accounts.size === 0) return ids;
    // A retried run reads them all: an earlier attempt may have written a post's snapshot and died
    // before its vector document (RecordStore.merge's `recheck`).
    const keys = recheck ? undefined : new Map([...accounts].map(([id, a]) => [id, currentSnapshotKey(a)]));
    for await (const page of store.postIdsLinkedTo([...accounts.keys()], keys)) {
      for (const id of page) if (!current.has(id)) ids.add(id);
    }
    return ids;
  }

  /** The baseline ratio each of the authors' posts should hold, where it differs from the stored one. */
  function baselineUpdates(facts: ReadonlyMap<string, AuthorPostFacts[]>): Map<string, number | null> {
    const updates = new Map<string, number | null>();
    for (const posts of facts.values()) {
      const ratios = viewRatiosToBaseline(posts);
      for (const post of posts) {
        const ratio = ratios.get(post.id) ?? null;
        if (ratio !== post.viewRatioToAccountBaseline) updates.set(post.id, ratio);
      }
    }
    return updates;
  }

  /**
   * Recomputes the authors' account metrics from `facts` (their posts) and their follower history,
   * and writes those that changed. Returns how many were written, and those whose snapshots changed.
   */
  async function metricUpdates(
    authorIds: string[],
    facts: ReadonlyMap<string, AuthorPostFacts[]>,
    freshHistory: ReadonlySet<string>,
  ): Promise<{ written: number; changed: Map<string, AccountRecord> }> {
    const changed = new Map<string, AccountRecord>();
    if (authorIds.length === 0) return { written: 0, changed };
    const records = await store.accounts.get(authorIds);
    const latest = [...records.values()].map((a) => a.profile?.t).filter((t): t is string => t !== undefined);
    const followers =
      latest.length === 0
        ? new Map<string, FollowersPoint[]>()
        : await store.followerHistory(
            [...records.keys()],
            shiftDays(
              latest.reduce((a, b) => (a < b ? a : b)),
              -GROWTH_LOOKBACK_DAYS,
            ),
            shiftDays(
              latest.reduce((a, b) => (a > b ? a : b)),
              -GROWTH_NEAREST_DAYS,
            ),
            { fresh: authorIds.some((id) => freshHistory.has(id)) },
          );
    const now = new Date();
    const outcome = await store.accounts.merge([...records.keys()], (id, record) => {
      if (!record) return null;
      const profile = record.profile;
      const metrics = accountMetrics({
        latest: profile ? { at: profile.t, followers: profile.v.followers_count } : null,
        isPrivate: profile?.v.is_private ?? false,
        followers: followers.get(id) ?? [],
        posts: facts.get(id) ?? [],
      });
      return withAccountMetrics(record, metrics, now);
    });
    // Only the accounts whose snapshot reads differently need their posts: metrics moving within
    // their buckets (src/domain/volatile-facts.ts) leave every post as it is.
    for (const [id, { before, after }] of outcome) if (snapshotChanged(before, after)) changed.set(id, after);
    return { written: outcome.size, changed };
  }

  /**
   * Baselines, account metrics and fan-out in one write per post: after a refresh, recomputes the
   * authors' metrics (writing the accounts), then finds the posts linking to every changed account
   * and the baseline ratios that moved, and merges both into each post at once. Call with the
   * authors' locks held (the refresh comes after taking them).
   */
  async function step(
    changedAccounts: ReadonlyMap<string, AccountRecord>,
    authors: string[],
    current: ReadonlySet<string>,
    freshHistory: ReadonlySet<string>,
    options: RunOptions,
  ): Promise<FollowUpOutcome> {
    await store.refresh();
    const facts = authors.length > 0 ? await store.authorPostFacts(authors) : new Map<string, AuthorPostFacts[]>();
    const metrics = await metricUpdates(authors, facts, freshHistory);
    const accounts = new Map([...changedAccounts, ...metrics.changed]);
    const ids = await linkedPosts(accounts, metrics.changed.size > 0 ? new Set() : current, options.recheck === true);
    const ratios = baselineUpdates(facts);
    for (const id of ratios.keys()) ids.add(id);
    let fannedOut = 0;
    let baselinesUpdated = 0;
    const all = [...ids];
    const slices = Array.from({ length: Math.ceil(all.length / MERGE_SLICE) }, (_, i) =>
      all.slice(i * MERGE_SLICE, (i + 1) * MERGE_SLICE),
    );
    // Slices, so a merge holds a batch's worth of records and bodies; a few in flight, because a
    // run's reads, projections and writes take turns and the last run of a long intake has the
    // machine to itself (bench/intake.md, "Bulk bodies built as planned, and follow-up merge slices").
    await eachInFlight(slices, MERGES_IN_FLIGHT, async (slice) => {
      const outcome = await store.posts.merge(
        slice,
        (id, record) => {
          if (!record) return null;
          const merged = withSnapshots(record, accounts);
          if (!ratios.has(id) || ratios.get(id) === merged.view_ratio_to_account_baseline) return merged;
          return { ...merged, view_ratio_to_account_baseline: ratios.get(id) ?? null };
        },
        { recheck: options.recheck === true },
      );
      for (const { before, after } of outcome.values()) {
        if (before?.accounts !== after.accounts) fannedOut++;
        if (before?.view_ratio_to_account_baseline !== after.view_ratio_to_account_baseline) baselinesUpdated++;
      }
    });
    return { fannedOut, baselinesUpdated, metricsUpdated: metrics.written };
  }

  async function run(
    changedAccounts: AccountRecord[],
    authors: string[],
    current: ReadonlySet<string>,
    freshHistory: ReadonlySet<string>,
    options: RunOptions,
  ): Promise<FollowUpOutcome> {
    const total: FollowUpOutcome = { fannedOut: 0, baselinesUpdated: 0, metricsUpdated: 0 };
    // Fan-out goes with the first lock group (it needs no lock, only the refresh); later groups
    // (authors another run held) only recompute their baselines.
    let accounts: ReadonlyMap<string, AccountRecord> = new Map(changedAccounts.map((a) => [a.id, a]));
    const add = (done: FollowUpOutcome) => {
      addOutcome(total, done);
      accounts = new Map();
    };
    if (authors.length > 0) {
      await locks.forEachLocked(authors, async (locked) =>
        add(await step(accounts, locked, current, freshHistory, options)),
      );
    } else if (accounts.size > 0) {
      add(await step(accounts, [], current, freshHistory, options));
    }
    return total;
  }

  return {
    /**
     * Runs the follow-up of one batch at once. Posts the batch wrote that already hold the changed
     * snapshots are not read again (a held snapshot only ever moves forward).
     */
    runInline(
      changedAccounts: AccountRecord[],
      authors: string[],
      writtenPosts: PostRecord[],
      freshHistory: readonly string[] = [],
      options: RunOptions = {},
    ): Promise<FollowUpOutcome> {
      const accounts = new Map(changedAccounts.map((a) => [a.id, a]));
      const current = new Set(writtenPosts.filter((p) => !hasOlderSnapshot(p, accounts)).map((p) => p.id));
      return run(changedAccounts, authors, current, new Set(freshHistory), options);
    },

    /**
     * Runs work that batches left for later, reading the accounts' current state, in slices that
     * keep each lookup's terms list and lock group moderate.
     */
    async runDeferred(work: FollowUpWork, options: RunOptions = {}): Promise<FollowUpOutcome> {
      const total: FollowUpOutcome = { fannedOut: 0, baselinesUpdated: 0, metricsUpdated: 0 };
      const freshHistory = new Set(work.history ?? []);
      const slices = Math.ceil(Math.max(work.accounts.length, work.authors.length) / DEFERRED_SLICE);
      for (let i = 0; i < slices; i++) {
        const ids = work.accounts.slice(i * DEFERRED_SLICE, (i + 1) * DEFERRED_SLICE);
        const accounts = ids.length > 0 ? [...(await store.accounts.get(ids)).values()] : [];
        const authors = work.authors.slice(i * DEFERRED_SLICE, (i + 1) * DEFERRED_SLICE);
        const done = await run(accounts, authors, new Set(), freshHistory, options);
        addOutcome(total, done);
      }
      return total;
    },
  };
}

/**
 * How a run goes. `recheck`: a retried run's earlier attempt may have died between a post's write
 * and its derived documents' (RecordStore.merge): they are compared again, changed post or not.
 */
export interface RunOptions {
  recheck?: boolean;
}

/** Growth compares with observations up to 30 days (± 2) back, and at least 7 (− 2). */
const GROWTH_LOOKBACK_DAYS = 32;
const GROWTH_NEAREST_DAYS = 5;

function shiftDays(iso: string, days: number): string {
  return new Date(Date.parse(iso) + days * 24 * 60 * 60 * 1000).toISOString();
}

function addOutcome(total: FollowUpOutcome, done: FollowUpOutcome): void {
  total.fannedOut += done.fannedOut;
  total.baselinesUpdated += done.baselinesUpdated;
  total.metricsUpdated += done.metricsUpdated;
}

/** The follow-up steps of intake. */
export type FollowUps = ReturnType<typeof createFollowUps>;
