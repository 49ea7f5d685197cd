import { VOLATILE_POST_FIELDS } from '../../domain/volatile-facts.ts';
import { FIELDS_BY_KEY, type FieldKey } from '../../query/fields.ts';
import { decodeVector } from '../../text/vector-codec.ts';
import { esPath } from './queries/filter-compiler.ts';

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

/**
 * Quantizes a vector to int8 with one scale (what the int8 HNSW index does to documents anyway),
 * so that the cursor can carry it in 520 characters and every page reuses it bit for bit.
 */
export function quantizeVector(vector: ArrayLike<number>): string {
  let max = 0;
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i]!));
  const scale = max > 0 ? max / 127 : 1;
  const bytes = Buffer.alloc(4 + vector.length);
  bytes.writeFloatLE(scale, 0);
  for (let i = 0; i < vector.length; i++) bytes.writeInt8(Math.round(vector[i]! / scale), 4 + i);
  return bytes.toString('base64url');
}

/** The vector a quantized string stands for. */
export function dequantizeVector(encoded: string): number[] {
  const bytes = Buffer.from(encoded, 'base64url');
  const scale = bytes.readFloatLE(0);
  const out = new Array<number>(bytes.length - 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt8(4 + i) * scale;
  return out;
}

/**
 * Filter fields a post's vector document (documents/vector-projection.ts) does not hold:
 * `post.observed_at` moves at every observation. A filter on it reads as "any" on the vector
 * documents and is checked on the posts (queries/vector-filter.ts).
 */
export const FIELDS_NOT_ON_VECTORS: ReadonlySet<FieldKey> = new Set<FieldKey>(['post.observed_at']);

/**
 * The stored fields of a post's vector document naming the vectors it holds: their model and the
 * hash of their text. A post's vectors are written to that document alone (its own document is not
 * indexed again for them), so these are where that is known first; the post's record learns them
 * at its next write (the post store's companion `adopt`, engine.ts).
 */
export const MODEL_FIELD = 'embedding_model';
export const TEXT_HASH_FIELD = 'text_hash';

/** The posts fields a vector document keeps coarse (src/domain/volatile-facts.ts). */
export const COARSE_VECTOR_FIELDS: ReadonlySet<string> = new Set(
  VOLATILE_POST_FIELDS.map((name) => esPath(`post.${name}`)),
);

/**
 * The top-level posts fields a vector document copies: every field a post or author filter reads
 * (the filter registry, src/query/fields.ts, placed as the filter compiler places them), what every
 * post search adds (`servable`) and what the account evidence reads (`status`).
 */
export const VECTOR_DOCUMENT_FIELDS: readonly string[] = [
  ...new Set([
    'id',
    'servable',
    'status',
    ...[...FIELDS_BY_KEY.keys()]
      .filter((key) => (key.startsWith('post.') || key.startsWith('author.')) && !FIELDS_NOT_ON_VECTORS.has(key))
      .map((key) => esPath(key).split('.')[0]!),
  ]),
];
