/** A saved search's query embedding as stored: base64 of little-endian float32. */
export function encodeQueryVector(vector: ArrayLike<number>): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64');
}

/** The inverse of {@link encodeQueryVector}. */
export function decodeQueryVector(encoded: string): Float32Array {
  const bytes = Buffer.from(encoded, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
