import type { Client } from '@elastic/elasticsearch';
import type { PostRecord } from '../../../domain/records.ts';
import { MODEL_FIELD, TEXT_HASH_FIELD } from '../documents/vector-projection.ts';
import { storedPostVectors, type StoredPostVectors } from '../queries/post-vectors.ts';
import type { StoredCompanion } from './companions.ts';

/** A stored vector document wanted as of the version a write read. */
export interface WantedVectors {
  id: string;
  seqNo: number;
  primaryTerm: number;
}

/**
 * The vectors of stored vector documents, each exactly as of the version a write read in real
 * time: the engine gives vectors back only to a search (the documents keep no `_source`), which
 * sees what was last refreshed, so a document written since is read again after one refresh of the
 * vector index. Answers those read at their version; one that moved again is left out (its writer
 * lost a race anyway, and reads again).
 */
export async function storedVectorsAt(
  client: Client,
  index: string,
  wanted: readonly WantedVectors[],
): Promise<Map<string, StoredPostVectors>> {
  const versions = new Map(wanted.map((w) => [w.id, w]));
  return storedPostVectors(
    client,
    index,
    wanted.map((w) => w.id),
    {
      passages: true,
      accept: (hit) => {
        const w = versions.get(hit._id!);
        return w !== undefined && hit._seq_no === w.seqNo && hit._primary_term === w.primaryTerm;
      },
    },
  );
}

/**
 * The post store's companion `restore` (record-store.ts): a vector document whose facts moved is
 * written again with the vectors it holds, read as of the version the write read.
 */
export function restorePostVectors(client: Client, index: string) {
  return async (pending: ReadonlyArray<WantedVectors & { doc: Record<string, unknown> }>): Promise<Set<string>> => {
    const stored = await storedVectorsAt(client, index, pending);
    for (const { id, doc } of pending) {
      const vectors = stored.get(id);
      if (!vectors) continue;
      doc.embedding = vectors.vector;
      if (vectors.passages.length > 0) doc.passages = vectors.passages.map((vector) => ({ vector }));
    }
    return new Set(stored.keys());
  };
}

/**
 * The post store's companion `adopt` (engine.ts): a post whose vectors were written to its vector
 * document alone takes their model and text hash from it, as its record would hold them once
 * written (documents/projection.ts, storedPostRecord). Unchanged when the record carries vectors
 * itself (it is being written with them), already names the same ones, or the document predates
 * these fields (its record names its vectors: they were written with it).
 */
export function adoptStoredEmbedding(record: PostRecord, stored: StoredCompanion): PostRecord {
  const model = stored.fields[MODEL_FIELD];
  const textHash = stored.fields[TEXT_HASH_FIELD];
  if (model === undefined || textHash === undefined || record.embedding?.vector !== undefined) return record;
  if (record.embedding?.model === model && record.embedding.text_hash === textHash) return record;
  return { ...record, embedding: { model, text_hash: textHash } };
}
