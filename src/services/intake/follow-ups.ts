import type { IntakeStore } from '../../engine/intake-store.ts';
import { viewRatiosToBaseline } from '../../domain/derived.ts';
import type { AccountRecord, PostRecord } from '../../domain/records.ts';
import { hasOlderSnapshot, withSnapshots } from '../../domain/snapshots.ts';
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
}

/** Work left for a follow-up run: accounts whose snapshot changed, authors whose posts' baseline facts changed. */
export interface FollowUpWork {
  accounts: string[];
  authors: string[];
}

/**
 * The work that follows merges and reads through search, so it needs earlier writes visible:
 *
 * - fan-out: copy each changed account's snapshot into every post that links to it;
 * - baselines: recompute `view_ratio_to_account_baseline` for the authors whose posts changed,
 *   holding a per-author lock so that the last computation to write always read every earlier
 *   write (the refresh runs after taking the locks).
 *
 * One refresh and one write per post serve both; a further lock group (authors another run held)
 * refreshes again.
 * Batches that a caller waits on (`?wait=true`) run it inline; others leave it to the
 * `follow-ups` queue, which coalesces the work of many batches into one run (see
 * {@link FollowUps.runDeferred}). Both are recomputations from the current state, so they may
 * overlap and repeat safely.
 */
export function createFollowUps(deps: { store: IntakeStore; locks: KeyedLocks }) {
  const { store, locks } = deps;

  /** IDs of the posts linking to `accounts`, except those known to hold their current snapshots. Near real time. */
  async function linkedPosts(
    accounts: ReadonlyMap<string, AccountRecord>,
    current: ReadonlySet<string>,
  ): Promise<Set<string>> {
    const ids = new Set<string>();
    if (accounts.size === 0) return ids;
    for await (const page of store.postIdsLinkedTo([...accounts.keys()])) {
      for (const id of page) if (!current.has(id)) ids.add(id);
    }
    return ids;
  }

  /** The baseline ratio each of the authors' posts should hold, where it differs from the stored one. Near real time. */
  async function baselineUpdates(authorIds: string[]): Promise<Map<string, number | null>> {
    const updates = new Map<string, number | null>();
    if (authorIds.length === 0) return updates;
    const facts = await store.authorPostFacts(authorIds);
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
   * Fan-out and baselines in one write per post: after a refresh, finds the posts linking to the
   * changed accounts and the baseline ratios that moved, then merges both into each post at once.
   * Call with the authors' locks held (the refresh comes after taking them).
   */
  async function step(
    accounts: ReadonlyMap<string, AccountRecord>,
    authors: string[],
    current: ReadonlySet<string>,
  ): Promise<FollowUpOutcome> {
    await store.refresh();
    const ids = await linkedPosts(accounts, current);
    const ratios = await baselineUpdates(authors);
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
      const outcome = await store.posts.merge(slice, (id, record) => {
        if (!record) return null;
        const merged = withSnapshots(record, accounts);
        if (!ratios.has(id) || ratios.get(id) === merged.view_ratio_to_account_baseline) return merged;
        return { ...merged, view_ratio_to_account_baseline: ratios.get(id) ?? null };
      });
      for (const { before, after } of outcome.values()) {
        if (before?.accounts !== after.accounts) fannedOut++;
        if (before?.view_ratio_to_account_baseline !== after.view_ratio_to_account_baseline) baselinesUpdated++;
      }
    });
    return { fannedOut, baselinesUpdated };
  }

  async function run(
    changedAccounts: AccountRecord[],
    authors: string[],
    current: ReadonlySet<string>,
  ): Promise<FollowUpOutcome> {
    const total: FollowUpOutcome = { fannedOut: 0, baselinesUpdated: 0 };
    // Fan-out goes with the first lock group (it needs no lock, only the refresh); later groups
    // (authors another run held) only recompute their baselines.
    let accounts: ReadonlyMap<string, AccountRecord> = new Map(changedAccounts.map((a) => [a.id, a]));
    const add = (done: FollowUpOutcome) => {
      total.fannedOut += done.fannedOut;
      total.baselinesUpdated += done.baselinesUpdated;
      accounts = new Map();
    };
    if (authors.length > 0) {
      await locks.forEachLocked(authors, async (locked) => add(await step(accounts, locked, current)));
    } else if (accounts.size > 0) {
      add(await step(accounts, [], current));
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
    ): Promise<FollowUpOutcome> {
      const accounts = new Map(changedAccounts.map((a) => [a.id, a]));
      const current = new Set(writtenPosts.filter((p) => !hasOlderSnapshot(p, accounts)).map((p) => p.id));
      return run(changedAccounts, authors, current);
    },

    /**
     * Runs work that batches left for later, reading the accounts' current state, in slices that
     * keep each lookup's terms list and lock group moderate.
     */
    async runDeferred(work: FollowUpWork): Promise<FollowUpOutcome> {
      const total: FollowUpOutcome = { fannedOut: 0, baselinesUpdated: 0 };
      const slices = Math.ceil(Math.max(work.accounts.length, work.authors.length) / DEFERRED_SLICE);
      for (let i = 0; i < slices; i++) {
        const ids = work.accounts.slice(i * DEFERRED_SLICE, (i + 1) * DEFERRED_SLICE);
        const accounts = ids.length > 0 ? [...(await store.accounts.get(ids)).values()] : [];
        const done = await run(accounts, work.authors.slice(i * DEFERRED_SLICE, (i + 1) * DEFERRED_SLICE), new Set());
        total.fannedOut += done.fannedOut;
        total.baselinesUpdated += done.baselinesUpdated;
      }
      return total;
    },
  };
}

/** The follow-up steps of intake. */
export type FollowUps = ReturnType<typeof createFollowUps>;
