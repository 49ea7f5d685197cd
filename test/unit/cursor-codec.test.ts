import { createHmac } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ExpiredCursorError, ValidationFailedError } from '../../src/internal/errors.ts';
import { createCursorCodec } from '../../src/query/cursor-codec.ts';

const secret = 'unit-test-signing-secret-0123456789abcdef';
let clock = 1_800_000_000_000;
const codec = createCursorCodec({ secret, ttlSeconds: 3600, now: () => clock });
const payload = {
  v: 1,
  kind: 'posts',
  search: { query: 'kite festival', filter: { kind: 'and', children: [] } },
  limit: 20,
  state: { pit: 'p'.repeat(200), after: [3.5, 'post_x'] },
};

describe('cursor codec', () => {
  it('round-trips the payload, with its expiry', () => {
    const decoded = codec.decode(codec.encode(payload));
    expect(decoded).toEqual({ ...payload, exp: clock / 1000 + 3600 });
  });

  it('rejects an altered, truncated or foreign cursor as 422, and an old one as 410', () => {
    const cursor = codec.encode(payload);
    const [body, sig] = cursor.split('.');
    const flipped = body!.slice(0, 10) + (body![10] === 'A' ? 'B' : 'A') + body!.slice(11);
    for (const bad of [`${flipped}.${sig}`, cursor.slice(0, -3), 'garbage', `${body}.${sig}.x`]) {
      expect(() => codec.decode(bad)).toThrow(ValidationFailedError);
    }
    const other = createCursorCodec({ secret: `${secret}-other`, ttlSeconds: 3600, now: () => clock });
    expect(() => other.decode(cursor)).toThrow(ValidationFailedError);
    // SIGNING_SECRET changed with the old one kept as SIGNING_SECRET_PREVIOUS: still verifies.
    const changed = createCursorCodec({
      secret: `${secret}-other`,
      previous: [secret],
      ttlSeconds: 3600,
      now: () => clock,
    });
    expect(changed.decode(cursor)).toEqual(codec.decode(cursor));
    clock += 3601 * 1000;
    try {
      expect(() => codec.decode(cursor)).toThrow(ExpiredCursorError);
    } finally {
      clock -= 3601 * 1000;
    }
  });

  it('still reads cursors issued with zlib default compression (before the small window)', () => {
    const body = deflateRawSync(Buffer.from(JSON.stringify({ ...payload, exp: clock / 1000 + 60 })), {
      level: 1,
    }).toString('base64url');
    const sig = createHmac('sha256', secret).update(`cursor\n${body}`).digest('base64url');
    expect(codec.decode(`${body}.${sig}`)).toMatchObject({ kind: 'posts', limit: 20 });
  });
});
