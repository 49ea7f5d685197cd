import type { Redis } from 'ioredis';
import type { AccountRecord } from '../../domain/records.ts';
import type { RecordReads } from '../../engine/reads.ts';

/**
 * The accounts' current `followers_count`, mirrored in Redis for what renders posts.
 *
 * Posts keep their authors' counters coarse (src/domain/volatile-facts.ts), so a page of posts
 * reads its authors' current followers at render time. From the accounts index that is one search
 * per page, 2.1–2.5 ms on the 1M bench; an HMGET of the same 18 accounts is 0.39 ms, same run
 * (bench/search.md, "Author facts at read time").
 *
 * The worker writes an account's entry after the account's record is stored, before the job
 * completes (so `?wait=true` answers after it), as `<observed_at>|<followers>`; a Lua script keeps
 * the entry with the latest observation time, as the record's last-writer-wins merge does, so
 * concurrent workers converge on the record's value. An entry missing (an account not observed
 * since the mirror began, a flushed Redis) is read from the accounts index, as is everything
 * while Redis is down: the mirror only ever makes a read faster, never different from a record
 * written through it.
 */
export interface FollowersMirror extends Pick<RecordReads, 'currentFollowers'> {
  /** Mirrors the accounts' stored profiles; entries of later observations are kept. */
  record(accounts: Iterable<AccountRecord>): Promise<void>;
}

// ARGV: id, value pairs. A later observation replaces the entry; an equal time with another
// value (two profiles observed at the same instant: the record keeps one by its content) drops
// it, and so does an empty value: the accounts index answers for it until the next observation.
const SCRIPT = `
for i = 1, #ARGV, 2 do
  local id, value = ARGV[i], ARGV[i + 1]
  local held = redis.call('HGET', KEYS[1], id)
  if value == '' then
    redis.call('HDEL', KEYS[1], id)
  elseif not held or string.sub(held, 1, 24) < string.sub(value, 1, 24) then
    redis.call('HSET', KEYS[1], id, value)
  elseif string.sub(held, 1, 24) == string.sub(value, 1, 24) and held ~= value then
    redis.call('HDEL', KEYS[1], id)
  end
end
return 0
`;

/** A value's observation time takes exactly 24 characters (`2026-07-20T22:34:21.000Z`). */
const isInstant = (t: string) => t.length === 24 && t.endsWith('Z');

/** The mirror under `prefix`, read through to `reads` for what it does not hold. */
export function createFollowersMirror(deps: {
  redis: Redis;
  prefix: string;
  reads: Pick<RecordReads, 'currentFollowers' | 'storedFollowers'>;
}): FollowersMirror {
  const key = `${deps.prefix}:followers`;
  const entry = (observedAt: string, followers: number) => (isInstant(observedAt) ? `${observedAt}|${followers}` : '');
  const write = async (args: string[]) => {
    if (args.length > 0) await deps.redis.eval(SCRIPT, 1, key, ...args);
  };
  return {
    async record(accounts) {
      const args: string[] = [];
      for (const { id, profile } of accounts) args.push(id, profile ? entry(profile.t, profile.v.followers_count) : '');
      await write(args);
    },

    async currentFollowers(accountIds) {
      const ids = [...new Set(accountIds)];
      const out = new Map<string, number>();
      if (ids.length === 0) return out;
      let held: Array<string | null>;
      try {
        held = await deps.redis.hmget(key, ...ids);
      } catch {
        // Redis is down (its connection logs the outage once): the accounts index answers.
        return deps.reads.currentFollowers(ids);
      }
      const missing: string[] = [];
      ids.forEach((id, i) => {
        const value = held[i];
        const followers = value ? Number(value.slice(value.indexOf('|') + 1)) : NaN;
        if (Number.isSafeInteger(followers)) out.set(id, followers);
        else missing.push(id);
      });
      if (missing.length === 0) return out;
      // Read through: what the accounts index says is mirrored for the next page, under the same
      // rule (an entry a worker wrote meanwhile from a later observation is kept). Not awaited.
      const stored = await deps.reads.storedFollowers(missing);
      const args: string[] = [];
      for (const [id, s] of stored) {
        out.set(id, s.followers);
        const value = entry(s.observedAt, s.followers);
        if (value !== '') args.push(id, value);
      }
      write(args).catch(() => undefined);
      return out;
    },
  };
}
