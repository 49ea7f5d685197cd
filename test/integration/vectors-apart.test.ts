import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import type { PostRecord } from '../../src/domain/records.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { createRecordEmbeddings } from '../../src/services/intake/record-embeddings.ts';
import { accountObs, postObs, T0 } from '../helpers/fixtures.ts';
import { searchPage } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A post's vectors are written to its vector document alone: the post's own document (its text
// indexed for BM25, every field a filter reads) is not indexed again for them. Its record learns
// which vectors it has (their model and text hash) from the vector document, at its next write.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const postId = (key: string) => mintId('post', `va-${key}`);
let stack: Stack;
let postsIndex: string;
let vectorsIndex: string;

const observe = (key: string, likes: number, observedAt = T0) =>
  postObs('va-a', {
    platform_id: `va-${key}`,
    caption: `Sourdough starter feeding notes, jar ${key}: rye flour, water and patience`,
    likes,
    observed_at: observedAt,
  });
const parsed = (observation: Record<string, unknown>): Observation[] => {
  const result = parseObservation(observation);
  if (!result.ok) throw new Error(result.detail);
  return [result.value];
};

beforeAll(async () => {
  stack = await startStack('vectors-apart', { MODEL_DIR, SEARCH_RANKING: 'semantic' });
  await stack.runtime.embedder.ready();
  postsIndex = `${stack.config.INDEX_PREFIX}-posts`;
  vectorsIndex = `${stack.config.INDEX_PREFIX}-post-vectors`;
  const response = await stack.ingest([accountObs({ platform_id: 'va-a', handle: 'vectors.apart' })]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

/** The post's own document: its place in its shard's history, and the record it stores. */
async function postDocument(key: string): Promise<{ seqNo: number; record: PostRecord }> {
  const doc = await stack.runtime.es.get<{ record: PostRecord }>({ index: postsIndex, id: postId(key) });
  return { seqNo: doc._seq_no!, record: doc._source!.record };
}

/** A post written by an observations job with nobody embedding it yet. */
function processor() {
  const locks = createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
  return createObservationProcessor({ store: stack.runtime.engine.intake, locks });
}

describe('vectors written apart from their posts', () => {
  it('embeds a post without indexing its own document again, and its record learns of them at its next write', async () => {
    const store = stack.runtime.engine.intake;
    await processor()(parsed(observe('p1', 20)), { refresh: true });
    const written = await postDocument('p1');
    expect(written.record.embedding).toBeUndefined();

    const records = createRecordEmbeddings({ store, embedder: stack.runtime.embedder });
    expect(await records.embed({ posts: [postId('p1')], accounts: [] })).toBe(1);
    const embedded = await postDocument('p1');
    expect(embedded.seqNo).toBe(written.seqNo);
    expect(embedded.record.embedding).toBeUndefined();
    const vectors = await stack.runtime.es.get({
      index: vectorsIndex,
      id: postId('p1'),
      stored_fields: ['embedding_model', 'text_hash'],
    });
    expect(vectors.fields?.embedding_model).toEqual([records.modelId]);

    // Read back, the record names its vectors (from the vector document): it is not embedded again.
    const read = (await store.posts.get([postId('p1')])).get(postId('p1'))!;
    expect(read.embedding).toEqual({ model: records.modelId, text_hash: vectors.fields?.text_hash[0] });
    expect(records.postNeedsEmbedding(read)).toBe(false);
    expect(await records.embed({ posts: [postId('p1')], accounts: [] })).toBe(0);

    // Found by meaning, a reference for similar_to, and counted in its author's lookalike vector.
    await store.publish({ points: [] });
    expect((await searchPage(stack, { post: { query: 'sourdough starter' } })).data.map((p) => p.id)).toContain(
      postId('p1'),
    );
    const similar = await searchPage(stack, { post: { similar_to: postId('p1') } });
    expect(similar.data.map((p) => p.id)).not.toContain(postId('p1'));
    const account = (await store.accounts.get([mintId('account', 'va-a')])).get(mintId('account', 'va-a'))!;
    expect(account.lookalike?.posts).toBe(1);

    // The next observation writes the post, and with it what its record learnt.
    await processor()(parsed(observe('p1', 21, '2026-06-02T10:00:00Z')), { refresh: true });
    expect((await postDocument('p1')).record.embedding).toEqual(read.embedding);
  });

  // An observation written while the post's vectors are written: the vector document written from
  // the post's earlier state, after this write read the vector documents and before it wrote the
  // post. Each side reads after it writes, so one of them sees the other.
  it("brings a vector document written meanwhile up to the post's new facts", async () => {
    const store = stack.runtime.engine.intake;
    await processor()(parsed(observe('p2', 20)), { refresh: true });
    const records = createRecordEmbeddings({ store, embedder: stack.runtime.embedder });
    const likes = (record: PostRecord | null, value: number): PostRecord | null =>
      record && { ...record, raw: { ...record.raw!, v: { ...record.raw!.v, likes: value } } };
    await store.posts.merge([postId('p2')], (_id, record) => likes(record, 75), {
      beforeWrite: async () => {
        expect(await records.embed({ posts: [postId('p2')], accounts: [] })).toBe(1);
      },
    });
    await store.publish({ points: [] });
    // Buckets of likes: … 20, 25, … 60, 80 …: 70 lies inside [60, 80) (the vector documents' bucket,
    // then the posts), 60 is an edge the vector documents answer alone.
    const found = async (filters: Record<string, unknown>) =>
      (await searchPage(stack, { post: { query: 'sourdough starter', filters } })).data.map((p) => p.id);
    expect(await found({ likes: { gte: 70 } })).toEqual([postId('p2')]);
    expect(await found({ likes: { lt: 60 } })).not.toContain(postId('p2'));
  });
});
