import type { Redis } from 'ioredis';

/**
 * The visibility epoch: a counter, shared by every node through Redis, that advances whenever
 * writes are made visible on demand (`?wait=true` intake, an index rebuild). Search nodes may
 * reuse a recent snapshot only under an unchanged epoch, so whoever waited for their writes sees
 * them on any node.
 */
export interface SearchVisibility {
  /** The current epoch, or null when it cannot be read (then no snapshot is reused). */
  current(): Promise<string | null>;
  /** Advances the epoch. Call after the refresh that made the writes visible. */
  advance(): Promise<void>;
}

/** {@link SearchVisibility} on a Redis counter. */
export function createSearchVisibility(deps: { redis: Redis; prefix: string }): SearchVisibility {
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
