import type { Logger } from 'pino';
import type { MediaUrlSigner } from '../../media/url-signer.ts';
import { isServablePost } from '../../domain/availability.ts';
import type { PostRecord, PostWrite, PostWriteRecorder } from '../../domain/records.ts';
import { snapshotAccountsOf, withCurrentFollowers } from '../../domain/snapshots.ts';
import type { AlertMatching, AlertQuery } from '../../engine/alerts.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { renderPostSummary } from '../../render/post.ts';
import { NEWS_WINDOW_MS, type EventStore, type NewsFor, type NewsPost } from './event-store.ts';
import type { PendingStore } from './pending-store.ts';
import type { SavedSearchRecord } from './search-store.ts';
import type { SearchSet } from './search-set.ts';
import type { VolumeNews, VolumeWatch } from './volume.ts';

/** What one matching of writes did. */
export interface MatchResult {
  /** Posts that could be news to some saved search (servable, written within its window). */
  posts: number;
  searches: number;
  events: number;
  /** Events not recorded: their search held its limit of events. */
  dropped: number;
}

/** Matches writes against every saved search and records their events. */
export type MatchWrites = (writes: readonly PostWrite[]) => Promise<MatchResult>;

/** When the post was published (epoch ms): the window a volume rule counts it in. */
const postedAt = (post: PostRecord) => Date.parse(post.raw!.v.posted_at);

/** When the post was first written (epoch ms); a post without the stamp is never news. */
const firstSeen = (post: PostRecord) => (post.first_seen_at ? Date.parse(post.first_seen_at) : -Infinity);

/**
 * Creates the one matching of posts against the saved searches, run by every writer as it writes
 * (intake, embeddings: the records in hand, their texts' analyses still remembered) and by the
 * recovery pass for writes that could not be matched then. A pair (saved search, post) is news
 * when the post matches the search (its own engine query: the percolator, alert-matching.ts), was
 * first written after the search was created and within the last 30 days, and its version before
 * this write did not match (a post that comes to match: new, enriched, given its vector, crossing
 * a filter's bound); the event store records each pair once, however often it is news.
 *
 * Why first written after the search: a post the search could have found when it was created is
 * never news, and no pair of a post older than 30 days need be remembered to keep that promise
 * (docs/capacity.md, "Alerts in Redis").
 *
 * The news goes where each search's `events` say: `posts`, a `post.matched` event per pair (the
 * event store); `volume`, the pair counted in its post's window by the search's volume rule,
 * which records `volume.exceeded` and `volume.spiked` in the same event store (volume.ts).
 */
export function createMatchWrites(deps: {
  searches: SearchSet;
  engine: AlertMatching;
  reads: Pick<RecordReads, 'currentFollowers'>;
  signer: MediaUrlSigner;
  events: Pick<EventStore, 'record'>;
  volume: VolumeWatch;
  now?: () => number;
}): MatchWrites {
  const now = deps.now ?? Date.now;
  return async function matchWrites(writes) {
    const result: MatchResult = { posts: 0, searches: 0, events: 0, dropped: 0 };
    const { searches, queries } = await deps.searches.current();
    if (searches.length === 0 || writes.length === 0) return result;
    const time = now();
    const at = new Date(time).toISOString();
    const created = new Map(searches.map((s) => [s.id, Date.parse(s.created_at)]));
    // A loop, not a spread: saved searches may number past what a call's arguments hold.
    let oldest = Infinity;
    for (const createdAt of created.values()) oldest = Math.min(oldest, createdAt);
    oldest = Math.max(oldest, time - NEWS_WINDOW_MS);
    // The latest write of each post, with the version before its first (one job writes a post once).
    const byPost = new Map<string, PostWrite>();
    for (const write of writes) {
      const first = byPost.get(write.after.id);
      byPost.set(write.after.id, { before: first ? first.before : write.before, after: write.after });
    }
    const afters = [...byPost.values()].map((w) => w.after).filter((p) => isServablePost(p) && firstSeen(p) >= oldest);
    result.posts = afters.length;
    if (afters.length === 0) return result;
    const current = await deps.engine.match(afters, queries);

    // Per post, the searches it matches that were created before it was first written.
    const matching = new Map<string, string[]>();
    for (const [search, posts] of current)
      for (const post of posts) {
        if (firstSeen(byPost.get(post)!.after) < created.get(search)!) continue;
        const list = matching.get(post);
        if (list) list.push(search);
        else matching.set(post, [search]);
      }
    if (matching.size === 0) return result;
    const befores = [...matching.keys()].map((id) => byPost.get(id)!.before).filter(isServablePost);
    const asking = new Set([...matching.values()].flat());
    const before =
      befores.length > 0
        ? await deps.engine.match(
            befores,
            queries.filter((q) => asking.has(q.id)),
          )
        : new Map<string, Set<string>>();

    const news = new Map<string, string[]>();
    for (const [post, ids] of matching)
      for (const id of ids) {
        if (before.get(id)?.has(post)) continue;
        const list = news.get(id);
        if (list) list.push(post);
        else news.set(id, [post]);
      }
    if (news.size === 0) return result;
    const bySearch = new Map(searches.map((s) => [s.id, s]));
    const [told, watched] = await Promise.all([
      recordPostEvents(
        [...news].filter(([id]) => bySearch.get(id)!.events.includes('posts')),
        { byPost, bySearch, at, time },
      ),
      watchVolume([...news], { byPost, bySearch, queries, time }),
    ]);
    result.searches = told.searches;
    result.events = told.events + watched.events;
    result.dropped = told.dropped + watched.dropped;
    return result;
  };

  /** The `post.matched` events of `news` (pairs by search), each post's summary rendered once. */
  async function recordPostEvents(
    news: ReadonlyArray<[string, string[]]>,
    job: { byPost: Map<string, PostWrite>; bySearch: Map<string, SavedSearchRecord>; at: string; time: number },
  ) {
    const out = { searches: 0, events: 0, dropped: 0 };
    if (news.length === 0) return out;
    const withNews = new Set(news.flatMap(([, ids]) => ids));
    const summaries = await renderSummaries(
      [...withNews].map((id) => job.byPost.get(id)!.after),
      deps,
    );
    const posts: NewsPost[] = [...summaries].map(([post, summary]) => ({
      post,
      at: job.at,
      firstSeen: firstSeen(job.byPost.get(post)!.after),
      summary,
    }));
    const pairs: NewsFor[] = news.map(([id, ids]) => ({
      search: job.bySearch.get(id)!,
      posts: ids.filter((post) => summaries.has(post)),
    }));
    const recorded = await deps.events.record(posts, pairs, job.time);
    out.searches = recorded.size;
    for (const { recorded: n, dropped } of recorded.values()) {
      out.events += n;
      out.dropped += dropped;
    }
    return out;
  }

  /** The news of searches whose volume rule gives events, counted into their posts' windows. */
  async function watchVolume(
    news: ReadonlyArray<[string, string[]]>,
    job: {
      byPost: Map<string, PostWrite>;
      bySearch: Map<string, SavedSearchRecord>;
      queries: AlertQuery[];
      time: number;
    },
  ) {
    const watched: VolumeNews[] = [];
    const queryOf = new Map(job.queries.map((q) => [q.id, q.search]));
    for (const [id, ids] of news) {
      const search = job.bySearch.get(id)!;
      if (!search.volume || !search.events.includes('volume')) continue;
      watched.push({
        search: { ...search, volume: search.volume },
        query: queryOf.get(id)!,
        posts: ids.map((post) => ({ id: post, postedAt: postedAt(job.byPost.get(post)!.after) })),
      });
    }
    return watched.length === 0 ? { events: 0, dropped: 0 } : deps.volume(watched, job.time);
  }
}

/**
 * The post summaries (spec 2.4, JSON) events show, by post id: servable posts only, without their
 * per-media enrichment, their authors' follower counts current (posts keep them coarsened), one
 * read of the followers for all.
 */
async function renderSummaries(
  posts: readonly PostRecord[],
  deps: { reads: Pick<RecordReads, 'currentFollowers'>; signer: MediaUrlSigner },
): Promise<Map<string, string>> {
  const servable = posts.filter((post) => isServablePost(post));
  const followers = await deps.reads.currentFollowers(snapshotAccountsOf(servable));
  return new Map(
    servable.map(({ media_enrichment: _media, ...post }) => [
      post.id,
      JSON.stringify(renderPostSummary(withCurrentFollowers(post, followers), deps.signer)),
    ]),
  );
}

/**
 * Creates what writers tell of their posts (PostWriteRecorder): each write is matched at once
 * ({@link createMatchWrites}). A job's posts are first noted as its intent (before its engine
 * write), and its intent settled once they are matched: an attempt failing between its write and
 * its matching (Redis timing out under load, the worker killed) leaves them to its retry, whose
 * merge finds nothing left to write and hands them to the recovery pass (without intents one run
 * lost 2,852 events: bench/alerts.md). A write that cannot be matched (the
 * engine unreachable for the index's definition) is left to that pass too. While no saved search
 * exists a job pays one count before its write and one read of the searches' version and one
 * script call after it.
 */
export function createPostWriteRecorder(deps: {
  matchWrites: MatchWrites;
  pending: Pick<PendingStore, 'intend' | 'settle' | 'leave'>;
  searchCount: () => Promise<number>;
  requestRecovery: () => Promise<void>;
  logger?: Pick<Logger, 'warn'> | undefined;
}): PostWriteRecorder {
  const idsOf = (writes: Iterable<PostWrite>) => [...new Set([...writes].map((w) => w.after.id))];
  return {
    async intend(job, writes) {
      const posts = idsOf(writes);
      if (posts.length === 0 || (await deps.searchCount()) === 0) return;
      await deps.pending.intend(job, posts);
    },

    async record(writes, job) {
      const list = [...writes];
      const posts = idsOf(list);
      try {
        await deps.matchWrites(list);
      } catch (error) {
        // An outage is logged once by its connection (src/start/connections.ts); anything else here.
        if (!(error instanceof ServiceUnavailableError))
          deps.logger?.warn(
            { err: error },
            'matching saved searches at the write failed: the posts are left to the recovery pass',
          );
        await deps.pending.leave(posts);
        if (job !== undefined) await deps.pending.settle(job, []);
        await deps.requestRecovery();
        return;
      }
      if (job !== undefined && (await deps.pending.settle(job, posts)) > 0) await deps.requestRecovery();
    },
  };
}
