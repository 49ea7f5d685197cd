import { luaScript } from '../../internal/lua-script.ts';
import type { AlertRedis } from './alert-redis.ts';
import type { DeliveryStore } from './delivery-store.ts';
import { DELIVERY_WINDOW_MS, NEWS_WINDOW_MS } from './event-store.ts';
import { NUMBERS, replyOf } from '../../internal/redis-replies.ts';

/**
 * Posts a window counts one by one (an exact set of their ids); past them, a HyperLogLog (at most
 * 12 KB) counts them within ~1%: a threshold people set on a narrow search is judged exactly, a
 * broad search's spike by an estimate, and no window holds more than ~80 KB whatever the corpus.
 */
export const EXACT_POSTS = 1000;
/** Windows one script call counts. */
const WINDOWS_PER_CALL = 500;
/** Events are pulled for 30 days; their stream lives a day longer, as event-store.ts keeps it. */
const EVENTS_TTL_MS = NEWS_WINDOW_MS + 24 * 60 * 60 * 1000;

/** One window of one saved search to count posts into and check against its rule. */
export interface VolumeCount {
  search: { id: string; owner: string; webhook_endpoint_id: string | null };
  /** The window's start (epoch ms): its keys are named by it. */
  start: number;
  /** When its keys go (epoch ms): one interval after the window ends. */
  expireAt: number;
  /** Whether the window is the current one: only the current window gives events. */
  current: boolean;
  /** The posts that are news to the search in this window (ids). */
  posts: readonly string[];
  /** `volume.exceeded`: above what, and its body up to the count; null without `above`. */
  exceeded: { above: number; id: string; head: string; tail: string } | null;
  /** `volume.spiked`: the fewest posts that may spike, and its body up to the count; null without `spike`. */
  spiked: { minCount: number; id: string; head: string } | null;
  /** The window's baseline, once computed: the fewest posts that spike, and the body after the count. */
  baseline?: { spikeAt: number; tail: string } | undefined;
  /** The time of the write (ISO): the search's `last_match_at` when a post is counted. */
  at: string;
}

/** What counting did to one window. */
export interface VolumeCounted {
  count: number;
  /** The window may spike and its baseline is not known yet: compute it, then count again with it. */
  needsBaseline: boolean;
  recorded: number;
  dropped: number;
}

/**
 * Counts posts into windows and records their volume events (KEYS: the deliveries' due set, then
 * per window its hash, its exact set, its HyperLogLog, the search's hash, event stream and its
 * endpoint's outbox; ARGV: now, the oldest event kept, the events a search may hold, the oldest
 * delivery kept, EXACT_POSTS, then per window: its due member ('' without an endpoint), when its
 * keys expire, current (1/0), above (0: none), its exceeded event's id, head and tail, the spike's
 * min_count (0: none), its spiked event's id and head, the baseline's spike_at and tail ('' when
 * not given), the write's time, how many posts and the posts).
 *
 * Per window, in one step: each post not counted yet is counted (a re-observed post, a recovery
 * pass's re-match, a concurrent job's copy add nothing); in the current window, a count past
 * `above` records `volume.exceeded` and a count past the baseline's `spike_at` records
 * `volume.spiked`, each once (a field of the window's hash, set if absent). A search deleted
 * meanwhile is skipped. Returns per window: count, needs a baseline (1/0), recorded, dropped.
 */
const COUNT = luaScript(`
local now, oldest, limit, outboxOldest, exact = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local out = {}
local a, k = 6, 2
while a <= #ARGV do
  local hash, posts, hll, search, events, outbox = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
  local member, expireAt, current, above = ARGV[a], ARGV[a + 1], ARGV[a + 2] == '1', tonumber(ARGV[a + 3])
  local exceededId, exceededHead, exceededTail = ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
  local minCount, spikedId, spikedHead = tonumber(ARGV[a + 7]), ARGV[a + 8], ARGV[a + 9]
  local spikeAt, spikeTail, at, n = ARGV[a + 10], ARGV[a + 11], ARGV[a + 12], tonumber(ARGV[a + 13])
  local first = a + 14
  k, a = k + 6, first + n
  local count, needs, recorded, dropped = 0, 0, 0, 0
  if redis.call('exists', search) == 1 then
    count = tonumber(redis.call('hget', hash, 'count') or '0')
    local added = 0
    local estimating = redis.call('exists', hll) == 1
    for i = first, first + n - 1 do
      local post = ARGV[i]
      if not estimating then
        if redis.call('sadd', posts, post) == 1 then
          count, added = count + 1, added + 1
          if count > exact then
            redis.call('pfadd', hll, unpack(redis.call('smembers', posts)))
            redis.call('del', posts)
            estimating = true
          end
        end
      elseif redis.call('pfadd', hll, post) == 1 then
        added = added + 1
        count = math.max(count, redis.call('pfcount', hll))
      end
    end
    if added > 0 then
      redis.call('hset', hash, 'count', count)
      local last = redis.call('hget', search, 'last_match_at')
      if not last or at > last then redis.call('hset', search, 'last_match_at', at) end
    end
    if spikeAt ~= '' then
      redis.call('hsetnx', hash, 'spike_at', spikeAt)
      redis.call('hsetnx', hash, 'spike_tail', spikeTail)
    end
    local function record(id, body)
      redis.call('xtrim', events, 'MINID', oldest)
      if redis.call('xlen', events) >= limit then
        redis.call('hincrby', search, 'events_dropped', 1)
        dropped = dropped + 1
        return
      end
      redis.call('xadd', events, '*', 'event', id, 'body', body)
      redis.call('pexpire', events, ${EVENTS_TTL_MS})
      if member ~= '' then
        redis.call('xadd', outbox, '*', 'event', id, 'body', body)
        redis.call('xtrim', outbox, 'MINID', outboxOldest)
        redis.call('zadd', KEYS[1], 'NX', now, member)
      end
      recorded = recorded + 1
    end
    if current and count > 0 then
      if above > 0 and count > above and redis.call('hsetnx', hash, 'exceeded', now) == 1 then
        record(exceededId, exceededHead .. count .. exceededTail)
      end
      if minCount > 0 and count >= minCount and redis.call('hexists', hash, 'spiked') == 0 then
        local threshold = redis.call('hget', hash, 'spike_at')
        if not threshold then
          needs = 1
        elseif count >= tonumber(threshold) then
          redis.call('hset', hash, 'spiked', now)
          record(spikedId, spikedHead .. count .. redis.call('hget', hash, 'spike_tail'))
        end
      end
    end
    if redis.call('exists', hash) == 1 then
      redis.call('pexpireat', hash, expireAt)
      redis.call('pexpireat', posts, expireAt)
      redis.call('pexpireat', hll, expireAt)
    end
  end
  out[#out + 1] = count
  out[#out + 1] = needs
  out[#out + 1] = recorded
  out[#out + 1] = dropped
end
return out`);

/**
 * The saved searches' volume counts: per (saved search, window) a hash (`search:{id}:volume:{start}`:
 * its count, which of its events were given, its baseline once known), the ids of the posts it
 * counted (`…:posts`, up to {@link EXACT_POSTS}) or their HyperLogLog (`…:hll`, beyond), all gone
 * one interval after the window ends. Its events go to the search's event stream and its
 * endpoint's outbox, as `post.matched` events do (event-store.ts), under the same limit.
 */
export function createVolumeStore(
  store: AlertRedis,
  deps: { deliveries: Pick<DeliveryStore, 'due' | 'memberOf' | 'outboxOf'>; limit: number },
) {
  const { key } = store;
  const windowKeys = (search: string, start: number) => {
    const hash = key('search', search, 'volume', String(start));
    return [hash, `${hash}:posts`, `${hash}:hll`];
  };

  return {
    /** The keys of `search`'s windows starting at `starts`, deleted with it. */
    keysOf: (search: string, starts: readonly number[]) => starts.flatMap((start) => windowKeys(search, start)),

    /** Counts posts into windows and records the events they cross to, in script calls of {@link WINDOWS_PER_CALL}. */
    async count(windows: readonly VolumeCount[], now = Date.now()): Promise<VolumeCounted[]> {
      const out: VolumeCounted[] = [];
      for (let from = 0; from < windows.length; from += WINDOWS_PER_CALL) {
        const chunk = windows.slice(from, from + WINDOWS_PER_CALL);
        const keys: string[] = [deps.deliveries.due];
        const args: Array<string | number> = [
          now,
          now - NEWS_WINDOW_MS,
          deps.limit,
          now - DELIVERY_WINDOW_MS,
          EXACT_POSTS,
        ];
        for (const w of chunk) {
          const { id, owner, webhook_endpoint_id: endpoint } = w.search;
          const hash = key('search', id);
          keys.push(
            ...windowKeys(id, w.start),
            hash,
            key('search', id, 'events'),
            endpoint ? deps.deliveries.outboxOf(endpoint) : hash,
          );
          args.push(
            endpoint ? deps.deliveries.memberOf(owner, endpoint) : '',
            w.expireAt,
            w.current ? 1 : 0,
            w.exceeded?.above ?? 0,
            ...(w.exceeded ? [w.exceeded.id, w.exceeded.head, w.exceeded.tail] : ['', '', '']),
            w.spiked?.minCount ?? 0,
            ...(w.spiked ? [w.spiked.id, w.spiked.head] : ['', '']),
            w.baseline?.spikeAt ?? '',
            w.baseline?.tail ?? '',
            w.at,
            w.posts.length,
            ...w.posts,
          );
        }
        const flat = replyOf(await store.evalsha(COUNT, keys, args), NUMBERS);
        chunk.forEach((_, i) =>
          out.push({
            count: flat[4 * i]!,
            needsBaseline: flat[4 * i + 1] === 1,
            recorded: flat[4 * i + 2]!,
            dropped: flat[4 * i + 3]!,
          }),
        );
      }
      return out;
    },
  };
}

/** The volume store. */
export type VolumeStore = ReturnType<typeof createVolumeStore>;
