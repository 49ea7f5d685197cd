import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { lastUsedKey, usageKey, USAGE_OPERATIONS, type UsageOperation } from './usage-recorder.ts';
import { HASH } from '../../internal/redis-replies.ts';

/** One key's usage on one day (UTC). */
export interface DailyUsage {
  day: string;
  requests: number;
  byOperation: Record<UsageOperation, number>;
  clientErrors: number;
  rateLimited: number;
}

/** Reads what {@link createUsageRecorder} wrote. */
export interface UsageReader {
  /** The last `days` days (today included, oldest first) for each key; days without requests count 0. */
  daily(keyIds: readonly string[], days: number, today?: Date): Promise<Map<string, DailyUsage[]>>;
  /** When each key was last used (ISO), if ever. */
  lastUsed(keyIds: readonly string[]): Promise<Map<string, string>>;
}

function dayList(days: number, today: Date): string[] {
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) out.push(new Date(today.getTime() - i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

function toDaily(day: string, hash: Record<string, string>): DailyUsage {
  // Object.fromEntries answers a string-keyed record: its keys are exactly USAGE_OPERATIONS.
  const byOperation = Object.fromEntries(USAGE_OPERATIONS.map((op) => [op, Number(hash[`op:${op}`] ?? 0)])) as Record<
    UsageOperation,
    number
  >;
  return {
    day,
    requests: Object.values(byOperation).reduce((a, b) => a + b, 0),
    byOperation,
    clientErrors: Number(hash['4xx'] ?? 0),
    rateLimited: Number(hash['429'] ?? 0),
  };
}

/** Creates the {@link UsageReader}. */
export function createUsageReader({ redis, prefix }: { redis: Redis; prefix: string }): UsageReader {
  return {
    async daily(keyIds, days, today = new Date()) {
      const dayKeys = dayList(days, today);
      const pipeline = redis.pipeline();
      for (const id of keyIds) for (const day of dayKeys) pipeline.hgetall(usageKey(prefix, id, day));
      const results =
        keyIds.length === 0
          ? []
          : await pipeline.exec().catch((cause: unknown) => {
              throw new ServiceUnavailableError('the usage store is unreachable', { cause });
            });
      const out = new Map<string, DailyUsage[]>();
      keyIds.forEach((id, k) => {
        out.set(
          id,
          dayKeys.map((day, d) => {
            // A failed read counts as no usage that day.
            const hash: unknown = results?.[k * dayKeys.length + d]?.[1];
            return toDaily(day, HASH.is(hash) ? hash : {});
          }),
        );
      });
      return out;
    },
    async lastUsed(keyIds) {
      if (keyIds.length === 0) return new Map();
      const values = await redis.hmget(lastUsedKey(prefix), ...keyIds).catch((cause: unknown) => {
        throw new ServiceUnavailableError('the usage store is unreachable', { cause });
      });
      return new Map(
        keyIds.flatMap((id, i): Array<[string, string]> => {
          const value = values[i];
          return value ? [[id, value]] : [];
        }),
      );
    },
  };
}
