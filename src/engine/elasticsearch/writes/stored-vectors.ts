import type { Client } from '@elastic/elasticsearch';
import { COMPLETE_RESULTS, engineCall, refreshAll } from '../errors.ts';
import { postVectorsBody, readPostVectors, type StoredPostVectors } from '../queries/post-vectors.ts';

/** Vector documents one search reads (a search's hits are bounded: index.max_result_window). */
const READ_BATCH = 1000;

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
  const out = new Map<string, StoredPostVectors>();
  const read = async (all: readonly WantedVectors[]) => {
    for (let i = 0; i < all.length; i += READ_BATCH) await readBatch(all.slice(i, i + READ_BATCH));
  };
  const readBatch = async (list: readonly WantedVectors[]) => {
    const response = await engineCall(() =>
      client.search({
        ...COMPLETE_RESULTS,
        index,
        ...postVectorsBody(
          list.map((w) => w.id),
          { passages: true },
        ),
        seq_no_primary_term: true,
      }),
    );
    const versions = new Map(list.map((w) => [w.id, w]));
    const current = new Set(
      response.hits.hits
        .filter((hit) => {
          const w = versions.get(hit._id!);
          return w !== undefined && hit._seq_no === w.seqNo && hit._primary_term === w.primaryTerm;
        })
        .map((hit) => hit._id!),
    );
    for (const [id, vectors] of readPostVectors(response.hits.hits)) if (current.has(id)) out.set(id, vectors);
  };
  if (wanted.length === 0) return out;
  await read(wanted);
  const behind = wanted.filter((w) => !out.has(w.id));
  if (behind.length > 0) {
    await refreshAll(client, index);
    await read(behind);
  }
  return out;
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
