import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AuthenticatedKey, KeyService } from '../../services/keys/key-service.ts';
import type { KeyScope } from '../../services/keys/key-store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated API key, on routes that require one. */
    apiKey?: AuthenticatedKey;
  }
}

/**
 * An `onRequest` hook that authenticates the bearer key and requires `scope`. It runs before the
 * body is read, so an unauthenticated client cannot make the service parse a large body.
 */
export function requireKey(
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>,
  scope: KeyScope,
): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const key = await keys.authenticate(request.headers.authorization);
    keys.requireScope(key, scope);
    request.apiKey = key;
    request.log = request.log.child({ key_id: key.id });
  };
}
