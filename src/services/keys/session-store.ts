import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../../internal/errors.ts';

type Callback = (error?: unknown) => void;

/**
 * The store interface of @fastify/session (and express-session), structurally: the HTTP layer
 * plugs this in without the services layer importing the web framework.
 */
export interface SessionStore<S extends object = object> {
  set(sessionId: string, session: S, callback: Callback): void;
  get(sessionId: string, callback: (error: unknown, session?: S | null) => void): void;
  destroy(sessionId: string, callback: Callback): void;
}

/**
 * Dashboard sessions in Redis, as JSON under `{prefix}:session:{id}`, each expiring after `ttlMs`
 * of inactivity (every save renews it), so every API node sees the same sessions and signing out
 * on one ends the session on all of them. Session ids are the library's (32 random bytes).
 */
export function createSessionStore<S extends object>({
  redis,
  prefix,
  ttlMs,
}: {
  redis: Redis;
  prefix: string;
  ttlMs: number;
}): SessionStore<S> {
  const keyOf = (id: string) => `${prefix}:session:${id}`;
  const failed = (callback: Callback) => (cause: unknown) =>
    callback(new ServiceUnavailableError('the session store is unreachable', { cause }));
  return {
    set(sessionId, session, callback) {
      redis.set(keyOf(sessionId), JSON.stringify(session), 'PX', ttlMs).then(() => callback(), failed(callback));
    },
    get(sessionId, callback) {
      redis.get(keyOf(sessionId)).then(
        (value) => {
          if (value === null) return callback(null, null);
          try {
            // Sessions are written by this store alone (set), as JSON of S.
            callback(null, JSON.parse(value) as S);
          } catch {
            // A corrupt entry is no session, not an error page.
            callback(null, null);
          }
        },
        (cause: unknown) => callback(new ServiceUnavailableError('the session store is unreachable', { cause })),
      );
    },
    destroy(sessionId, callback) {
      redis.del(keyOf(sessionId)).then(() => callback(), failed(callback));
    },
  };
}
