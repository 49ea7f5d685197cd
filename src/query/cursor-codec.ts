import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ExpiredCursorError, ValidationFailedError } from '../errors.ts';

/** Signs, expires and verifies continuation cursors. */
export interface CursorCodec {
  /** An opaque cursor carrying `payload`, valid for the configured time-to-live. */
  encode(payload: object): string;
  /** The payload of a valid cursor; 422 when tampered or not a cursor, 410 when expired. */
  decode(cursor: string): Record<string, unknown>;
}

const TAMPERED = '/cursor: not a cursor issued by this service (altered, truncated or from another deployment)';

/**
 * Cursors are `base64url(deflate(JSON)) "." base64url(HMAC-SHA256)`, signed with SIGNING_SECRET so
 * every API node verifies them without shared state. They are opaque to clients (the format may
 * change within v1) but not secret: they carry the normalized request and the engine position.
 */
export function createCursorCodec(deps: { secret: string; ttlSeconds: number; now?: () => number }): CursorCodec {
  const now = deps.now ?? Date.now;
  const mac = (body: string) => createHmac('sha256', deps.secret).update(`cursor\n${body}`).digest();
  return {
    encode(payload) {
      const body = deflateRawSync(Buffer.from(JSON.stringify({ ...payload, exp: Math.floor(now() / 1000) + deps.ttlSeconds })), { level: 1 }).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    decode(cursor) {
      const [body, sig, extra] = cursor.split('.');
      if (!body || !sig || extra !== undefined) throw new ValidationFailedError(TAMPERED);
      const given = Buffer.from(sig, 'base64url');
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ValidationFailedError(TAMPERED);
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(inflateRawSync(Buffer.from(body, 'base64url')).toString());
      } catch {
        throw new ValidationFailedError(TAMPERED);
      }
      if (typeof payload.exp !== 'number' || payload.exp * 1000 <= now()) {
        throw new ExpiredCursorError('This cursor has expired; start the search again from the first page.');
      }
      return payload;
    },
  };
}
