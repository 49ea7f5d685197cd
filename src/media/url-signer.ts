import { createHmac, timingSafeEqual } from 'node:crypto';
import { ExpiredUrlError, InvalidSignatureError } from '../internal/errors.ts';

/** What a delivery URL delivers: a media item's file, a video's thumbnail, an account's avatar. */
export type MediaKind = 'media' | 'thumbnail' | 'avatar';
export const MEDIA_KINDS: readonly MediaKind[] = ['media', 'thumbnail', 'avatar'];

/** Mints and verifies delivery URLs. */
export interface MediaUrlSigner {
  /** A signed, expiring `{base_url}/v1/social/delivery/{kind}/{id}?…` URL that redirects to `source`. */
  sign(kind: MediaKind, id: string, source: string): string;
  /** The source URL of a valid delivery request, and how long it stays valid; throws when invalid. */
  verify(
    kind: string,
    id: string,
    query: { src?: string | undefined; exp?: string | undefined; sig?: string | undefined },
  ): { source: string; expiresAt: number };
}

/** Delivery URLs stay byte-identical within this bucket, so responses that embed them cache well. */
const EXPIRY_BUCKET_SECONDS = 3600;

/**
 * Creates the signer. URLs carry the source URL (base64url), the expiry (Unix seconds, rounded up
 * to the hour) and an HMAC-SHA256 over kind, id, source and expiry with SIGNING_SECRET, so any API
 * node verifies them without a lookup. A URL lives between `ttlSeconds` and `ttlSeconds` + 1 h.
 */
export function createMediaUrlSigner(deps: {
  baseUrl: string;
  secret: string;
  /** SIGNING_SECRET_PREVIOUS: URLs signed before a change of SIGNING_SECRET still verify. */
  previous?: readonly string[];
  ttlSeconds: number;
  now?: () => number;
}): MediaUrlSigner {
  const now = deps.now ?? (() => Date.now());
  const macWith = (secret: string, kind: string, id: string, src: string, exp: string) =>
    createHmac('sha256', secret).update(`delivery\n${kind}\n${id}\n${src}\n${exp}`).digest();
  const mac = (kind: string, id: string, src: string, exp: string) => macWith(deps.secret, kind, id, src, exp);
  const keyring = [deps.secret, ...(deps.previous ?? [])];

  // Signing is ~10 µs (an HMAC key setup each time) and a page of 20 summaries signs ~60 URLs;
  // within an expiry bucket a URL never changes, so signed URLs are memoized. Two generations
  // bound the memory, each by the characters of its keys and URLs (a source URL may be 4 KiB):
  // ~2 bytes per character held, so ~6 MiB in all, ~3,500 URLs of ~300-character sources (two
  // generations of 20,000 entries took 43 MiB).
  const MEMO_GENERATION_CHARS = 1_500_000;
  let young = new Map<string, string>();
  let old = new Map<string, string>();
  let youngChars = 0;

  return {
    sign(kind, id, source) {
      const raw = Math.floor(now() / 1000) + deps.ttlSeconds;
      const exp = String(Math.ceil(raw / EXPIRY_BUCKET_SECONDS) * EXPIRY_BUCKET_SECONDS);
      const memoKey = `${exp}\n${kind}\n${id}\n${source}`;
      const memo = young.get(memoKey) ?? old.get(memoKey);
      if (memo !== undefined) return memo;
      const src = Buffer.from(source).toString('base64url');
      const sig = mac(kind, id, src, exp).toString('base64url');
      const url = `${deps.baseUrl}/v1/social/delivery/${kind}/${encodeURIComponent(id)}?src=${src}&exp=${exp}&sig=${sig}`;
      if (youngChars + memoKey.length + url.length > MEMO_GENERATION_CHARS) {
        old = young;
        young = new Map();
        youngChars = 0;
      }
      young.set(memoKey, url);
      youngChars += memoKey.length + url.length;
      return url;
    },
    verify(kind, id, { src, exp, sig }) {
      if (!src || !exp || !sig || !/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]+$/.test(src)) {
        throw new InvalidSignatureError(
          'This delivery URL is incomplete or was altered; take a fresh one from the resource.',
        );
      }
      const given = Buffer.from(sig, 'base64url');
      const signed = keyring.some((secret) => {
        const expected = macWith(secret, kind, id, src, exp);
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
      if (!signed) {
        throw new InvalidSignatureError(
          'This delivery URL is incomplete or was altered; take a fresh one from the resource.',
        );
      }
      const expiresAt = Number(exp);
      if (expiresAt * 1000 <= now()) {
        throw new ExpiredUrlError('This delivery URL has expired; fetch the resource again for a fresh one.');
      }
      return { source: Buffer.from(src, 'base64url').toString(), expiresAt };
    },
  };
}
