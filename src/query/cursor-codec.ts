import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ExpiredCursorError, ValidationFailedError } from '../internal/errors.ts';

/** Signs, expires and verifies continuation cursors. */
export interface CursorCodec {
  /** An opaque cursor carrying `payload`, valid for the configured time-to-live. */
  encode(payload: object): string;
  /** The payload of a valid cursor; 422 when tampered or not a cursor, 410 when expired. */
  decode(cursor: string): Record<string, unknown>;
}

/**
 * Fast, and a small compressor state: a cursor is under ~2 KB, so a 1 KB window loses almost
 * nothing (372 vs 354 characters) while zlib's default state (~256 KB per call, reported to V8 as
 * external memory) showed up as garbage-collection time on every search page.
 */
const DEFLATE = { level: 1, windowBits: 10, memLevel: 2 } as const;

const TAMPERED = '/cursor: not a cursor issued by this service (altered, truncated or from another deployment)';

/**
 * Cursors are `base64url(deflate(JSON)) "." base64url(HMAC-SHA256)`, signed with SIGNING_SECRET so
 * every API node verifies them without shared state. They are opaque to clients (the format may
 * change within v1) but not secret: they carry the normalized request and the engine position.
 */
export function createCursorCodec(deps: {
  secret: string;
  /** SIGNING_SECRET_PREVIOUS: cursors signed before a change of SIGNING_SECRET still verify. */
  previous?: readonly string[];
  ttlSeconds: number;
  now?: () => number;
}): CursorCodec {
  const now = deps.now ?? Date.now;
  const macWith = (secret: string, body: string) => createHmac('sha256', secret).update(`cursor\n${body}`).digest();
  const mac = (body: string) => macWith(deps.secret, body);
  const keyring = [deps.secret, ...(deps.previous ?? [])];
  return {
    encode(payload) {
      const json = JSON.stringify({ ...payload, exp: Math.floor(now() / 1000) + deps.ttlSeconds });
      const body = deflateRawSync(Buffer.from(json), DEFLATE).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    decode(cursor) {
      const [body, sig, extra] = cursor.split('.');
      if (!body || !sig || extra !== undefined) throw new ValidationFailedError(TAMPERED);
      const given = Buffer.from(sig, 'base64url');
      const signed = keyring.some((secret) => {
        const expected = macWith(secret, body);
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
      if (!signed) throw new ValidationFailedError(TAMPERED);
      let payload: Record<string, unknown>;
      try {
        // Signed by this service, so JSON it wrote; cursors.ts checks its shape against the cursor schema.
        payload = JSON.parse(inflateRawSync(Buffer.from(body, 'base64url')).toString()) as Record<string, unknown>;
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
