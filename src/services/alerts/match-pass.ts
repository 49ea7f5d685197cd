import type { Logger } from 'pino';
import type { DeliverySigner } from '../../delivery/signer.ts';
import { isServablePost } from '../../domain/availability.ts';
import type { PostRecord, SearchedPost } from '../../domain/records.ts';
import { snapshotAccountsOf, withCurrentFollowers } from '../../domain/snapshots.ts';
import type { RecordReads } from '../../engine/reads.ts';
import type { AlertMatching, AlertQuery } from '../../engine/alerts.ts';
import type { PostSearch } from '../../query/search-request.ts';
import { renderPostSummary } from '../../render/post.ts';
import type { AlertStore, PendingChange, SavedSearchRecord } from './alert-store.ts';
import type { QueuedDelivery } from './delivery-batches.ts';
import { eventIdOf, matchedEventBody } from './events.ts';
import { decodeQueryVector, encodeQueryVector } from './query-vector.ts';

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

/** The alert query of a stored saved search. */
function queryOf(record: SavedSearchRecord): AlertQuery {
  return {
    id: record.id,
    search: JSON.parse(record.search) as PostSearch,
    vector: record.vector ? decodeQueryVector(record.vector) : null,
  };
}

/**
 * Creates the matching pass: it takes every post written since the last pass and asks, for every
 * saved search at once, which of them match now (one engine search per 50 saved searches and
 * 1,000 posts, never a scan of the index). A pair is an event when the post matches now, has not
 * matched this search before, was written after the search was created, and its version before
 * that write did not match (so a post that matched when the search was created, and is
 * re-observed later, is not news; one that crosses a filter's bound, gains its enrichment or its
 * vector, is).
 */
export function createMatchPass(deps: {
  store: Pick<
    AlertStore,
    | 'claimPending'
    | 'settlePending'
    | 'allSearches'
    | 'searchesVersion'
    | 'unseen'
    | 'markSeen'
    | 'appendEvents'
    | 'updateSearchVector'
  >;
  engine: AlertMatching;
  reads: Pick<RecordReads, 'currentFollowers'>;
  signer: DeliverySigner;
  /** Embeds the query of a saved search created while the model was not ready. */
  embedQuery?: ((text: string) => Promise<ArrayLike<number> | null>) | undefined;
  enqueueDeliveries: (deliveries: QueuedDelivery[]) => Promise<void>;
  logger?: Pick<Logger, 'warn'>;
  now?: () => Date;
}): (run: string) => Promise<MatchPassResult> {
  const now = deps.now ?? (() => new Date());
  // The saved searches as of a version of their set: 10,000 of them are ~15 MB to read, and they
  // change far less often than passes run.
  let cached: { version: string; searches: SavedSearchRecord[]; queries: AlertQuery[] | null } | null = null;

  async function currentSearches(): Promise<SavedSearchRecord[]> {
    const version = await deps.store.searchesVersion();
    if (cached?.version !== version) cached = { version, searches: await deps.store.allSearches(), queries: null };
    return cached.searches;
  }

  // Each saved search's query object, kept while its stored search and vector are unchanged: the
  // engine compiles a query once per object (language detection, stemming: ~0.8 ms each), and a
  // new version of the set (any search created or deleted) would otherwise recompile them all.
  let known = new Map<string, { stored: string; query: AlertQuery }>();

  async function queriesOf(searches: SavedSearchRecord[]): Promise<AlertQuery[]> {
    const kept = new Map<string, { stored: string; query: AlertQuery }>();
    const queries = searches.map((record) => {
      const stored = `${record.search}\n${record.vector ?? ''}`;
      const previous = known.get(record.id);
      const query = previous?.stored === stored ? previous.query : queryOf(record);
      kept.set(record.id, { stored, query });
      return query;
    });
    known = kept;
    if (!deps.embedQuery) return queries;
    for (const query of queries) {
      if (query.vector || query.search.query === null) continue;
      const vector = await deps.embedQuery(query.search.query).catch(() => null);
      if (!vector) continue;
      query.vector = vector;
      await deps.store.updateSearchVector(query.id, encodeQueryVector(vector));
    }
    return queries;
  }

  return async function pass(run) {
    const changes = await deps.store.claimPending(run);
    const searches = changes.size > 0 ? await currentSearches() : [];
    const result: MatchPassResult = {
      posts: changes.size,
      searches: searches.length,
      events: 0,
      baseline: 0,
      ms: { current: 0, versions: 0, events: 0 },
    };
    const lap = (() => {
      let last = performance.now();
      return () => {
        const at = performance.now();
        const ms = Math.round(at - last);
        last = at;
        return ms;
      };
    })();
    if (searches.length === 0) {
      await deps.store.settlePending(run);
      return result;
    }
    const queries = cached?.searches === searches && cached.queries ? cached.queries : await queriesOf(searches);
    if (cached?.searches === searches) cached.queries = queries;
    lap();
    const { matches: current, posts } = await deps.engine.matchCurrent([...changes.keys()], queries);
    result.ms.current = lap();

    // Candidate pairs: matching now, written since the search exists, not matched before.
    const matched = new Map<string, string[]>();
    for (const search of searches) {
      const posts = [...(current.get(search.id) ?? [])].filter((id) => changes.get(id)!.at >= search.created_at);
      if (posts.length > 0) matched.set(search.id, posts);
    }
    const candidates = await deps.store.unseen(matched);
    const baseline = await matchedBefore(candidates, changes, queries);
    result.ms.versions = lap();

    const eventsBySearch = new Map<string, string[]>();
    const known = new Map<string, string[]>();
    for (const [searchId, posts] of candidates) {
      const before = baseline.get(searchId) ?? new Set();
      known.set(
        searchId,
        posts.filter((id) => before.has(id)),
      );
      const news = posts.filter((id) => !before.has(id));
      if (news.length > 0) eventsBySearch.set(searchId, news);
    }
    for (const fresh of (await deps.store.markSeen(known)).values()) result.baseline += fresh.size;
    result.events = await emit(eventsBySearch, searches, posts);
    result.ms.events = lap();
    await deps.store.settlePending(run);
    return result;
  };

  /** For candidates whose post existed before its write: which searches its earlier version matched. */
  async function matchedBefore(
    candidates: Map<string, string[]>,
    changes: Map<string, PendingChange>,
    queries: AlertQuery[],
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
   * Renders, queues and records the events; each pair once (appendEvents decides). Returns how many.
   * A post that matches many searches is rendered and stored once: its events refer to that
   * summary (alert-store.ts); only the webhook deliveries carry whole bodies.
   */
  async function emit(
    eventsBySearch: Map<string, string[]>,
    searches: SavedSearchRecord[],
    current: ReadonlyMap<string, SearchedPost>,
  ): Promise<number> {
    if (eventsBySearch.size === 0) return 0;
    const posts = new Map<string, SearchedPost>();
    for (const ids of eventsBySearch.values())
      for (const id of ids) if (current.has(id)) posts.set(id, current.get(id)!);
    // Posts keep their authors' counters coarsened: the events show the current ones.
    const followers = await deps.reads.currentFollowers(snapshotAccountsOf(posts.values()));
    const summaries = new Map<string, string>();
    for (const [id, post] of posts)
      if (isServablePost(post))
        summaries.set(id, JSON.stringify(renderPostSummary(withCurrentFollowers(post, followers), deps.signer)));
    const at = now().toISOString();
    const pairs = new Map<string, string[]>();
    const deliveries: QueuedDelivery[] = [];
    for (const search of searches) {
      const postIds = (eventsBySearch.get(search.id) ?? []).filter((id) => summaries.has(id));
      if (postIds.length === 0) continue;
      pairs.set(search.id, postIds);
      if (search.webhook_endpoint_id)
        for (const postId of postIds)
          deliveries.push({
            endpoint_id: search.webhook_endpoint_id,
            event_id: eventIdOf(search.id, postId),
            body: matchedEventBody(search.id, postId, at, summaries.get(postId)!),
          });
    }
    // Deliveries first (a job's id names its events: the same jobs queued again after a crash are
    // not queued twice), then the pairs marked and the events stored for pulling.
    await deps.enqueueDeliveries(deliveries);
    const fresh = await deps.store.appendEvents(pairs, summaries, at);
    return [...fresh.values()].reduce((sum, ids) => sum + ids.size, 0);
  }
}
