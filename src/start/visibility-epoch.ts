import type { Redis } from 'ioredis';
import type { VisibilityEpoch } from '../engine/visibility.ts';

/** The {@link VisibilityEpoch} on a Redis counter shared by every node of a deployment. */
export function createRedisVisibilityEpoch(deps: { redis: Redis; prefix: string }): VisibilityEpoch {
  const key = `${deps.prefix}:search:visibility-epoch`;
  return {
    async current() {
      try {
        return (await deps.redis.get(key)) ?? '0';
      } catch {
        return null;
      }
    },
    async advance() {
      await deps.redis.incr(key);
    },
  };
}
