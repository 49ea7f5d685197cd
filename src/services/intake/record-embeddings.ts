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
import {
  accountEmbeddingText,
  embeddingTextsHash,
  postEmbeddingText,
  postPassageTexts,
} from '../../text/embedding-text.ts';
import { encodeVector } from '../../text/vector-codec.ts';
import { linksOf } from '../../domain/links.ts';
import { PostponedError } from '../../internal/errors.ts';
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
  /**
   * Embeds what still needs it among the given records and stores the vectors, a slice of posts at
   * a time; returns how many were written. When `stopping` is aborted it throws `PostponedError`
   * between two slices, the slices done kept: the same work run again embeds only the rest.
   */
  embed(work: EmbeddingWork, options?: { retry?: boolean; stopping?: AbortSignal }): Promise<number>;
  /** The same records, those that needed it with a current vector (no store involved: index rebuilds). */
  withVectors<R extends PostRecord | AccountRecord>(kind: EntityKind, records: R[]): Promise<R[]>;
}

/** What is embedded of a record: its head, and for a long post its passages. */
interface Texts {
  head: string;
  passages: string[];
}

const postTexts = (record: PostRecord): Texts => ({
  head: postEmbeddingText(record),
  passages: postPassageTexts(record),
});
/**
 * Posts embedded and written together. A job holds the posts of one observations job (up to 500),
 * and two share the one model thread: in one piece, a worker asked to stop waited for both past
 * the shutdown's 10 s (bge-small-en-v1.5 embeds ~30 texts/s on two cores) and they were cut off,
 * their work lost. 64 posts are ~2 s of the model, one records read and one bulk write.
 */
const POSTS_PER_SLICE = 64;

const accountTexts = (record: AccountRecord): Texts => ({ head: accountEmbeddingText(record), passages: [] });
const hashOf = (texts: Texts) => embeddingTextsHash(texts.head, texts.passages);

function needs<R extends { embedding?: StoredEmbedding }>(record: R, texts: Texts, modelId: string): boolean {
  if (texts.head.length === 0) return false;
  return record.embedding?.model !== modelId || record.embedding.text_hash !== hashOf(texts);
}

/**
 * Creates the record embedder of the worker. The vector is written with the same optimistic
 * concurrency as every merge; if the record's text changed between the read and the write, the
 * vector is not stored (the change that altered the text queued its own embedding).
 */
export function createRecordEmbeddings(deps: {
  store: Pick<IntakeStore, 'posts' | 'accounts' | 'recentPostVectors' | 'refresh'>;
  embedder: DocumentEmbedder;
  /** What is told of written posts (saved searches match them); absent: nothing is told. */
  changes?: PostWriteRecorder;
}): RecordEmbeddings {
  const modelId = deps.embedder.modelId;
  if (modelId === null) throw new Error('createRecordEmbeddings: embeddings are off');
  const lookalikes = createLookalikes({
    store: deps.store,
    modelId,
    embedTopics: (texts) => deps.embedder.embedDocuments(texts),
  });

  /**
   * New stored embeddings for those of `records` whose vector is not current, by position: heads
   * and passages in one call, so the model thread batches them together.
   */
  async function embeddingsFor<R extends { embedding?: StoredEmbedding }>(
    records: readonly R[],
    textsOf: (record: R) => Texts,
  ): Promise<Map<number, StoredEmbedding>> {
    const todo = records
      .map((record, i) => ({ i, texts: textsOf(record) }))
      .filter(({ i, texts }) => needs(records[i]!, texts, modelId!));
    if (todo.length === 0) return new Map();
    const vectors = await deps.embedder.embedDocuments(todo.flatMap(({ texts }) => [texts.head, ...texts.passages]));
    let next = 0;
    return new Map(
      todo.map(({ i, texts }) => {
        const vector = encodeVector(vectors[next++]!);
        // A passage the model cannot read (an empty vector) is left out; the head's stays, as before.
        const passages = texts.passages.map(() => vectors[next++]!).filter((v) => v.length > 0);
        const embedding: StoredEmbedding = { model: modelId!, text_hash: hashOf(texts), vector };
        if (passages.length > 0) embedding.passages = passages.map(encodeVector);
        return [i, embedding];
      }),
    );
  }

  async function embedStore<R extends { embedding?: StoredEmbedding }>(
    store: RecordStore<R>,
    ids: string[],
    textsOf: (r: R) => Texts,
    retry: boolean,
    companionOnly = false,
  ): Promise<Array<{ before: R | null; after: R }>> {
    if (ids.length === 0) return [];
    // Records read back by ID carry their `id` (every stored record has one).
    const current = [...(await store.get(ids)).values()] as Array<R & { id: string }>;
    const computed = new Map(
      [...(await embeddingsFor(current, textsOf))].map(([i, embedding]) => [current[i]!.id, embedding]),
    );
    // A retry also checks the records already current: its earlier attempt may have stored their
    // vectors and died with their vector documents refused (RecordStore.merge's `recheck`).
    if (computed.size === 0 && !retry) return [];
    const outcome = await store.merge(
      retry ? ids : [...computed.keys()],
      (id, record) => {
        const embedding = computed.get(id);
        if (!embedding || !record || hashOf(textsOf(record)) !== embedding.text_hash) return record;
        return { ...record, embedding };
      },
      { recheck: retry, companionOnly },
    );
    return [...outcome.values()];
  }

  return {
    modelId,
    async withVectors(kind, records) {
      const textsOf = (r: PostRecord | AccountRecord) =>
        // `kind` says which records these are (the rebuild passes one index's records).
        kind === 'post' ? postTexts(r as PostRecord) : accountTexts(r as AccountRecord);
      const computed = await embeddingsFor(records, textsOf);
      const embedded = records.map((record, i) =>
        computed.has(i) ? { ...record, embedding: computed.get(i)! } : record,
      );
      if (kind === 'post') return embedded;
      // An account rebuilt gets the lookalike vector of its posts as they are now.
      return (await lookalikes.withLookalikes(embedded as AccountRecord[])) as typeof records;
    },
    postNeedsEmbedding: (record) => needs(record, postTexts(record), modelId),
    accountNeedsEmbedding: (record) => needs(record, accountTexts(record), modelId),
    async embed(work, options = {}) {
      const retry = options.retry === true;
      const posts: PostRecord[] = [];
      for (let start = 0; start < work.posts.length; start += POSTS_PER_SLICE) {
        if (options.stopping?.aborted) throw new PostponedError(`stopped after ${start} posts`);
        // A post's vectors go to its vector document alone: its own document is not indexed again
        // for them (bench/relevance.md, "Vectors written apart").
        const slice = work.posts.slice(start, start + POSTS_PER_SLICE);
        const written = await embedStore(deps.store.posts, slice, postTexts, retry, true);
        // A vector may make a post match a saved search by meaning.
        await deps.changes?.record(written);
        for (const o of written) posts.push(o.after);
      }
      const accounts = (await embedStore(deps.store.accounts, work.accounts, accountTexts, retry)).map((o) => o.after);
      // What an account publishes moved: its lookalike vector follows its posts' new vectors, and
      // every account the work names (its own text, or its posts' topics, changed) is brought up to date.
      const authors = posts.map((p) => linksOf(p).author).filter((a): a is string => a !== null);
      await lookalikes.update([...authors, ...work.accounts]);
      return posts.length + accounts.length;
    },
  };
}
