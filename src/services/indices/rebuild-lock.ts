import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { IndexName } from '../../engine/index-admin.ts';

/**
 * The lock one `indices rebuild` holds while it runs: two rebuilds of one index at once would
 * race their alias swaps, and a rebuild may only clean up what an interrupted one left behind
 * if no other is running. It expires by itself (a killed process cannot hold it for long) and
 * is kept alive while the rebuild works.
 */
export interface RebuildLock {
  release(): Promise<void>;
}

const TTL_MS = 30_000;
const HEARTBEAT_MS = 10_000;
// Only the holder may extend or release: compare the token, then act, atomically.
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** The Redis key of the rebuild lock of `name`. */
function rebuildLockKey(prefix: string, name: IndexName): string {
  return `${prefix}:lock:indices-rebuild:${name}`;
}

/** Takes the rebuild lock of `name`, or returns null (and who holds it) when a rebuild runs. */
export async function acquireRebuildLock(
  redis: Redis,
  prefix: string,
  name: IndexName,
  holder = `pid ${process.pid} since ${new Date().toISOString()}`,
): Promise<{ lock: RebuildLock } | { heldBy: string }> {
  const key = rebuildLockKey(prefix, name);
  const token = `${randomUUID()} ${holder}`;
  if ((await redis.set(key, token, 'PX', TTL_MS, 'NX')) !== 'OK') {
    const current = await redis.get(key);
    return { heldBy: current?.split(' ').slice(1).join(' ') || 'another process' };
  }
  const heartbeat = setInterval(
    () => void redis.eval(EXTEND, 1, key, token, TTL_MS).catch(() => undefined),
    HEARTBEAT_MS,
  );
  heartbeat.unref();
  return {
    lock: {
      async release() {
        clearInterval(heartbeat);
        await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      },
    },
  };
}

/** True while some process holds the rebuild lock of `name`. */
export async function rebuildRunning(redis: Redis, prefix: string, name: IndexName): Promise<boolean> {
  return (await redis.exists(rebuildLockKey(prefix, name))) === 1;
}
