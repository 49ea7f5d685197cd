import { createHash } from 'node:crypto';
import type { onSendAsyncHookHandler } from 'fastify';
import { LRUCache } from 'lru-cache';

/**
 * Pauses before a refusal the node has already given: a key told to retry later that keeps
 * sending gets its next 429s after a pause (and a refused credential its next 401s and 403s), so a
 * client that ignores Retry-After and keeps its requests in flight sends a few a second instead of
 * thousands. Why (bench/search.md, "A key that ignores its 429s"): answered at once, one key's 32
 * requests in flight past its budget made ~2,200 429s a second on a 2-core node and slowed another
 * key's search 3.6–5.9×.
 */
export interface RefusalPause {
  /**
   * Resolves after `ms` while `id` and the node hold fewer paused refusals than their bounds, else
   * at once: a pause never holds more requests than the bounds, whatever a client keeps in flight.
   */
  hold(id: string, ms: number): Promise<void>;
  /** What the pause has done: for the metrics (`refusals_*`). */
  stats(): RefusalPauseStats;
}

/** Counts of one node's pause since it started. */
export interface RefusalPauseStats {
  /** Refusals held now. */
  held: number;
  /** Refusals answered after a pause. */
  paused: number;
  /** Refusals that would have been paused but went at once, the subject's or the node's bound full. */
  overBound: number;
}

/** Bounds of the paused refusals: each holds a request (its socket and its objects) for the pause. */
export interface RefusalPauseOptions {
  /** The longest pause, in ms; 0: refusals are answered at once. */
  pauseMs: number;
  /** Paused refusals of one subject at once. */
  perSubject: number;
  /** Paused refusals of the node at once. */
  total: number;
}

/** Paused refusals of one subject at once on a node, by default: past them, refusals go at once. */
export const PAUSED_PER_SUBJECT = 256;
/** Paused refusals of a node at once, by default (each held request ~30 KiB: ~30 MiB at most). */
export const PAUSED_PER_NODE = 1024;

/** Creates the pause: one per node, shared by every budget, so the node-wide bound holds. */
export function createRefusalPause(options: RefusalPauseOptions): RefusalPause {
  const held = new Map<string, number>();
  let total = 0;
  let paused = 0;
  let overBound = 0;
  return {
    stats: () => ({ held: total, paused, overBound }),
    async hold(id, ms) {
      const wait = Math.min(ms, options.pauseMs);
      if (wait <= 0) return;
      const mine = held.get(id) ?? 0;
      if (mine >= options.perSubject || total >= options.total) {
        overBound++;
        return;
      }
      held.set(id, mine + 1);
      total++;
      paused++;
      try {
        await new Promise((resolve) => setTimeout(resolve, wait).unref());
      } finally {
        total--;
        const left = (held.get(id) ?? 1) - 1;
        if (left === 0) held.delete(id);
        else held.set(id, left);
      }
    },
  };
}

/** No pause: every refusal goes at once. */
export const NO_PAUSE: RefusalPause = {
  hold: async () => undefined,
  stats: () => ({ held: 0, paused: 0, overBound: 0 }),
};

/** How long a node remembers a credential it refused: its next refusal within it is paused. */
const CREDENTIAL_MEMORY_MS = 60_000;

/**
 * Distinct credentials one client address may have refused within a minute before every further
 * refusal of that address is paused too: a client that mistypes a key a few times learns each at
 * once; one presenting a new key each request (a guesser, or a client minting keys wrongly) is
 * paused from the eleventh.
 */
const REFUSED_CREDENTIALS_PER_ADDRESS = 10;

/**
 * An `onSend` hook that pauses a 401 or 403 the node has given the same `Authorization` header
 * within a minute, or any 401 or 403 to a client address whose requests were refused with
 * {@link REFUSED_CREDENTIALS_PER_ADDRESS} distinct credentials (none counts as one) within it.
 * A client left running with a revoked or mistyped key, retrying at once, made ~2,500 401s a
 * second with 32 requests in flight and slowed another key's search 2–3× (the same measure as the
 * 429s'); a client presenting a new key each time did the same (bench/search.md, "A key that
 * ignores its 429s"). A credential's first refusal from an address under the bound goes at once.
 * Credentials are remembered by their SHA-256 (10,000 at most) and addresses by the count of
 * their first refusals (10,000 at most), never as written. Only refusals wait: a valid key from
 * the same address is answered as ever.
 */
export function pauseRepeatedKeyRefusals(pause: RefusalPause): onSendAsyncHookHandler {
  const refused = new LRUCache<string, true>({ max: 10_000, ttl: CREDENTIAL_MEMORY_MS });
  const strikes = new LRUCache<string, number>({ max: 10_000, ttl: CREDENTIAL_MEMORY_MS, noUpdateTTL: true });
  return async (request, reply, payload) => {
    if (reply.statusCode !== 401 && reply.statusCode !== 403) return payload;
    const credential = request.headers.authorization;
    const address = `address:${request.ip}`;
    const id = credential
      ? `credential:${createHash('sha256').update(credential).digest('base64url')}`
      : `no-credential:${request.ip}`;
    if (refused.has(id)) {
      await pause.hold(id, CREDENTIAL_MEMORY_MS);
      return payload;
    }
    refused.set(id, true);
    const count = (strikes.get(address) ?? 0) + 1;
    strikes.set(address, count);
    if (count > REFUSED_CREDENTIALS_PER_ADDRESS) await pause.hold(address, CREDENTIAL_MEMORY_MS);
    return payload;
  };
}
