/**
 * Vectors as they travel inside records and cursors: float32 little-endian, base64. Compact (2 KB
 * for 384 dimensions instead of ~7 KB of JSON numbers) and exact.
 */
export function encodeVector(vector: Float32Array | readonly number[]): string {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  const bytes = Buffer.alloc(floats.length * 4);
  for (let i = 0; i < floats.length; i++) bytes.writeFloatLE(floats[i]!, i * 4);
  return bytes.toString('base64');
}

/** The inverse of {@link encodeVector}, as plain numbers (what a JSON engine request needs). */
export function decodeVector(encoded: string): number[] {
  const bytes = Buffer.from(encoded, 'base64');
  const out = new Array<number>(bytes.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
