import type { Logger } from 'pino';
import type { DeliverySigner } from '../../delivery/signer.ts';
import { isServablePost } from '../../domain/availability.ts';
import type { PostRecord, SearchedPost } from '../../domain/records.ts';
import type { RecordReads } from '../../engine/reads.ts';
import type { AlertMatches, AlertMatching, AlertQuery } from '../../engine/alerts.ts';
import type { AlertStore, SavedSearchRecord } from './alert-store.ts';
import type { ClaimedMatch, EventRef, PendingChange } from './pending-entries.ts';
import type { QueuedDelivery } from './delivery-batches.ts';
import { renderEventSummaries } from './event-summaries.ts';
import { eventIdOf } from './events.ts';
import type { SearchSet } from './search-set.ts';

/** What one pass did. */
export interface MatchPassResult {
  posts: number;
  searches: number;
  events: number;
  /** Pairs found matching that already matched before the search existed (never events). */
  baseline: number;
  /** Milliseconds in each phase: matching the posts as they are, their earlier versions, the events. */
  ms: { current: number; versions: number; events: number };
}

/**
 * Creates the matching pass: it takes every change recorded since the last pass. Changes matched at
 * their write (write-matching.ts) come with their pairs; plain ones (the writer had no matching,
 * or it failed, or a retried job left them) are read and matched here, for every saved search at
 * once, never a scan of the index. A pair is an event when the post matches now, has not matched
 * this search before, was written after the search was created, and its version before that
 * write did not match (so a post that matched when the search was created, and is re-observed
 * later, is not news; one that crosses a filter's bound, gains its enrichment or its vector, is).
 */
export function createMatchPass(deps: {
  store: Pick<AlertStore, 'claimPending' | 'settlePending' | 'unseen' | 'markSeen' | 'appendEvents' | 'storeSummaries'>;
  searches: SearchSet;
  engine: AlertMatching;
  reads: Pick<RecordReads, 'currentFollowers'>;
  signer: DeliverySigner;
  enqueueDeliveries: (deliveries: QueuedDelivery[]) => Promise<void>;
  logger?: Pick<Logger, 'warn'>;
  now?: () => Date;
}): (run: string) => Promise<MatchPassResult> {
  const now = deps.now ?? (() => new Date());

  return async function pass(run) {
    const { plain, matched } = await deps.store.claimPending(run);
    const empty = plain.size === 0 && matched.length === 0;
    const { searches, queries } = empty ? { searches: [], queries: [] } : await deps.searches.current();
    const result: MatchPassResult = {
      posts: new Set([...plain.keys(), ...matched.map((m) => m.post)]).size,
      searches: searches.length,
      events: 0,
      baseline: 0,
      ms: { current: 0, versions: 0, events: 0 },
    };
    const lap = stopwatch();
    if (searches.length === 0) {
      await deps.store.settlePending(run);
      return result;
    }
    const { matches: current, posts } =
      plain.size > 0
        ? await deps.engine.matchCurrent([...plain.keys()], queries)
        : { matches: new Map<string, Set<string>>(), posts: new Map<string, SearchedPost>() };
    result.ms.current = lap();

    const pairs = candidatePairs(searches, plain, current, matched);
    const unseen = await deps.store.unseen(new Map([...pairs.asked].map(([id, posts]) => [id, [...posts]])));
    const plainUnseen = new Map<string, string[]>();
    for (const [id, posts] of unseen) {
      const mine = posts.filter((post) => pairs.plain.get(id)?.has(post));
      if (mine.length > 0) plainUnseen.set(id, mine);
    }
    const baseline = await matchedBefore(plainUnseen, plain, queries);
    result.ms.versions = lap();

    // A pair is news when a write made it match (its version before did not); known otherwise.
    const eventsBySearch = new Map<string, string[]>();
    const seenBefore = new Map<string, string[]>();
    for (const [searchId, posts] of unseen) {
      const isNews = (post: string) =>
        pairs.news.get(searchId)?.has(post) === true ||
        (pairs.plain.get(searchId)?.has(post) === true && baseline.get(searchId)?.has(post) !== true);
      const fresh = posts.filter(isNews);
      const old = posts.filter((post) => !isNews(post));
      if (fresh.length > 0) eventsBySearch.set(searchId, fresh);
      if (old.length > 0) seenBefore.set(searchId, old);
    }
    for (const fresh of (await deps.store.markSeen(seenBefore)).values()) result.baseline += fresh.size;
    result.events = await emit(eventsBySearch, searches, posts, pairs.storedAt);
    result.ms.events = lap();
    await deps.store.settlePending(run);
    return result;
  };

  /** For candidates whose post existed before its write: which searches its earlier version matched. */
  async function matchedBefore(
    candidates: ReadonlyMap<string, readonly string[]>,
    changes: Map<string, PendingChange>,
    queries: readonly AlertQuery[],
  ): Promise<Map<string, Set<string>>> {
    // Each earlier version parsed once, however many searches ask about its post (null: none, or
    // not servable, which matched nothing).
    const parsed = new Map<string, PostRecord | null>();
    const versionOf = (id: string): PostRecord | null => {
      if (!parsed.has(id)) {
        const before = changes.get(id)!.before;
        const record = before === null ? null : (JSON.parse(before) as PostRecord);
        parsed.set(id, isServablePost(record) ? record : null);
      }
      return parsed.get(id)!;
    };
    const versions = new Map<string, PostRecord>();
    const asking = new Set<string>();
    for (const [searchId, posts] of candidates) {
      for (const id of posts) {
        const record = versionOf(id);
        if (record === null) continue;
        versions.set(id, record);
        asking.add(searchId);
      }
    }
    if (versions.size === 0) return new Map();
    return deps.engine.matchVersions(
      [...versions.values()],
      queries.filter((q) => asking.has(q.id)),
    );
  }

  /**
   * Queues and records the events; each pair once (appendEvents decides). Returns how many. A post
   * matched at its write has its summary stored already (at the write's time, which its events
   * carry); one the pass matched is rendered and stored now. Either way a post that matches many
   * searches is stored once: its events, and the deliveries, refer to that summary (alert-store.ts).
   */
  async function emit(
    eventsBySearch: Map<string, string[]>,
    searches: readonly SavedSearchRecord[],
    current: ReadonlyMap<string, SearchedPost>,
    storedAt: ReadonlyMap<string, string>,
  ): Promise<number> {
    if (eventsBySearch.size === 0) return 0;
    const at = now().toISOString();
    const posts = new Map<string, SearchedPost>();
    for (const ids of eventsBySearch.values())
      for (const id of ids) if (!storedAt.has(id) && current.has(id)) posts.set(id, current.get(id)!);
    const rendered = new Map(
      [...(await renderEventSummaries(posts.values(), deps))].map(([id, summary]) => [id, { at, summary }]),
    );
    const timeOf = (id: string) => storedAt.get(id) ?? rendered.get(id)?.at;
    const pairs = new Map<string, EventRef[]>();
    const deliveries: QueuedDelivery[] = [];
    for (const search of searches) {
      const refs = (eventsBySearch.get(search.id) ?? []).flatMap((post) => {
        const time = timeOf(post);
        return time === undefined ? [] : [{ post, at: time }];
      });
      if (refs.length === 0) continue;
      pairs.set(search.id, refs);
      if (search.webhook_endpoint_id)
        for (const ref of refs)
          deliveries.push({
            endpoint_id: search.webhook_endpoint_id,
            event_id: eventIdOf(search.id, ref.post),
            ref: { saved_search_id: search.id, ...ref },
          });
    }
    // The summaries first, then the deliveries (a job's id names its events: the same jobs queued
    // again after a crash are not queued twice), then the pairs marked and the events stored.
    await deps.store.storeSummaries(rendered);
    await deps.enqueueDeliveries(deliveries);
    const fresh = await deps.store.appendEvents(pairs);
    return [...fresh.values()].reduce((sum, ids) => sum + ids.size, 0);
  }
}

/** Milliseconds since it was made, then since the last call. */
function stopwatch(): () => number {
  let last = performance.now();
  return () => {
    const at = performance.now();
    const ms = Math.round(at - last);
    last = at;
    return ms;
  };
}

/**
 * A pass's candidate pairs (saved search → posts), for the searches that still exist: the plain
 * changes' (matching now, written since the search exists), and the matched changes' news and
 * known pairs. With the news pairs apart, and the time of each matched post's stored summary (its
 * latest change with news).
 */
function candidatePairs(
  searches: readonly SavedSearchRecord[],
  plainChanges: ReadonlyMap<string, PendingChange>,
  current: AlertMatches,
  matched: readonly ClaimedMatch[],
) {
  const exists = new Set(searches.map((s) => s.id));
  const asked = new Map<string, Set<string>>();
  const plain = new Map<string, Set<string>>();
  const news = new Map<string, Set<string>>();
  const storedAt = new Map<string, string>();
  for (const search of searches)
    for (const id of current.get(search.id) ?? [])
      if (plainChanges.get(id)!.at >= search.created_at) {
        add(asked, search.id, id);
        add(plain, search.id, id);
      }
  for (const change of matched) {
    for (const id of change.news)
      if (exists.has(id)) {
        add(asked, id, change.post);
        add(news, id, change.post);
      }
    for (const id of change.known) if (exists.has(id)) add(asked, id, change.post);
    if (change.news.length > 0 && change.at > (storedAt.get(change.post) ?? '')) storedAt.set(change.post, change.at);
  }
  return { asked, plain, news, storedAt };
}

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (set) set.add(value);
  else map.set(key, new Set([value]));
}
