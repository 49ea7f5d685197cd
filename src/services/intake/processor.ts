import { mintId } from '../../contract/ids.ts';
import type { Observation } from '../../contract/observations.ts';
import type { Logger } from 'pino';
import type { EmbeddingWork, RecordEmbeddings } from './record-embeddings.ts';
import type { IntakeStore } from '../../engine/intake-store.ts';
import {
  emptyAccount,
  emptyPost,
  isNewerVersion,
  snapshotOf,
  type AccountRecord,
  type PostRecord,
} from '../../domain/records.ts';
import { baselineFactsChanged, snapshotChanged } from '../../domain/changes.ts';
import { viewRatiosToBaseline } from '../../domain/derived.ts';
import type { KeyedLocks } from './keyed-locks.ts';
import {
  applyAccount,
  applyAccountEnrichment,
  applyAccountSnapshot,
  applyPost,
  applyPostEnrichment,
} from '../../domain/merge.ts';
import { linkedAccountIds, linksOf } from '../../domain/links.ts';
import type { ObservationJobResult } from '../../queues/registry.ts';

type Grouped<O> = Map<string, { platformId: string; observations: O[] }>;

function group<O>(items: O[], family: 'account' | 'post', key: (o: O) => string): Grouped<O> {
  const out: Grouped<O> = new Map();
  for (const o of items) {
    const platformId = key(o);
    const id = mintId(family, platformId);
    const entry = out.get(id) ?? { platformId, observations: [] };
    entry.observations.push(o);
    out.set(id, entry);
  }
  return out;
}

function accountIdsOf(observations: Observation[]): string[] {
  const ids = new Set<string>();
  for (const o of observations) {
    if (o.kind === 'account') ids.add(mintId('account', o.platform_id));
    else if (o.kind === 'account_enrichment') ids.add(mintId('account', o.account_platform_id));
  }
  return [...ids];
}

function postIdsOf(observations: Observation[]): string[] {
  const ids = new Set<string>();
  for (const o of observations) {
    if (o.kind === 'post') ids.add(mintId('post', o.platform_id));
    else if (o.kind === 'post_enrichment') ids.add(mintId('post', o.post_platform_id));
  }
  return [...ids];
}

/**
 * Applies one batch of validated observations to the engine. Steps, each safe under concurrent
 * batches (see README "Merging"):
 *
 * 1. merge accounts, then posts (optimistic concurrency per record);
 * 2. give each written post the current snapshot of every account it links to (read in real time
 *    after the post write, so an account written concurrently is either seen here or sees the
 *    post in its own fan-out);
 * 3. fan out each account whose summary changed to every post linking to it (after a refresh,
 *    shared with step 4: see followUp);
 * 4. recompute `view_ratio_to_account_baseline` for the authors whose posts changed, holding a
 *    per-author lock so that the last computation to write always read every earlier write;
 * 5. with `refresh`, make everything visible to search before returning.
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
}) {
  const { store, locks } = deps;

  async function mergeAccounts(observations: Observation[]) {
    const groups = group(
      observations.filter((o) => o.kind === 'account' || o.kind === 'account_enrichment'),
      'account',
      (o) => (o.kind === 'account' ? o.platform_id : (o as { account_platform_id: string }).account_platform_id),
    );
    return store.accounts.merge([...groups.keys()], (id, current) => {
      const entry = groups.get(id)!;
      let record = current ?? emptyAccount(id, entry.platformId);
      for (const o of entry.observations) {
        if (o.kind === 'account') record = applyAccount(record, o);
        else if (o.kind === 'account_enrichment') record = applyAccountEnrichment(record, o);
      }
      return record;
    });
  }

  /** Accounts the post observations link to, read up front so new posts get snapshots in their first write. */
  async function linkedAccountsOf(observations: Observation[]): Promise<Map<string, AccountRecord>> {
    const platformIds = new Set<string>();
    for (const o of observations) {
      if (o.kind !== 'post' || o.status !== 'available') continue;
      platformIds.add(o.author_platform_id);
      for (const c of o.coauthor_platform_ids) platformIds.add(c);
      if (o.audio?.attribution_account_platform_id) platformIds.add(o.audio.attribution_account_platform_id);
    }
    return store.accounts.get([...platformIds].map((p) => mintId('account', p)));
  }

  function withSnapshots(record: PostRecord, accounts: Map<string, AccountRecord>): PostRecord {
    let next = record;
    for (const a of linkedAccountIds(record)) {
      const account = accounts.get(a);
      if (account) next = applyAccountSnapshot(next, a, snapshotOf(account));
    }
    return next;
  }

  async function mergePosts(observations: Observation[]) {
    const accounts = await linkedAccountsOf(observations);
    const groups = group(
      observations.filter((o) => o.kind === 'post' || o.kind === 'post_enrichment'),
      'post',
      (o) => (o.kind === 'post' ? o.platform_id : (o as { post_platform_id: string }).post_platform_id),
    );
    return store.posts.merge([...groups.keys()], (id, current) => {
      const entry = groups.get(id)!;
      let record = current ?? emptyPost(id, entry.platformId);
      for (const o of entry.observations) {
        if (o.kind === 'post') record = applyPost(record, o);
        else if (o.kind === 'post_enrichment') record = applyPostEnrichment(record, o);
      }
      return withSnapshots(record, accounts);
    });
  }

  /** Step 2: attach the newest snapshots of linked accounts to the given posts. */
  async function attachSnapshots(posts: PostRecord[]): Promise<number> {
    const linked = [...new Set(posts.flatMap(linkedAccountIds))];
    if (linked.length === 0) return 0;
    const accounts = await store.accounts.get(linked);
    const stale = posts.filter((p) => hasOlderSnapshot(p, accounts));
    if (stale.length === 0) return 0;
    const outcome = await store.posts.merge(
      stale.map((p) => p.id),
      (_id, current) => (current ? withSnapshots(current, accounts) : null),
    );
    return outcome.size;
  }

  /** Step 3: copy changed account snapshots into every post that links to them. */
  async function fanOut(changed: AccountRecord[], writtenPosts: PostRecord[]): Promise<number> {
    const accounts = new Map(changed.map((a) => [a.id, a]));
    // Posts this batch wrote already hold these accounts' snapshots (steps 1–2), and a held
    // snapshot only ever moves forward: reading them again would only confirm it.
    const current = new Set(writtenPosts.filter((p) => !hasOlderSnapshot(p, accounts)).map((p) => p.id));
    let written = 0;
    for await (const page of store.postIdsLinkedTo([...accounts.keys()])) {
      const ids = page.filter((id) => !current.has(id));
      if (ids.length === 0) continue;
      const outcome = await store.posts.merge(ids, (_id, record) => (record ? withSnapshots(record, accounts) : null));
      written += outcome.size;
    }
    return written;
  }

  /** True when the post links to one of `accounts` and holds an older snapshot of it (or none). */
  function hasOlderSnapshot(post: PostRecord, accounts: Map<string, AccountRecord>): boolean {
    return linkedAccountIds(post).some((a) => {
      const account = accounts.get(a);
      const held = post.accounts[a];
      return account !== undefined && (!held || isNewerVersion(snapshotOf(account).version, held.version));
    });
  }

  /** Step 4: the baseline metric of the given authors' posts, recomputed; call under their locks, after a refresh. */
  async function recomputeBaselines(authorIds: string[]): Promise<number> {
    const facts = await store.authorPostFacts(authorIds);
    const updates = new Map<string, number | null>();
    for (const posts of facts.values()) {
      const ratios = viewRatiosToBaseline(posts);
      for (const post of posts) {
        const ratio = ratios.get(post.id) ?? null;
        if (ratio !== post.viewRatioToAccountBaseline) updates.set(post.id, ratio);
      }
    }
    if (updates.size === 0) return 0;
    const outcome = await store.posts.merge([...updates.keys()], (id, current) =>
      current ? { ...current, view_ratio_to_account_baseline: updates.get(id) ?? null } : null,
    );
    return outcome.size;
  }

  /**
   * Steps 3 and 4 with one refresh for both: the work that reads through search (fan-out looks
   * up linked posts, baselines an author's posts) needs every earlier write visible. Baselines hold
   * their authors' locks, and the refresh runs after taking them, so the last computation to write
   * has read every earlier one's writes; fan-out only needs a refresh after this batch's account
   * writes, which the same refresh is. A further lock group (authors another batch held) refreshes
   * again. Nothing to follow up: no refresh at all.
   */
  async function followUp(
    changedAccounts: AccountRecord[],
    authors: string[],
    writtenPosts: PostRecord[],
  ): Promise<{ fannedOut: number; baselinesUpdated: number }> {
    let fannedOut = 0;
    let baselinesUpdated = 0;
    let fanOutDone = changedAccounts.length === 0;
    const fanOutOnce = async () => {
      if (fanOutDone) return;
      fanOutDone = true;
      fannedOut = await fanOut(changedAccounts, writtenPosts);
    };
    if (authors.length > 0) {
      await locks.forEachLocked(authors, async (locked) => {
        await store.refresh();
        await fanOutOnce();
        baselinesUpdated += await recomputeBaselines(locked);
      });
    } else if (!fanOutDone) {
      await store.refresh();
      await fanOutOnce();
    }
    return { fannedOut, baselinesUpdated };
  }

  return async function processObservations(
    observations: Observation[],
    options: { refresh: boolean; retry?: boolean; embedLater?: boolean },
  ): Promise<ObservationJobResult> {
    const accountOutcome = await mergeAccounts(observations);
    const postOutcome = await mergePosts(observations);

    const writtenPosts = [...postOutcome.values()].map((o) => o.after);
    await attachSnapshots(writtenPosts);

    // A retried job may have written its records before failing: its merges are now no-ops, so
    // redo the follow-up steps for everything the batch touches instead of only what changed.
    const changedAccounts = options.retry
      ? [...(await store.accounts.get(accountIdsOf(observations))).values()]
      : [...accountOutcome.values()]
          .filter((o) => snapshotChanged(o.before, o.after))
          .map((o) => o.after);
    const authors = new Set<string>();
    if (options.retry) {
      for (const post of (await store.posts.get(postIdsOf(observations))).values()) {
        const author = linksOf(post).author;
        if (author) authors.add(author);
      }
    }
    for (const { before, after } of postOutcome.values()) {
      if (!baselineFactsChanged(before, after)) continue;
      for (const record of [before, after]) {
        const author = record ? linksOf(record).author : null;
        if (author) authors.add(author);
      }
    }
    const { fannedOut, baselinesUpdated } = await followUp(changedAccounts, [...authors], writtenPosts);
    const embedded = await embedChanged(observations, options, [...accountOutcome.values()].map((o) => o.after), writtenPosts);

    if (options.refresh) {
      await store.publish();
    }
    return {
      accounts_written: accountOutcome.size,
      posts_written: postOutcome.size,
      fanned_out: fannedOut,
      baselines_updated: baselinesUpdated,
      embedded,
    };
  };

  /**
   * Step 5: records whose embedding text changed get new vectors: at once when the caller waits
   * for visibility (so `?wait=true` returns with semantic ranking in place), else through the
   * embeddings queue, so intake never waits on the model. Returns how many were embedded inline.
   */
  async function embedChanged(
    observations: Observation[],
    options: { refresh: boolean; retry?: boolean; embedLater?: boolean },
    accounts: AccountRecord[],
    posts: PostRecord[],
  ): Promise<number> {
    const embeddings = deps.embeddings;
    if (!embeddings) return 0;
    if (options.retry) {
      // Earlier attempts may have written the records already: look at all of them.
      accounts = [...(await store.accounts.get(accountIdsOf(observations))).values()];
      posts = [...(await store.posts.get(postIdsOf(observations))).values()];
    }
    const work: EmbeddingWork = {
      posts: posts.filter((p) => embeddings.records.postNeedsEmbedding(p)).map((p) => p.id),
      accounts: accounts.filter((a) => embeddings.records.accountNeedsEmbedding(a)).map((a) => a.id),
    };
    if (work.posts.length + work.accounts.length === 0) return 0;
    if (options.refresh && !options.embedLater) {
      try {
        return await embeddings.records.embed(work);
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
