/** RFC 4648 base32 alphabet, lowercase. */
export const RFC4648_LOWER = 'abcdefghijklmnopqrstuvwxyz234567';
/** Crockford's base32 alphabet, lowercase (no i, l, o, u: nothing to misread). */
export const CROCKFORD_LOWER = '0123456789abcdefghjkmnpqrstvwxyz';

/** Base32 of `bytes` in `alphabet`, unpadded. */
export function base32(bytes: Uint8Array, alphabet: string): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  return out;
}
