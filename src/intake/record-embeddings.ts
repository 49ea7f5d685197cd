import type { Engine, RecordStore } from '../engine/engine.ts';
import type { AccountRecord, PostRecord, StoredEmbedding } from '../model/records.ts';
import { accountEmbeddingText, embeddingTextHash, postEmbeddingText } from '../text/embedding-text.ts';
import { encodeVector } from '../text/vector-codec.ts';

/** What embedding records needs of the embedder. */
export interface DocumentEmbedder {
  /** Model and weights, e.g. `all-MiniLM-L6-v2@q8`; null when embeddings are off. */
  readonly modelId: string | null;
  embedDocuments(texts: readonly string[]): Promise<Float32Array[]>;
}

/** IDs whose vectors are missing or stale, by kind. */
export interface EmbeddingWork {
  posts: string[];
  accounts: string[];
}

/** Gives records the vectors of their current text. */
export interface RecordEmbeddings {
  readonly modelId: string;
  /** True when the record's vector is missing, from another model, or of an older text. */
  postNeedsEmbedding(record: PostRecord): boolean;
  accountNeedsEmbedding(record: AccountRecord): boolean;
  /** Embeds what still needs it among the given records and stores the vectors; returns how many were written. */
  embed(work: EmbeddingWork): Promise<number>;
  /** The same records, those that needed it with a current vector (no store involved: index rebuilds). */
  withVectors<R extends PostRecord | AccountRecord>(kind: 'posts' | 'accounts', records: R[]): Promise<R[]>;
}

function needs<R extends { embedding?: StoredEmbedding }>(record: R, text: string, modelId: string): boolean {
  if (text.length === 0) return false;
  return record.embedding?.model !== modelId || record.embedding.text_hash !== embeddingTextHash(text);
}

/**
 * Creates the record embedder of the worker. The vector is written with the same optimistic
 * concurrency as every merge; if the record's text changed between the read and the write, the
 * vector is not stored (the change that altered the text queued its own embedding).
 */
export function createRecordEmbeddings(deps: { engine: Pick<Engine, 'posts' | 'accounts'>; embedder: DocumentEmbedder }): RecordEmbeddings {
  const modelId = deps.embedder.modelId;
  if (modelId === null) throw new Error('createRecordEmbeddings: embeddings are off');

  async function embedStore<R extends { embedding?: StoredEmbedding }>(store: RecordStore<R>, ids: string[], textOf: (r: R) => string): Promise<number> {
    if (ids.length === 0) return 0;
    const current = await store.get(ids);
    const todo: Array<{ id: string; text: string; hash: string }> = [];
    for (const [id, record] of current) {
      const text = textOf(record);
      if (needs(record, text, modelId!)) todo.push({ id, text, hash: embeddingTextHash(text) });
    }
    if (todo.length === 0) return 0;
    const vectors = await deps.embedder.embedDocuments(todo.map((t) => t.text));
    const computed = new Map(todo.map((t, i) => [t.id, { hash: t.hash, vector: encodeVector(vectors[i]!) }]));
    const outcome = await store.merge([...computed.keys()], (id, record) => {
      const done = computed.get(id)!;
      if (!record || embeddingTextHash(textOf(record)) !== done.hash) return record;
      return { ...record, embedding: { model: modelId!, text_hash: done.hash, vector: done.vector } };
    });
    return outcome.size;
  }

  return {
    modelId,
    async withVectors(kind, records) {
      const textOf = (r: PostRecord | AccountRecord) => (kind === 'posts' ? postEmbeddingText(r as PostRecord) : accountEmbeddingText(r as AccountRecord));
      const todo = records.map((r, i) => ({ i, text: textOf(r) })).filter(({ i, text }) => needs(records[i]!, text, modelId));
      if (todo.length === 0) return records;
      const vectors = await deps.embedder.embedDocuments(todo.map((t) => t.text));
      const out = [...records];
      todo.forEach(({ i, text }, n) => {
        out[i] = { ...records[i]!, embedding: { model: modelId, text_hash: embeddingTextHash(text), vector: encodeVector(vectors[n]!) } };
      });
      return out;
    },
    postNeedsEmbedding: (record) => needs(record, postEmbeddingText(record), modelId),
    accountNeedsEmbedding: (record) => needs(record, accountEmbeddingText(record), modelId),
    async embed(work) {
      const posts = await embedStore(deps.engine.posts, work.posts, postEmbeddingText);
      const accounts = await embedStore(deps.engine.accounts, work.accounts, accountEmbeddingText);
      return posts + accounts;
    },
  };
}
