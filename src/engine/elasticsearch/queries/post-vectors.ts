import type { Client, estypes } from '@elastic/elasticsearch';
import { hasVector, type PostRecord } from '../../../domain/records.ts';
import { encodeVector } from '../../../text/vector-codec.ts';
import { COMPLETE_RESULTS, engineCall, refreshAll } from '../errors.ts';
import { firstString } from '../response-values.ts';
import { MAX_PASSAGES } from '../../../text/embedding-text.ts';
import { MODEL_FIELD, TEXT_HASH_FIELD } from '../vectors.ts';

type Query = estypes.QueryDslQueryContainer;
type Hit = estypes.SearchHit<unknown>;

/** A post's stored vectors as its vector document holds them: the head's, and its passages' in text order. */
export interface StoredPostVectors {
  vector: number[];
  passages: number[][];
  /** The model and text hash the document names (absent from one written before it named them). */
  model?: string;
  textHash?: string;
}

/**
 * The search body that reads posts' vectors from their vector documents
 * (documents/vector-projection.ts), which keep no `_source`: the vectors come from the engine's
 * own copy of them (`docvalue_fields`, float32 exactly as written; checked on 9.4.3, 2026-11-30),
 * the passages' through their nested documents. `scope` picks the vector documents (an index, or a
 * filter on a snapshot spanning posts too).
 */
export function postVectorsBody(
  ids: readonly string[],
  options: { scope?: Query; passages?: boolean } = {},
): estypes.SearchRequest {
  const filter: Query[] = [{ ids: { values: [...ids] } }];
  if (options.scope) filter.push(options.scope);
  const passages: Query[] = options.passages
    ? [
        {
          nested: {
            path: 'passages',
            query: { match_all: {} },
            score_mode: 'none',
            inner_hits: { size: MAX_PASSAGES, _source: false, docvalue_fields: ['passages.vector'] },
          },
        },
      ]
    : [];
  return {
    query: { bool: { filter, ...(passages.length > 0 ? { should: passages } : {}) } },
    size: ids.length,
    _source: false,
    docvalue_fields: ['embedding'],
    stored_fields: [MODEL_FIELD, TEXT_HASH_FIELD],
    track_total_hits: false,
  };
}

/** The vectors of the hits of a {@link postVectorsBody} search, by post ID; a post without a vector document is absent. */
export function readPostVectors(hits: readonly Hit[]): Map<string, StoredPostVectors> {
  const out = new Map<string, StoredPostVectors>();
  for (const hit of hits) {
    const vector = firstVector(hit.fields?.embedding);
    if (!vector) continue;
    const inner = hit.inner_hits?.passages?.hits.hits ?? [];
    const passages = [...inner]
      .sort((a, b) => (a._nested?.offset ?? 0) - (b._nested?.offset ?? 0))
      .flatMap((p) => {
        const v = firstVector(p.fields?.['passages.vector']);
        return v ? [v] : [];
      });
    const model = firstString(hit, MODEL_FIELD);
    const textHash = firstString(hit, TEXT_HASH_FIELD);
    out.set(hit._id!, { vector, passages, ...(model && { model }), ...(textHash && { textHash }) });
  }
  return out;
}

/** The one vector of a docvalue field, as the float32 values written (the engine prints them short). */
function firstVector(values: unknown): number[] | null {
  const first: unknown = Array.isArray(values) ? values[0] : undefined;
  return Array.isArray(first) ? first.map((x) => Math.fround(Number(x))) : null;
}

/** Posts whose vectors one search reads. */
const READ_BATCH = 1000;

/** How {@link storedPostVectors} reads: the passages too; which hits count (given the hit's `_seq_no` and `_primary_term`). */
export interface StoredVectorsOptions {
  passages?: boolean;
  accept?: (hit: Hit) => boolean;
}

/**
 * The stored vectors of `ids` from the vector index `index`, near real time; those not found (or
 * not accepted) are read once more after a refresh of the vector index (a vector document written
 * since the last refresh), so what is absent has no vector document, or none `accept` takes.
 */
export async function storedPostVectors(
  client: Client,
  index: string,
  ids: readonly string[],
  options: StoredVectorsOptions = {},
): Promise<Map<string, StoredPostVectors>> {
  const { accept } = options;
  const read = async (wanted: readonly string[], into: Map<string, StoredPostVectors>) => {
    // In searches of READ_BATCH: a search's hits are bounded (index.max_result_window, 10,000).
    for (let i = 0; i < wanted.length; i += READ_BATCH) {
      const batch = wanted.slice(i, i + READ_BATCH);
      const response = await engineCall(() =>
        client.search({
          ...COMPLETE_RESULTS,
          index,
          ...postVectorsBody(batch, options),
          ...(accept ? { seq_no_primary_term: true } : {}),
        }),
      );
      const hits = accept ? response.hits.hits.filter(accept) : response.hits.hits;
      for (const [id, vectors] of readPostVectors(hits)) into.set(id, vectors);
    }
  };
  const unique = [...new Set(ids)];
  const out = new Map<string, StoredPostVectors>();
  await read(unique, out);
  const unseen = unique.filter((id) => !out.has(id));
  if (unseen.length > 0) {
    await refreshAll(client, index);
    await read(unseen, out);
  }
  return out;
}

/**
 * `records` with the vectors their vector documents in `index` hold where the record does not
 * carry them (a post read back from the engine, or one whose vectors were written after it): what
 * copies a post elsewhere (a rebuild) writes its vector document from. A post whose vectors are
 * nowhere comes without its embedding, so that it is embedded again.
 */
export async function withStoredVectors(client: Client, index: string, records: PostRecord[]): Promise<PostRecord[]> {
  const apart = records
    .filter((r) => r.embedding === undefined || (hasVector(r.embedding) && r.embedding.vector === undefined))
    .map((r) => r.id);
  if (apart.length === 0) return records;
  const stored = await storedPostVectors(client, index, apart, { passages: true });
  return records.map((record) => {
    const vectors = stored.get(record.id);
    // The document names its vectors where it was written after the record (or with it).
    const named =
      vectors?.model && vectors.textHash ? { model: vectors.model, text_hash: vectors.textHash } : record.embedding;
    if (!vectors || !named) {
      if (record.embedding?.vector !== undefined || record.embedding === undefined) return record;
      // Its vectors are nowhere (a vector document lost): the post needs embedding again.
      const { embedding: _lost, ...rest } = record;
      return rest;
    }
    const embedding = { ...named, vector: encodeVector(vectors.vector) };
    if (vectors.passages.length > 0) embedding.passages = vectors.passages.map(encodeVector);
    return { ...record, embedding };
  });
}
