import { createHash } from 'node:crypto';
import { hasVector, type PostRecord } from '../../../domain/records.ts';
import { coarse, VOLATILE_AUTHOR_FIELDS, wide } from '../../../domain/volatile-facts.ts';
import {
  COARSE_VECTOR_FIELDS,
  engineVector,
  MODEL_FIELD,
  TEXT_HASH_FIELD,
  VECTOR_DOCUMENT_FIELDS,
} from '../vectors.ts';

/** What a vector document copies of its post (defined with the vector format: ../vectors.ts). */
export { MODEL_FIELD, TEXT_HASH_FIELD, VECTOR_DOCUMENT_FIELDS };

/**
 * A post's vector document: its vectors (the head's and its passages') with the facts a post
 * search's filters read, in an index of their own (`<prefix>-post-vectors`). Why apart: a vector
 * is most of what a rewrite of its document costs the engine (the graph insertion; 95–98 % of a
 * counter-only rewrite at 100k–1M posts), and a re-observation of a post moves its counters, not
 * its text. So the posts index keeps the text and the exact facts, rewritten at every
 * re-observation for what a document without a vector costs, and the vector document is written
 * only when what it holds changes: its vectors, a stable fact, or a bucket of a counter it keeps
 * coarse (bench/steady-state.md, "The vector split: what a search pays"). The author's counters it
 * keeps wider than the posts do (three buckets a decade, `wide`): an author's bucket crossing
 * rewrites every post of the author, and half of a day's vector documents were that fan-out
 * ("The vector split, built"); a filter inside a wide bucket is checked on the posts
 * (queries/vector-filter.ts).
 */

type Doc = Record<string, unknown>;

/** The vector fields of a vector document, and its key: what it is compared by. */
export const VECTOR_FIELDS = ['embedding', 'passages'] as const;
export const FACTS_FIELD = 'facts';

/**
 * A post's vector document and its key (a digest of its facts and of which vectors it holds: their
 * model and text). `complete` is false when the record in hand does not carry the vectors (a post
 * read back from the engine keeps them only in this document): the document then lacks them, and
 * a write must take them from the stored document (writes/stored-vectors.ts).
 */
export interface VectorDocument {
  doc: Doc;
  key: string;
  complete: boolean;
}

/**
 * The vector document of a post, from the post's own document (projection.ts) and record; null
 * while the post has no vector. Its key changes exactly when what it holds does, so a write can tell
 * by the stored key alone whether the document needs writing.
 */
export function projectPostVectors(post: Doc, record: PostRecord): VectorDocument | null {
  const embedding = record.embedding;
  // Before the worker embeds it, or for a text the model cannot read (an empty vector): none.
  if (!embedding || !hasVector(embedding)) return null;
  const doc: Doc = {};
  for (const field of VECTOR_DOCUMENT_FIELDS) {
    const value = post[field];
    if (value === undefined) continue;
    doc[field] = COARSE_VECTOR_FIELDS.has(field) && typeof value === 'number' ? coarse(value) : value;
  }
  if (isObject(doc.author)) doc.author = widened(doc.author);
  // The vectors are named by their model and text: the same text embedded by the same model.
  const key = createHash('sha1')
    .update(JSON.stringify([doc, embedding.model, embedding.text_hash]))
    .digest('base64url');
  doc[FACTS_FIELD] = key;
  doc[MODEL_FIELD] = embedding.model;
  doc[TEXT_HASH_FIELD] = embedding.text_hash;
  if (embedding.vector === undefined) return { doc, key, complete: false };
  doc.embedding = engineVector(embedding.vector);
  const passages = embedding.passages ?? [];
  if (passages.length > 0) doc.passages = passages.map((p) => ({ vector: engineVector(p) }));
  return { doc, key, complete: true };
}

const isObject = (value: unknown): value is Doc => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The post's author facts with the counters on the wide grid (wide of the posts' coarse copy: the same value). */
function widened(author: Doc): Doc {
  const out: Doc = { ...author };
  for (const field of VOLATILE_AUTHOR_FIELDS) {
    const value = out[field];
    if (typeof value === 'number') out[field] = wide(value);
  }
  return out;
}
