import { mintId } from '../../contract/ids.ts';
import type { Observation } from '../../contract/observations.ts';
import type { Logger } from 'pino';
import type { EmbeddingWork, RecordEmbeddings } from './record-embeddings.ts';
import type { IntakeStore } from '../../engine/intake-store.ts';
import type { Versioned } from '../../engine/records.ts';
import type { AccountRecord, PostRecord, PostWriteRecorder } from '../../domain/records.ts';
import { baselineFactsChanged, snapshotChanged, topicsChanged } from '../../domain/changes.ts';
import { hasOlderSnapshot, withSnapshots } from '../../domain/snapshots.ts';
import type { KeyedLocks } from './keyed-locks.ts';
import { createFollowUps } from './follow-ups.ts';
import { batchBaselines, type BatchBaseline } from './batch-baselines.ts';
import type { FollowUpBacklog } from './follow-up-backlog.ts';
import { groupBatch, mergeAccountGroup, mergePostGroup, type GroupedBatch } from '../../domain/merge.ts';
import { metricPointsOf, type MetricPoint } from '../../domain/history.ts';
import { linkedAccountIds, linksOf } from '../../domain/links.ts';
import type { ObservationJobResult } from '../../queues/registry.ts';

/**
 * Account points older than this may be read by a growth computed right away (the nearest a growth
 * reaches back is 7 − 2 days; a day less for clocks that disagree).
 */
const FRESH_HISTORY_MS = 4 * 24 * 60 * 60 * 1000;

/**
 * Applies one batch of validated observations to the engine. Steps, each safe under concurrent
 * batches (docs/merging.md):
 *
 * 1. merge accounts, then posts (optimistic concurrency per record), each post whose baseline
 *    facts the batch changes with the ratio the batch and search can tell (batch-baselines.ts);
 * 2. give each written post the current snapshot of every account it links to (read in real time
 *    after the post write, so an account written concurrently is either seen here or sees the
 *    post in its own fan-out), and mirror the accounts' followers for post pages (`followers`);
 * 3. fan out each account whose summary changed to every post linking to it, and
 * 4. recompute `view_ratio_to_account_baseline` for the authors whose posts changed
 *    (`follow-ups.ts`): at once when the caller waits (`refresh`), else left to the
 *    `follow-ups` queue, which does the work of many batches in one run;
 * 5. with `refresh`, make everything visible to search before returning (`publishAll`: each
 *    month of the metric history too, for the last batch of a streamed load that waits).
 */
export function createObservationProcessor(deps: {
  store: IntakeStore;
  locks: KeyedLocks;
  /** With embeddings on: what gives records vectors, and the queue for doing it later. */
  embeddings?: {
    records: Pick<RecordEmbeddings, 'postNeedsEmbedding' | 'accountNeedsEmbedding' | 'embed'>;
    enqueue(work: EmbeddingWork): Promise<void>;
    logger?: Pick<Logger, 'warn'>;
  };
  /** Where batches nobody waits on leave steps 3–4; without it they run inline. */
  followUps?: Pick<FollowUpBacklog, 'add'>;
  /** What is told of written posts (saved searches match them); absent: nothing is told. */
  changes?: PostWriteRecorder;
  /**
   * The mirror of the accounts' current followers that posts render from
   * (src/services/accounts/followers-mirror.ts); absent: not mirrored.
   */
  followers?: { record(accounts: Iterable<AccountRecord>): Promise<void> };
}) {
  const { store } = deps;
  const followUps = createFollowUps({ store, locks: deps.locks });

  async function mergeAccounts(groups: GroupedBatch['accounts'], points: readonly MetricPoint[]) {
    return store.accounts.merge([...groups.keys()], (id, current) => mergeAccountGroup(current, id, groups.get(id)!), {
      points,
    });
  }

  /**
   * Accounts the post observations link to, read up front (with their versions) so new posts get
   * snapshots in their first write.
   */
  async function linkedAccountsOf(observations: Observation[]): Promise<Map<string, Versioned<AccountRecord>>> {
    const platformIds = new Set<string>();
    for (const o of observations) {
      if (o.kind !== 'post' || o.status !== 'available') continue;
      platformIds.add(o.author_platform_id);
      for (const c of o.coauthor_platform_ids) platformIds.add(c);
      if (o.audio?.attribution_account_platform_id) platformIds.add(o.audio.attribution_account_platform_id);
    }
    return store.accounts.getVersioned([...platformIds].map((p) => mintId('account', p)));
  }

  async function mergePosts(
    groups: GroupedBatch['posts'],
    linked: ReadonlyMap<string, Versioned<AccountRecord>>,
    baseline: BatchBaseline,
    points: readonly MetricPoint[],
    job: string | undefined,
    retry: boolean,
  ) {
    const accounts = new Map([...linked].map(([id, v]) => [id, v.record]));
    const changes = deps.changes;
    const firstSeen = new Date().toISOString();
    return store.posts.merge(
      [...groups.keys()],
      (id, current) => {
        const merged = withSnapshots(mergePostGroup(current, id, groups.get(id)!), accounts);
        const withRatio = withBaseline(baseline, current, merged);
        return current === null ? { ...withRatio, first_seen_at: firstSeen } : withRatio;
      },
      {
        points,
        recheck: retry,
        // Recorded before they are written: see PostWriteRecorder.
        ...(job !== undefined && changes?.intend ? { beforeWrite: (writes) => changes.intend!(job, writes) } : {}),
      },
    );
  }

  /**
   * The post with the ratio the batch computed for it (batch-baselines.ts), where the batch changes
   * the facts its ratio reads; else as it is, its ratio left to the follow-up run.
   */
  function withBaseline(baseline: BatchBaseline, current: PostRecord | null, merged: PostRecord): PostRecord {
    if (!baselineFactsChanged(current, merged)) return merged;
    const ratio = baseline(merged);
    return ratio === undefined || ratio === merged.view_ratio_to_account_baseline
      ? merged
      : { ...merged, view_ratio_to_account_baseline: ratio };
  }

  /**
   * The records a retried batch touches, read as they are now. An earlier attempt may have written
   * them before failing, which makes this attempt's merges no-ops: the later steps then work from
   * these instead of from what this attempt changed.
   */
  async function reread(batch: GroupedBatch): Promise<{ accounts: AccountRecord[]; posts: PostRecord[] }> {
    const [accounts, posts] = await Promise.all([
      store.accounts.get([...batch.accounts.keys()]),
      store.posts.get([...batch.posts.keys()]),
    ]);
    return { accounts: [...accounts.values()], posts: [...posts.values()] };
  }

  /**
   * Step 2: attach the newest snapshots of linked accounts to the given posts. Only the accounts'
   * versions are read again: an account whose version is the one read up front is that record,
   * and only the others (changed since, or linked without being read) are fetched whole.
   */
  async function attachSnapshots(
    posts: PostRecord[],
    upFront: ReadonlyMap<string, Versioned<AccountRecord>>,
  ): Promise<number> {
    const linked = [...new Set(posts.flatMap(linkedAccountIds))];
    if (linked.length === 0) return 0;
    const versions = await store.accounts.versions(linked);
    const accounts = new Map<string, AccountRecord>();
    const changed: string[] = [];
    for (const [id, version] of versions) {
      const known = upFront.get(id);
      if (known?.version === version) accounts.set(id, known.record);
      else changed.push(id);
    }
    for (const [id, record] of await store.accounts.get(changed)) accounts.set(id, record);
    const stale = posts.filter((p) => hasOlderSnapshot(p, accounts));
    if (stale.length === 0) return 0;
    const outcome = await store.posts.merge(
      stale.map((p) => p.id),
      (_id, current) => (current ? withSnapshots(current, accounts) : null),
    );
    return outcome.size;
  }

  return async function processObservations(
    observations: Observation[],
    options: { refresh: boolean; publishAll?: boolean; retry?: boolean; embedLater?: boolean; job?: string },
  ): Promise<ObservationJobResult> {
    const batch = groupBatch(observations);
    const points = metricPointsOf(observations);
    const accountOutcome = await mergeAccounts(
      batch.accounts,
      points.filter((p) => p.entity === 'account'),
    );
    // Both reads before the posts' write, side by side: snapshots and ratios go into the first write.
    const [linked, baseline] = await Promise.all([linkedAccountsOf(observations), batchBaselines(store, batch.posts)]);
    const postOutcome = await mergePosts(
      batch.posts,
      linked,
      baseline,
      points.filter((p) => p.entity === 'post'),
      options.job,
      options.retry === true,
    );

    // At once after the write, with the versions it replaced: a post may now match a saved search.
    await deps.changes?.record(postOutcome.values(), options.job);
    const writtenPosts = [...postOutcome.values()].map((o) => o.after);
    await attachSnapshots(writtenPosts, linked);

    // A retried job redoes the later steps for everything the batch touches, not only for what
    // this attempt changed (see `reread`).
    const retried = options.retry ? await reread(batch) : null;
    // Before the job completes, so a reader after `?wait=true` finds the new count mirrored.
    await deps.followers?.record(retried?.accounts ?? [...accountOutcome.values()].map((o) => o.after));
    const changedAccounts =
      retried?.accounts ??
      [...accountOutcome.values()].filter((o) => snapshotChanged(o.before, o.after)).map((o) => o.after);
    const authors = new Set<string>();
    for (const post of retried?.posts ?? []) {
      const author = linksOf(post).author;
      if (author) authors.add(author);
    }
    // Every account observed anew (a late observation too: it may be the point its growth reads)
    // gets its metrics recomputed, like the authors of posts whose counters moved. A point older
    // than a growth's nearest reach (5 days) may be one that growth reads at once: those accounts'
    // reads make the history current first.
    const history = new Set<string>();
    for (const point of points) {
      if (point.entity !== 'account') continue;
      authors.add(point.id);
      if (Date.parse(point.at) < Date.now() - FRESH_HISTORY_MS) history.add(point.id);
    }
    for (const { before, after } of postOutcome.values()) {
      if (!baselineFactsChanged(before, after)) continue;
      for (const record of [before, after]) {
        const author = record ? linksOf(record).author : null;
        if (author) authors.add(author);
      }
    }
    let fannedOut = 0;
    let baselinesUpdated = 0;
    let metricsUpdated = 0;
    let deferred = 0;
    if (deps.followUps && !options.refresh) {
      const work = { accounts: changedAccounts.map((a) => a.id), authors: [...authors], history: [...history] };
      await deps.followUps.add(work);
      deferred = work.accounts.length + work.authors.length;
    } else {
      ({ fannedOut, baselinesUpdated, metricsUpdated } = await followUps.runInline(
        changedAccounts,
        [...authors],
        writtenPosts,
        [...history],
        { recheck: options.retry === true },
      ));
    }
    // Authors whose posts' topics moved: their lookalike vectors follow (enrichment comes after the post).
    const topicAuthors = new Set<string>();
    for (const { before, after } of postOutcome.values()) {
      const author = topicsChanged(before, after) ? linksOf(after).author : null;
      if (author) topicAuthors.add(author);
    }
    const embedded = await embedChanged(
      options,
      retried?.accounts ?? [...accountOutcome.values()].map((o) => o.after),
      retried?.posts ?? writtenPosts,
      [...topicAuthors],
    );

    if (options.refresh) {
      await store.publish({ points, ...(options.publishAll ? { allMonths: true } : {}) });
    }
    return {
      accounts_written: accountOutcome.size,
      posts_written: postOutcome.size,
      fanned_out: fannedOut,
      baselines_updated: baselinesUpdated,
      metrics_updated: metricsUpdated,
      embedded,
      ...(deferred > 0 ? { deferred } : {}),
    };
  };

  /**
   * Step 5: records whose embedding text changed get new vectors: at once when the caller waits
   * for visibility (so `?wait=true` returns with semantic ranking in place), else through the
   * embeddings queue, so intake never waits on the model. Returns how many were embedded inline.
   * `lookalikeAccounts` (authors whose posts' topics changed) join the work's accounts: the work
   * brings every account it names its lookalike vector of now, embedding only those that need it.
   */
  async function embedChanged(
    options: { refresh: boolean; retry?: boolean; embedLater?: boolean },
    accounts: AccountRecord[],
    posts: PostRecord[],
    lookalikeAccounts: readonly string[],
  ): Promise<number> {
    const embeddings = deps.embeddings;
    if (!embeddings) return 0;
    const work: EmbeddingWork = {
      posts: posts.filter((p) => embeddings.records.postNeedsEmbedding(p)).map((p) => p.id),
      accounts: [
        ...new Set([
          ...accounts.filter((a) => embeddings.records.accountNeedsEmbedding(a)).map((a) => a.id),
          ...lookalikeAccounts,
        ]),
      ],
    };
    if (work.posts.length + work.accounts.length === 0) return 0;
    if (options.refresh && !options.embedLater) {
      try {
        return await embeddings.records.embed(work, { retry: options.retry === true });
      } catch (error) {
        // The model failing must not fail intake: the records are indexed; queue their vectors.
        embeddings.logger?.warn({ err: error }, 'inline embedding failed; queued instead');
      }
    }
    await embeddings.enqueue(work);
    return 0;
  }
}

/** The processing function of one batch of observations. */
export type ObservationProcessor = ReturnType<typeof createObservationProcessor>;
