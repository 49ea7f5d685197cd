import type { IntakeStore } from '../../engine/intake-store.ts';
import type { RecordStore } from '../../engine/records.ts';
import type { EmbeddingJob } from '../../queues/registry.ts';
import type {
  AccountRecord,
  PostRecord,
  StoredEmbedding,
  EntityKind,
  PostWriteRecorder,
} from '../../domain/records.ts';
import { accountEmbeddingText, embeddingTextHash, postEmbeddingText } from '../../text/embedding-text.ts';
import { encodeVector } from '../../text/vector-codec.ts';
import { linksOf } from '../../domain/links.ts';
import { createLookalikes } from './lookalikes.ts';

/** What embedding records needs of the embedder. */
export interface DocumentEmbedder {
  /** Model and weights, e.g. `all-MiniLM-L6-v2@q8`; null when embeddings are off. */
  readonly modelId: string | null;
  embedDocuments(texts: readonly string[]): Promise<Float32Array[]>;
}

/** IDs whose vectors are missing or stale, by kind (the payload of an `embeddings` job). */
export type EmbeddingWork = EmbeddingJob;

/** Gives records the vectors of their current text. */
export interface RecordEmbeddings {
  readonly modelId: string;
  /** True when the record's vector is missing, from another model, or of an older text. */
  postNeedsEmbedding(record: PostRecord): boolean;
  accountNeedsEmbedding(record: AccountRecord): boolean;
  /** Embeds what still needs it among the given records and stores the vectors; returns how many were written. */
  embed(work: EmbeddingWork): Promise<number>;
  /** The same records, those that needed it with a current vector (no store involved: index rebuilds). */
  withVectors<R extends PostRecord | AccountRecord>(kind: EntityKind, records: R[]): Promise<R[]>;
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
export function createRecordEmbeddings(deps: {
  store: Pick<IntakeStore, 'posts' | 'accounts' | 'recentPostVectors' | 'refresh'>;
  embedder: DocumentEmbedder;
  /** Where written posts wait for the saved searches' matching pass; absent: not recorded. */
  changes?: PostWriteRecorder;
}): RecordEmbeddings {
  const modelId = deps.embedder.modelId;
  if (modelId === null) throw new Error('createRecordEmbeddings: embeddings are off');
  const lookalikes = createLookalikes({ store: deps.store, modelId });

  /** New stored embeddings for those of `records` whose vector is not current, by position. */
  async function embeddingsFor<R extends { embedding?: StoredEmbedding }>(
    records: readonly R[],
    textOf: (record: R) => string,
  ): Promise<Map<number, StoredEmbedding>> {
    const todo = records
      .map((record, i) => ({ i, text: textOf(record) }))
      .filter(({ i, text }) => needs(records[i]!, text, modelId!));
    if (todo.length === 0) return new Map();
    const vectors = await deps.embedder.embedDocuments(todo.map((t) => t.text));
    return new Map(
      todo.map(({ i, text }, n) => [
        i,
        { model: modelId!, text_hash: embeddingTextHash(text), vector: encodeVector(vectors[n]!) },
      ]),
    );
  }

  async function embedStore<R extends { embedding?: StoredEmbedding }>(
    store: RecordStore<R>,
    ids: string[],
    textOf: (r: R) => string,
  ): Promise<Array<{ before: R | null; after: R }>> {
    if (ids.length === 0) return [];
    const current = [...(await store.get(ids)).values()] as Array<R & { id: string }>;
    const computed = new Map(
      [...(await embeddingsFor(current, textOf))].map(([i, embedding]) => [current[i]!.id, embedding]),
    );
    if (computed.size === 0) return [];
    const outcome = await store.merge([...computed.keys()], (id, record) => {
      const embedding = computed.get(id)!;
      if (!record || embeddingTextHash(textOf(record)) !== embedding.text_hash) return record;
      return { ...record, embedding };
    });
    return [...outcome.values()];
  }

  return {
    modelId,
    async withVectors(kind, records) {
      const textOf = (r: PostRecord | AccountRecord) =>
        kind === 'post' ? postEmbeddingText(r as PostRecord) : accountEmbeddingText(r as AccountRecord);
      const computed = await embeddingsFor(records, textOf);
      const embedded = records.map((record, i) =>
        computed.has(i) ? { ...record, embedding: computed.get(i)! } : record,
      );
      if (kind === 'post') return embedded;
      // An account rebuilt gets the lookalike vector of its posts as they are now.
      return (await lookalikes.withLookalikes(embedded as AccountRecord[])) as typeof records;
    },
    postNeedsEmbedding: (record) => needs(record, postEmbeddingText(record), modelId),
    accountNeedsEmbedding: (record) => needs(record, accountEmbeddingText(record), modelId),
    async embed(work) {
      const written = await embedStore(deps.store.posts, work.posts, postEmbeddingText);
      // A vector may make a post match a saved search by meaning.
      await deps.changes?.record(written);
      const posts = written.map((o) => o.after);
      const accounts = (await embedStore(deps.store.accounts, work.accounts, accountEmbeddingText)).map((o) => o.after);
      // What an account publishes moved: its lookalike vector follows its posts' new vectors.
      const authors = posts.map((p) => linksOf(p).author).filter((a): a is string => a !== null);
      await lookalikes.update([...authors, ...accounts.map((a) => a.id)]);
      return posts.length + accounts.length;
    },
  };
}
