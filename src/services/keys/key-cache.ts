import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import type { KeyRecord, KeyStore } from './key-store.ts';

/** Dependencies of {@link createCachedKeyStore}. */
export interface CachedKeyStoreDeps {
  store: KeyStore;
  /**
   * Opens the connection that listens for revocations (a Redis connection in subscriber mode
   * can run nothing else). Called once, on the first lookup, so processes that never
   * authenticate (CLI, worker) never open it.
   */
  subscriber: () => Redis;
  /** The channel {@link KeyStore.revoke} and {@link KeyStore.setLimits} publish changed key ids on. */
  channel: string;
  /** Upper bound on how long an entry is trusted, in case a revocation message was missed. */
  ttlMs: number;
  /**
   * Stale-if-error: while the store is unreachable, a key verified at most this long ago keeps
   * working (0: never). Default one hour.
   */
  staleIfErrorMs?: number;
  /** Most keys cached at once (least recently used go first). */
  maxEntries?: number;
  /** Clock (epoch ms), injectable for tests. */
  now?: () => number;
}

/** A {@link KeyStore} that answers repeated lookups from memory; {@link close} ends its listener. */
export interface CachedKeyStore extends KeyStore {
  /** Lookups answered from memory, from the store, and from memory because the store was down, since start. */
  stats(): { hits: number; misses: number; stale: number; listening: boolean };
  close(): void;
}

/** One verified key, and when and under which listener session it was verified. */
interface Entry {
  record: KeyRecord;
  verifiedAt: number;
  session: number;
}

/**
 * Caches active key records in process, so a request does not pay a Redis round trip to
 * authenticate (on a loopback VM that is ~0.5 ms of a ~10 ms search).
 *
 * Revocation stays immediate: the store publishes each revoked id, every process listens and
 * drops it. An entry is trusted only while that subscription is live and has been since the
 * entry was verified: a disconnect starts a new session, and entries of an older one are checked
 * against the store again (a message sent meanwhile would be lost). Unknown and revoked keys are
 * never cached, so garbage credentials cannot fill memory and a revoked key is looked up every
 * time. `ttlMs` bounds the trust in any entry.
 *
 * Stale-if-error: when the store cannot be reached (a Redis outage), an entry verified within
 * `staleIfErrorMs` is used anyway, so reads and searches keep answering for the keys this node
 * has seen; a key it has not seen answers 503. A key revoked during the outage cannot have been
 * revoked through this Redis; the first lookup after the outage reads the store again.
 */
export function createCachedKeyStore({
  store,
  subscriber,
  channel,
  ttlMs,
  staleIfErrorMs = 3_600_000,
  maxEntries = 10_000,
  now = Date.now,
}: CachedKeyStoreDeps): CachedKeyStore {
  const cache = new LRUCache<string, Entry>({ max: maxEntries });
  let connection: Redis | undefined;
  let listening = false;
  let closed = false;
  // Advanced by every disconnect: entries of an earlier session may have missed a revocation.
  let session = 0;
  // Advanced by every revocation message and every disconnect: a read that saw another value may
  // predate a revocation this process has already been told about, so it is not cached.
  let generation = 0;
  let hits = 0;
  let misses = 0;
  let stale = 0;

  const listen = () => {
    if (connection || closed) return;
    connection = subscriber();
    connection.on('message', (_channel: string, id: string) => {
      generation++;
      cache.delete(id);
    });
    // Anything that may have dropped messages ends the session: its entries are re-verified
    // before they are trusted again, but kept for stale-if-error.
    connection.on('close', () => {
      generation++;
      if (listening) session++;
      listening = false;
    });
    connection.on('error', () => undefined);
    const subscribe = () => {
      connection!
        .subscribe(channel)
        .then(() => {
          listening = !closed;
        })
        .catch(() => undefined);
    };
    connection.on('ready', subscribe);
    if (connection.status === 'ready') subscribe();
  };

  return {
    async get(id) {
      listen();
      const entry = cache.get(id);
      if (entry && listening && entry.session === session && now() - entry.verifiedAt < ttlMs) {
        hits++;
        return entry.record;
      }
      misses++;
      const before = generation;
      const wasListening = listening;
      const sessionBefore = session;
      let record: KeyRecord | null;
      try {
        record = await store.get(id);
      } catch (error) {
        // Looked up again: a revocation heard while the store was being asked has deleted it.
        const last = cache.get(id);
        if (error instanceof ServiceUnavailableError && last && now() - last.verifiedAt < staleIfErrorMs) {
          stale++;
          return last.record;
        }
        throw error;
      }
      if (!record || record.revoked_at) {
        cache.delete(id);
      } else if (generation === before) {
        // Trusted only if the listener was live throughout and heard nothing meanwhile: a
        // revocation published after this point reaches the listener later and deletes the entry.
        // Without a live listener it is kept for stale-if-error only (session -1 is never current).
        cache.set(id, { record, verifiedAt: now(), session: wasListening && listening ? sessionBefore : -1 });
      }
      return record;
    },
    insert: (record) => store.insert(record),
    list: (filter) => store.list(filter),
    async revoke(id, revokedAt) {
      const revoked = await store.revoke(id, revokedAt);
      // This process drops it at once, whatever its listener is doing.
      cache.delete(id);
      return revoked;
    },
    async setLimits(id, limits) {
      const changed = await store.setLimits(id, limits);
      cache.delete(id);
      return changed;
    },
    stats: () => ({ hits, misses, stale, listening }),
    close() {
      closed = true;
      listening = false;
      cache.clear();
      connection?.disconnect();
    },
  };
}
