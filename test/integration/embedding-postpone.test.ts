import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation } from '../../src/contract/observations.ts';
import { PostponedError } from '../../src/internal/errors.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { createRecordEmbeddings } from '../../src/services/intake/record-embeddings.ts';
import { accountObs, postObs, T0 } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A worker asked to stop mid-job (src/queues/consumers.ts, `JobContext.stopping`) stops its
// embeddings between two slices of posts: what it embedded stays written, and the job run again
// embeds the rest. One slice is 64 posts (record-embeddings.ts): 70 posts make two.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const TOPICS = ['sourdough starter', 'trail running shoes', 'night-time skincare', 'budget travel', 'houseplant care'];
const POSTS = Array.from({ length: 70 }, (_, i) => `ep-${i}`);
let stack: Stack;

beforeAll(async () => {
  // No worker: it would embed the posts before the test does.
  stack = await startStack('embedding-postpone', { MODEL_DIR }, { worker: false });
  await stack.runtime.embedder.ready();
  const observations = [
    accountObs({ platform_id: 'ep-a', handle: 'embedding.postpone' }),
    ...POSTS.map((platformId, i) =>
      postObs('ep-a', {
        platform_id: platformId,
        caption: `Notes ${i} on ${TOPICS[i % TOPICS.length]}: what worked for me this week`,
        observed_at: T0,
      }),
    ),
  ].map((observation) => {
    const parsed = parseObservation(observation);
    if (!parsed.ok) throw new Error(parsed.detail);
    return parsed.value;
  });
  // Written as an observations job writes them, their embeddings left to the test.
  const store = stack.runtime.engine.intake;
  const locks = createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
  await createObservationProcessor({ store, locks })(observations, { refresh: true });
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

/** How many of the posts have a vector document (a real-time read: no refresh needed). */
async function embedded(): Promise<number> {
  const docs = await stack.runtime.es.mget({
    index: `${stack.config.INDEX_PREFIX}-post-vectors`,
    ids: POSTS.map((p) => mintId('post', p)),
    stored_fields: [],
  });
  return docs.docs.filter((d) => 'found' in d && d.found).length;
}

describe('embeddings postponed by a stopping worker', () => {
  it('keeps the slices written before the stop, and the work run again embeds the rest', async () => {
    expect(await embedded()).toBe(0);
    const stopping = new AbortController();
    // The process is told to stop while the first slice is written.
    const records = createRecordEmbeddings({
      store: stack.runtime.engine.intake,
      embedder: stack.runtime.embedder,
      changes: { record: async () => stopping.abort() },
    });
    const work = { posts: POSTS.map((p) => mintId('post', p)), accounts: [mintId('account', 'ep-a')] };
    await expect(records.embed(work, { stopping: stopping.signal })).rejects.toThrow(PostponedError);
    expect(await embedded()).toBe(64);

    // Run again as the queue runs a postponed job: a retry, not stopped.
    const again = createRecordEmbeddings({ store: stack.runtime.engine.intake, embedder: stack.runtime.embedder });
    await again.embed(work, { retry: true });
    expect(await embedded()).toBe(POSTS.length);
  }, 120_000);
});
