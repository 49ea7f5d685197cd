import { luaScript } from '../../internal/lua-script.ts';
import type { AlertRedis } from './alert-redis.ts';
import type { DeliveryStore } from './delivery-store.ts';
import { eventIdOf, matchedEventBody } from './events.ts';
import { NUMBERS, replyOf } from '../../internal/redis-replies.ts';

/**
 * How long a post is news: a pair (saved search, post) can become an event only within this long
 * of the post's first write, and each search's events are kept for pulling as long. Pairs whose
 * post is older are never news again, so what gives a pair one event forgets them.
 */
export const NEWS_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
/** Summaries outlive the events referring to them by a day (a page read at the window's edge). */
const SUMMARY_TTL_S = NEWS_WINDOW_MS / 1000 + 24 * 60 * 60;
/** Saved searches whose news one script call records. */
const SEARCHES_PER_CALL = 500;
/** How long a delivery waits in its endpoint's outbox at most (webhook-delivery.ts). */
export const DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** One post with news, as its events show it. */
export interface NewsPost {
  post: string;
  /** The time of the write that made it match: its events' `created_at`. */
  at: string;
  /** When the service first wrote the post (epoch ms): its pairs are forgotten 30 days after. */
  firstSeen: number;
  /** The post's summary (JSON), stored once for every saved search it is news to. */
  summary: string;
}

/** A saved search and the posts that are news to it. */
export interface NewsFor {
  search: { id: string; owner: string; webhook_endpoint_id: string | null };
  posts: readonly string[];
}

/** What recording did, per saved search: events recorded, and matches dropped at the search's limit. */
export type Recorded = Map<string, { recorded: number; dropped: number }>;

/** One event as the pull endpoint and the deliveries send it (the webhook body). */
export interface StoredEvent {
  /** Stream entry id: the pull cursor's position. */
  position: string;
  body: string;
}

/**
 * Records one job's events (KEYS: the deliveries' due set, the summaries of its posts, then per
 * saved search its news set, event stream, hash and its endpoint's outbox; ARGV: now, the oldest
 * first write still news, the events a search may hold, the summaries' time to live, the oldest
 * delivery kept, how many posts, each post's id, time, first write and summary, then per search
 * its id, its due member ('' without an endpoint), how many posts and each one's index and event
 * id). Per search, in one step: pairs and events past the window go; each post not yet in its news
 * set is recorded (its summary stored, the first time a search needs it) and queued for delivery,
 * unless the search holds its limit of events, when it is counted as dropped. A search deleted
 * meanwhile is skipped, so none of its keys come back. Returns, per search, recorded and dropped.
 */
const RECORD = luaScript(`
local now, oldest, limit, ttl, outboxOldest = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local posts = tonumber(ARGV[6])
local stored, out = {}, {}
local a, k = 7 + 4 * posts, 2 + posts
while a <= #ARGV do
  local news, events, search, outbox = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local id, member, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  k, a = k + 4, a + 3
  local recorded, dropped, last = 0, 0, nil
  if redis.call('exists', search) == 1 then
    redis.call('zremrangebyscore', news, '-inf', '(' .. oldest)
    redis.call('xtrim', events, 'MINID', oldest)
    local kept = redis.call('xlen', events)
    for j = 0, n - 1 do
      local p, event = tonumber(ARGV[a + 2 * j]), ARGV[a + 2 * j + 1]
      local o = 7 + 4 * (p - 1)
      local post, at = ARGV[o], ARGV[o + 1]
      if not redis.call('zscore', news, post) then
        if kept >= limit then dropped = dropped + 1 else
          if not stored[p] then
            redis.call('set', KEYS[1 + p], ARGV[o + 3], 'EX', ttl)
            stored[p] = true
          end
          redis.call('zadd', news, ARGV[o + 2], post)
          redis.call('xadd', events, '*', 'post', post, 'at', at)
          if member ~= '' then redis.call('xadd', outbox, '*', 'event', event, 'search', id, 'post', post, 'at', at) end
          kept, recorded = kept + 1, recorded + 1
          if last == nil or at > last then last = at end
        end
      end
    end
    if recorded > 0 then
      redis.call('pexpire', news, ttl * 1000)
      redis.call('pexpire', events, ttl * 1000)
      redis.call('hset', search, 'last_match_at', last)
      if member ~= '' then
        redis.call('xtrim', outbox, 'MINID', outboxOldest)
        redis.call('zadd', KEYS[1], 'NX', now, member)
      end
    end
    if dropped > 0 then redis.call('hincrby', search, 'events_dropped', dropped) end
  end
  a = a + 2 * n
  out[#out + 1] = recorded
  out[#out + 1] = dropped
end
return out`);

/**
 * The saved searches' events: per search a stream of `(post, at)` entries (and of `(event, body)`
 * entries for its volume events, volume-store.ts), each `(post, at)` referring to
 * `summary:{post}:{at ms}`, the post's summary as of that write, stored once however many searches
 * it is news to, and a set of the posts it holds events of (scored by the post's first write), so
 * that a pair gives one event. Both hold at most `limit` events and 30 days ({@link NEWS_WINDOW_MS}):
 * a post first written longer ago is never news again, and a search that recorded its limit within
 * 30 days drops further matches (counted on it) until older events age out. Every structure is
 * bounded by the limit, whatever the corpus or the time (docs/capacity.md).
 */
export function createEventStore(
  store: AlertRedis,
  deps: { deliveries: Pick<DeliveryStore, 'due' | 'memberOf' | 'outboxOf'>; limit: number },
) {
  const { redis, key } = store;
  const eventsOf = (search: string) => key('search', search, 'events');
  const newsOf = (search: string) => key('search', search, 'news');
  const summaryOf = (post: string, at: string) => key('summary', post, String(Date.parse(at)));

  return {
    /** The keys of `search`'s events, deleted with it. */
    keysOf: (search: string) => [eventsOf(search), newsOf(search)],

    /**
     * Records a job's news: for each saved search, the pairs not yet recorded become events,
     * queued to its endpoint, each post's summary stored once (one script call for the job).
     */
    record: async (posts: readonly NewsPost[], news: readonly NewsFor[], now = Date.now()): Promise<Recorded> => {
      const out: Recorded = new Map();
      const byPost = new Map(posts.map((p) => [p.post, p]));
      const asked = news.filter((n) => n.posts.length > 0);
      // A script per SEARCHES_PER_CALL searches: each call stays short for Redis (which runs one
      // script at a time) and small to send (at 10,000 saved searches one call for a job's news was
      // ~120,000 arguments, past what a call can spread).
      for (let from = 0; from < asked.length; from += SEARCHES_PER_CALL) {
        const chunk = asked.slice(from, from + SEARCHES_PER_CALL);
        const used = [...new Set(chunk.flatMap((n) => n.posts))].map((id) => byPost.get(id)!);
        const indexOf = new Map(used.map((p, i) => [p.post, i + 1]));
        const keys = [deps.deliveries.due, ...used.map((p) => summaryOf(p.post, p.at))];
        const args: Array<string | number> = [
          now,
          now - NEWS_WINDOW_MS,
          deps.limit,
          SUMMARY_TTL_S,
          now - DELIVERY_WINDOW_MS,
          used.length,
        ];
        for (const p of used) args.push(p.post, p.at, p.firstSeen, p.summary);
        for (const { search, posts: ids } of chunk) {
          const endpoint = search.webhook_endpoint_id;
          const hash = key('search', search.id);
          keys.push(newsOf(search.id), eventsOf(search.id), hash, endpoint ? deps.deliveries.outboxOf(endpoint) : hash);
          args.push(search.id, endpoint ? deps.deliveries.memberOf(search.owner, endpoint) : '', ids.length);
          for (const id of ids) args.push(indexOf.get(id)!, eventIdOf(search.id, id));
        }
        const counts = replyOf(await store.evalsha(RECORD, keys, args), NUMBERS);
        chunk.forEach(({ search }, i) => out.set(search.id, { recorded: counts[2 * i]!, dropped: counts[2 * i + 1]! }));
      }
      return out;
    },

    /**
     * Up to `limit` events of `search` after stream position `after` (null: from the oldest kept),
     * as their bodies, none older than {@link NEWS_WINDOW_MS}; `next`: the position after the last
     * entry read, shown or not (an entry whose summary is gone, evicted by the operator's memory
     * policy, is skipped, never read again); `more`: whether entries follow it.
     */
    page: (search: string, after: string | null, limit: number) =>
      store.run(async () => {
        const oldest = Date.now() - NEWS_WINDOW_MS;
        const from = after && Number(after.split('-')[0]) >= oldest ? `(${after}` : String(oldest);
        const entries = await redis.xrange(eventsOf(search), from, '+', 'COUNT', limit + 1);
        const read = entries.slice(0, limit).map(([position, flat]) => {
          const fields: Record<string, string> = {};
          for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
          return { position, post: fields['post'], at: fields['at'], body: fields['body'] };
        });
        // A volume event carries its body; a post.matched event refers to its post's summary.
        const refs = read.filter((e) => e.body === undefined);
        const summaries = refs.length > 0 ? await redis.mget(...refs.map((e) => summaryOf(e.post!, e.at!))) : [];
        const summaryOfEntry = new Map(refs.map((e, i) => [e.position, summaries[i] ?? null]));
        const events = read.flatMap((e): StoredEvent[] => {
          if (e.body !== undefined) return [{ position: e.position, body: e.body }];
          const summary = summaryOfEntry.get(e.position) ?? null;
          return summary === null
            ? []
            : [{ position: e.position, body: matchedEventBody(search, e.post!, e.at!, summary) }];
        });
        return { events, next: read.at(-1)?.position ?? after, more: entries.length > limit };
      }),

    /** The summaries of events, in order (null: gone). */
    summaries: (refs: ReadonlyArray<{ post: string; at: string }>) =>
      store.run(async () => (refs.length === 0 ? [] : redis.mget(...refs.map((r) => summaryOf(r.post, r.at))))),
  };
}

/** The event store. */
export type EventStore = ReturnType<typeof createEventStore>;
