import { decodeVector } from '../../text/vector-codec.ts';

/**
 * Vectors as the engine reads them: base64 of big-endian float32, which a `dense_vector` field
 * (since Elasticsearch 9.3) and a kNN `query_vector` read as the same floats as a JSON array, bit
 * for bit. A JSON array of 384 numbers cost ~55 µs to print against ~6 µs, 8 KB of request
 * against 2 KB, and the engine the parsing of every number: at each write of a post, its vectors
 * unchanged or not, and twice in every kNN request (head and passages). Measured in
 * bench/steady-state.md, "What a vector costs a re-observation".
 */

/**
 * A record's vector (base64 of little-endian float32: text/vector-codec.ts) for a document: its
 * bytes swapped. A string that is no whole number of floats goes as the numbers it holds.
 */
export function engineVector(encoded: string): string | number[] {
  const bytes = Buffer.from(encoded, 'base64');
  return bytes.length % 4 === 0 ? bytes.swap32().toString('base64') : decodeVector(encoded);
}

/**
 * A query vector for a kNN search. Typed as the client types `query_vector` (numbers), which is
 * how it reaches the engine's JSON: the client sends strings as they are.
 */
export function queryVector(vector: ArrayLike<number>): number[] {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatBE(vector[i]!, i * 4);
  // Safe: the client serializes the request as JSON, where the engine reads this string as the floats.
  return bytes.toString('base64') as unknown as number[];
}
