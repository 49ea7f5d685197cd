import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateKey, hashSecret, isKeyId, KEY_LENGTH, parseKey } from '../../src/services/keys/key-format.ts';

describe('generateKey', () => {
  it('mints ssk_<16 base32>_<43 base64url> with a key_ id', () => {
    const { id, key, secretHash } = generateKey();
    expect(key).toMatch(/^ssk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$/);
    expect(key).toHaveLength(KEY_LENGTH);
    expect(id).toBe(`key_${key.slice(4, 20)}`);
    expect(isKeyId(id)).toBe(true);
    expect(secretHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('carries a 256-bit secret whose hash is SHA-256 hex', () => {
    const { key, secretHash } = generateKey();
    const secret = key.slice(21);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(secretHash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(hashSecret(secret)).toBe(secretHash);
  });

  it('never repeats ids or secrets', () => {
    const keys = Array.from({ length: 500 }, () => generateKey());
    expect(new Set(keys.map((k) => k.id)).size).toBe(500);
    expect(new Set(keys.map((k) => k.key)).size).toBe(500);
  });
});

describe('parseKey', () => {
  it('round-trips a generated key', () => {
    const { id, key } = generateKey();
    expect(parseKey(key)).toEqual({ id, secret: key.slice(21) });
  });

  it('accepts secrets that contain the separator characters of base64url', () => {
    const secret = '_-'.repeat(21) + 'A';
    expect(parseKey(`ssk_abcdefghijklmnop_${secret}`)).toEqual({
      id: 'key_abcdefghijklmnop',
      secret,
    });
  });

  it.each([
    ['empty', ''],
    ['wrong prefix', 'sk_abcdefghijklmnop_' + 'a'.repeat(43)],
    ['uppercase id', 'ssk_ABCDEFGHIJKLMNOP_' + 'a'.repeat(43)],
    ['id with 0/1/8/9', 'ssk_abcdefghijklmn01_' + 'a'.repeat(43)],
    ['short id', 'ssk_abcdefghijklmno_' + 'a'.repeat(43)],
    ['short secret', 'ssk_abcdefghijklmnop_' + 'a'.repeat(42)],
    ['long secret', 'ssk_abcdefghijklmnop_' + 'a'.repeat(44)],
    ['padding', 'ssk_abcdefghijklmnop_' + 'a'.repeat(42) + '='],
    ['standard base64', 'ssk_abcdefghijklmnop_' + 'a'.repeat(42) + '+'],
    ['trailing space', 'ssk_abcdefghijklmnop_' + 'a'.repeat(43) + ' '],
    ['quoted', '"ssk_abcdefghijklmnop_' + 'a'.repeat(43) + '"'],
    ['key id instead of key', 'key_abcdefghijklmnop'],
  ])('rejects %s', (_label, raw) => {
    expect(parseKey(raw)).toBeNull();
  });
});

describe('isKeyId', () => {
  it('accepts only key_<16 base32>', () => {
    expect(isKeyId('key_abcdefghijklmnop')).toBe(true);
    expect(isKeyId('abcdefghijklmnop')).toBe(false);
    expect(isKeyId('ssk_abcdefghijklmnop')).toBe(false);
    expect(isKeyId('key_abcdefghijklmno')).toBe(false);
  });
});
