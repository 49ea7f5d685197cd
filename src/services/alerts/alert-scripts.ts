/**
 * The alert store's Lua scripts (alert-store.ts): each does, atomically in Redis, what two or more
 * commands could leave half done across a crash or a concurrent writer.
 */

/**
 * Claims pending changes for a pass (KEYS: pending, the pass's claim): pending becomes the claim at
 * once (a rename) unless an earlier attempt of the pass left one, which keeps its own entries.
 */
export const CLAIM = `
if redis.call('exists', KEYS[2]) == 0 then
  if redis.call('exists', KEYS[1]) == 1 then redis.call('rename', KEYS[1], KEYS[2]) end
  return redis.call('hgetall', KEYS[2])
end
local pending = redis.call('hgetall', KEYS[1])
for i = 1, #pending, 2 do
  redis.call('hsetnx', KEYS[2], pending[i], pending[i + 1])
end
redis.call('del', KEYS[1])
return redis.call('hgetall', KEYS[2])`;

/**
 * Records one saved search's events (KEYS: its seen set, its event stream, its hash; ARGV: the
 * oldest stream id kept, the stream's length kept, then each event's post and time): each post
 * not yet seen is marked and appended; the new ones are returned.
 */
export const APPEND_EVENTS = `
local fresh = {}
local last = nil
for i = 3, #ARGV, 2 do
  if redis.call('sadd', KEYS[1], ARGV[i]) == 1 then
    redis.call('xadd', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'post', ARGV[i], 'at', ARGV[i + 1])
    fresh[#fresh + 1] = ARGV[i]
    if last == nil or ARGV[i + 1] > last then last = ARGV[i + 1] end
  end
end
if #fresh > 0 then
  redis.call('xtrim', KEYS[2], 'MINID', '~', ARGV[1])
  if redis.call('exists', KEYS[3]) == 1 then redis.call('hset', KEYS[3], 'last_match_at', last) end
end
return fresh`;

/**
 * Records the changes an intake job is about to write (KEYS: its intent; ARGV: its time to live in
 * seconds, then post and change pairs), each post's first change kept (a retry's intent keeps the
 * first attempt's). One call rather than a command per post: for 20,000 posts in jobs of 500,
 * 0.07 CPU-s of the client against 0.22–0.31, Redis's the same (0.30–0.33; 2026-11-28).
 */
export const INTEND = `
for i = 2, #ARGV, 2 do redis.call('hsetnx', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('expire', KEYS[1], ARGV[1])
return 1`;

/** Moves a job's intent (KEYS[1]) into pending (KEYS[2]), earlier changes kept; 0 when there was none. */
export const CONFIRM_INTENT = `
local intent = redis.call('hgetall', KEYS[1])
if #intent == 0 then return 0 end
for i = 1, #intent, 2 do
  redis.call('hsetnx', KEYS[2], intent[i], intent[i + 1])
end
redis.call('del', KEYS[1])
return 1`;

/**
 * Records a job's matched changes (KEYS: its intent, pending, then the keys of their summaries;
 * ARGV: the summaries' time to live in seconds, how many written posts, their ids, how many matched
 * changes, their field and value pairs, then the summaries in their keys' order): the summaries are
 * stored, the changes added to pending, the intent's changes of posts this attempt did not write
 * (an earlier attempt did) moved into it as they are, and the intent dropped. Returns how many
 * entries pending gained.
 */
export const RECORD_MATCHED = `
local written = {}
local count = tonumber(ARGV[2])
for i = 3, count + 2 do written[ARGV[i]] = true end
local changes = tonumber(ARGV[count + 3])
local first = count + 4
for k = 3, #KEYS do
  redis.call('set', KEYS[k], ARGV[first + 2 * changes + k - 3], 'EX', ARGV[1])
end
local added = 0
for i = first, first + 2 * changes - 1, 2 do
  redis.call('hset', KEYS[2], ARGV[i], ARGV[i + 1])
  added = added + 1
end
if KEYS[1] ~= KEYS[2] then
  local intent = redis.call('hgetall', KEYS[1])
  for i = 1, #intent, 2 do
    if not written[intent[i]] then
      added = added + redis.call('hsetnx', KEYS[2], intent[i], intent[i + 1])
    end
  end
  redis.call('del', KEYS[1])
end
return added`;

/** Inserts a saved search (ARGV: cap, score, id, fields…) unless its owner is at the cap. */
export const INSERT_SEARCH = `
if redis.call('zcard', KEYS[2]) >= tonumber(ARGV[1]) then return 0 end
redis.call('hset', KEYS[1], unpack(ARGV, 4))
redis.call('zadd', KEYS[2], ARGV[2], ARGV[3])
redis.call('zadd', KEYS[3], ARGV[2], ARGV[3])
redis.call('incr', KEYS[3] .. ':version')
return 1`;

/** Sets one field of a hash that still exists (a search deleted meanwhile stays deleted). */
export const SET_IF_EXISTS = `
if redis.call('exists', KEYS[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end
return 1`;
