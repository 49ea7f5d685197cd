import type { AlertRedis } from './alert-redis.ts';
import { NUMBER, STRING, replyOf, repliesOf } from '../../internal/redis-replies.ts';

/**
 * How long an intake job's intent is kept: as long as a failed job may be retried by an operator
 * (`social-search intake failures retry`) and still have its writes matched.
 */
const INTENT_TTL_S = 30 * 24 * 60 * 60;

/**
 * Settles a job's intent once its writes are matched (KEYS: the intent, pending; ARGV: the posts
 * this attempt wrote and matched): the others (an earlier attempt wrote them and failed before
 * matching them) move to pending; the intent goes. Returns how many moved.
 */
const SETTLE = `
local written = {}
for i = 1, #ARGV do written[ARGV[i]] = true end
local moved = 0
for _, post in ipairs(redis.call('smembers', KEYS[1])) do
  if not written[post] then moved = moved + redis.call('sadd', KEYS[2], post) end
end
redis.call('del', KEYS[1])
return moved`;

/**
 * Takes up to ARGV[1] pending posts for a pass (KEYS: pending, the pass's claim): an earlier
 * attempt's claim is taken again as it is. Returns how many stay pending, then the posts.
 */
const CLAIM = `
if redis.call('exists', KEYS[2]) == 0 then
  local posts = redis.call('spop', KEYS[1], tonumber(ARGV[1]))
  if #posts > 0 then redis.call('sadd', KEYS[2], unpack(posts)) end
end
local out = redis.call('smembers', KEYS[2])
table.insert(out, 1, redis.call('scard', KEYS[1]))
return out`;

/**
 * Posts written but not yet matched against the saved searches, by id only (the records are read
 * again when they are): `intent:{job}`, the posts an intake job is about to write, noted before
 * its write so that an attempt failing between its write and its matching leaves them to its
 * retry (whose own merge finds nothing left to write); `pending`, the posts the recovery pass
 * (recovery-pass.ts) is to match; `pending:{run}`, what a pass took. Bounded by the intake's
 * backlog (INTAKE_MAX_QUEUED_OBSERVATIONS) and 30 days.
 */
export function createPendingStore(store: AlertRedis) {
  const { redis, key } = store;
  const pending = key('pending');
  const intentOf = (job: string) => key('intent', job);
  const claimOf = (run: string) => key('pending', run);

  return {
    /** Notes the posts job `job` is about to write (a job writes a few hundred). */
    intend: (job: string, posts: readonly string[]) =>
      store.run(async () => {
        store.unwrap(
          await redis
            .multi()
            .sadd(intentOf(job), ...posts)
            .expire(intentOf(job), INTENT_TTL_S)
            .exec(),
        );
      }),

    /** Settles job `job`'s intent once `matched` are; returns how many posts it left to the pass. */
    settle: (job: string, matched: readonly string[]) =>
      store.run(async () => replyOf(await redis.eval(SETTLE, 2, intentOf(job), pending, ...matched), NUMBER)),

    /** Leaves posts to the recovery pass (their writer could not match them). */
    leave: (posts: readonly string[]) =>
      store.run(async () => {
        if (posts.length > 0) await redis.sadd(pending, ...posts);
      }),

    /**
     * What pass `run` is to match: its earlier attempt's claim, else up to `count` pending posts;
     * `left`: how many stay pending for the next pass.
     */
    claim: (run: string, count: number) =>
      store.run(async () => {
        // The script answers how many stay pending, then the claimed posts.
        const reply: unknown = await redis.eval(CLAIM, 2, pending, claimOf(run), count);
        const items: unknown[] = Array.isArray(reply) ? reply : [];
        const [left, ...posts] = items;
        return { posts: repliesOf(posts, STRING), left: replyOf(left, NUMBER) };
      }),

    /** Forgets pass `run`'s claim once its work is done. */
    release: (run: string) =>
      store.run(async () => {
        await redis.del(claimOf(run));
      }),
  };
}

/** The pending store. */
export type PendingStore = ReturnType<typeof createPendingStore>;
