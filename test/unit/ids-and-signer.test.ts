import { describe, expect, it } from 'vitest';
import { isServiceId, mintId, type IdFamily } from '../../src/contract/ids.ts';
import { createMediaUrlSigner } from '../../src/media/url-signer.ts';
import { ExpiredUrlError, InvalidSignatureError } from '../../src/internal/errors.ts';

const FAMILIES: IdFamily[] = ['post', 'account', 'media', 'audio'];

describe('mintId', () => {
  it('is deterministic and carries the family prefix', () => {
    for (const family of FAMILIES) {
      const id = mintId(family, '17841400000000001');
      expect(id).toBe(mintId(family, '17841400000000001'));
      expect(id.startsWith(`social_${family}_`)).toBe(true);
      expect(isServiceId(family, id)).toBe(true);
    }
  });

  it('differs across families and platform IDs, and does not expose the platform ID', () => {
    const ids = FAMILIES.flatMap((f) => ['1', '2', 'abc', 'ABC'].map((p) => mintId(f, p)));
    expect(new Set(ids).size).toBe(ids.length);
    const bodies = FAMILIES.map((f) => mintId(f, 'same').replace(/^social_[a-z]+_/, ''));
    expect(new Set(bodies).size).toBe(FAMILIES.length);
    expect(mintId('post', 'visible-platform-id')).not.toContain('visible-platform-id');
  });

  it('isServiceId accepts only well-formed IDs of the named family', () => {
    const id = mintId('post', 'x');
    expect(isServiceId('account', id)).toBe(false);
    expect(isServiceId('post', id.slice(0, -1))).toBe(false);
    expect(isServiceId('post', `${id}a`)).toBe(false);
    expect(isServiceId('post', id.toUpperCase())).toBe(false);
    expect(isServiceId('post', `${id.slice(0, -1)}u`)).toBe(false); // u is not in Crockford base32
    expect(isServiceId('post', 'social_post_')).toBe(false);
  });
});

describe('delivery signer', () => {
  const T = Date.parse('2026-06-01T10:01:00Z');
  const make = (now: number, secret = 'x'.repeat(32)) =>
    createMediaUrlSigner({ baseUrl: 'https://api.example.test', secret, ttlSeconds: 86_400, now: () => now });
  const SOURCE = 'https://cdn.social.example/media/m1.mp4?token=a&b=c';

  function parts(url: string) {
    const u = new URL(url);
    const [, , , , kind, id] = u.pathname.split('/');
    return {
      kind: kind!,
      id: decodeURIComponent(id!),
      query: {
        src: u.searchParams.get('src') ?? undefined,
        exp: u.searchParams.get('exp') ?? undefined,
        sig: u.searchParams.get('sig') ?? undefined,
      },
    };
  }

  it('verifies URLs signed before SIGNING_SECRET changed, with the old one kept as SIGNING_SECRET_PREVIOUS', () => {
    const url = parts(make(T).sign('media', 'social_media_abc', SOURCE));
    const changed = createMediaUrlSigner({
      baseUrl: 'https://api.example.test',
      secret: 'y'.repeat(32),
      previous: ['x'.repeat(32)],
      ttlSeconds: 86_400,
      now: () => T,
    });
    expect(changed.verify(url.kind, url.id, url.query).source).toBe(SOURCE);
    expect(() => make(T, 'y'.repeat(32)).verify(url.kind, url.id, url.query)).toThrow(InvalidSignatureError);
  });

  it('signs a URL under the base URL that verifies back to its source', () => {
    const signer = make(T);
    const url = signer.sign('media', 'social_media_abc', SOURCE);
    expect(url.startsWith('https://api.example.test/v1/social/delivery/media/social_media_abc?')).toBe(true);
    const { kind, id, query } = parts(url);
    const verified = signer.verify(kind, id, query);
    expect(verified.source).toBe(SOURCE);
    expect(verified.expiresAt * 1000).toBeGreaterThanOrEqual(T + 86_400_000);
    expect(verified.expiresAt * 1000).toBeLessThanOrEqual(T + 86_400_000 + 3_600_000);
  });

  it('rejects any altered part as an invalid signature', () => {
    const signer = make(T);
    const { kind, id, query } = parts(signer.sign('media', 'social_media_abc', SOURCE));
    const otherSrc = Buffer.from('https://evil.example/x').toString('base64url');
    const flipped = query.sig!.startsWith('A') ? `B${query.sig!.slice(1)}` : `A${query.sig!.slice(1)}`;
    const attempts: Array<[string, string, typeof query]> = [
      [kind, id, { ...query, sig: flipped }],
      [kind, id, { ...query, src: otherSrc }],
      [kind, id, { ...query, exp: String(Number(query.exp) + 3600) }],
      ['thumbnail', id, query],
      ['avatar', id, query],
      [kind, 'social_media_other', query],
      [kind, id, { ...query, sig: undefined }],
      [kind, id, { ...query, exp: 'soon' }],
    ];
    for (const [k, i, q] of attempts)
      expect(() => signer.verify(k, i, q), `${k} ${i} ${JSON.stringify(q)}`).toThrow(InvalidSignatureError);
    // a URL signed with another secret does not verify either
    const foreign = parts(make(T, 'y'.repeat(32)).sign('media', 'social_media_abc', SOURCE));
    expect(() => signer.verify(foreign.kind, foreign.id, foreign.query)).toThrow(InvalidSignatureError);
  });

  it('rejects an expired URL as expired, and accepts it until then', () => {
    const { kind, id, query } = parts(make(T).sign('avatar', 'social_account_abc', SOURCE));
    const expiresAt = Number(query.exp) * 1000;
    expect(make(expiresAt - 1).verify(kind, id, query).source).toBe(SOURCE);
    expect(() => make(expiresAt).verify(kind, id, query)).toThrow(ExpiredUrlError);
    expect(() => make(expiresAt + 86_400_000).verify(kind, id, query)).toThrow(ExpiredUrlError);
  });

  it('keeps a URL byte-identical within the hour bucket, and moves it in the next', () => {
    const url = make(T).sign('media', 'social_media_abc', SOURCE);
    expect(make(T + 9 * 60_000).sign('media', 'social_media_abc', SOURCE)).toBe(url);
    expect(make(T + 60 * 60_000).sign('media', 'social_media_abc', SOURCE)).not.toBe(url);
  });
});

describe('ID durability', () => {
  it('mints the same IDs as every earlier release (golden vectors: changing them breaks customers)', () => {
    expect(mintId('account', '17841400000000128')).toBe('social_account_jth6cxbv8k7sd86dr37q0p5y1c');
    expect(mintId('post', 'p-full')).toMatch(/^social_post_[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
