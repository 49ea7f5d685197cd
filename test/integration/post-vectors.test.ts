import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createFollowUps } from '../../src/services/intake/follow-ups.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { createRecordEmbeddings } from '../../src/services/intake/record-embeddings.ts';
import { accountObs, postObs, T0 } from '../helpers/fixtures.ts';
import { searchPage } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A post's vectors live in a document of their own with its filter facts, its counters coarse
// (src/engine/elasticsearch/documents/vector-projection.ts): a re-observation rewrites it only when
// a counter changes bucket, and a search's filters stay exact on the semantic side (a bound inside
// a bucket is checked on the posts: reads/nearest-posts.ts). Buckets of likes: … 40, 50, 60, 80 …
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const LIKES = { l45: 45, l55: 55, l58: 58, l65: 65, l200: 200 } as const;
type Key = keyof typeof LIKES;
const id = (key: Key) => mintId('post', `pv-${key}`);
const keyOf = new Map(Object.keys(LIKES).map((k) => [id(k as Key), k]));
const caption = (key: Key) => `Sourdough starter feeding notes, jar ${key}: flour, water and patience`;
let stack: Stack;

const observe = (key: Key, likes: number, observedAt: string, text = caption(key)) =>
  postObs('pv-a', { platform_id: `pv-${key}`, caption: text, likes, observed_at: observedAt });

beforeAll(async () => {
  stack = await startStack('post-vectors', { MODEL_DIR, SEARCH_RANKING: 'semantic' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'pv-a', handle: 'post.vectors' }),
    ...Object.entries(LIKES).map(([key, likes]) => observe(key as Key, likes, T0)),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

/** The posts a semantic search finds under `filters`, by key, sorted. */
async function found(filters: Record<string, unknown>): Promise<string[]> {
  const page = await searchPage(stack, { post: { query: 'sourdough starter', filters }, limit: 50 });
  return page.data.map((p) => keyOf.get(p.id) ?? p.id).sort();
}

/** The vector document's place in its shard's history: it moves with every write of it. */
async function vectorVersion(key: Key): Promise<number> {
  const doc = await stack.runtime.es.get({ index: `${stack.config.INDEX_PREFIX}-post-vectors`, id: id(key) });
  return doc._seq_no!;
}

describe("posts' vector documents", () => {
  it('answers counter filters exactly on the semantic side, on a bucket edge or inside a bucket, negated or not', async () => {
    expect(await found({})).toEqual(['l200', 'l45', 'l55', 'l58', 'l65']);
    // 57 lies in the bucket [50, 60): 55 shares it with 58, and only the posts can tell them apart.
    expect(await found({ likes: { gte: 57 } })).toEqual(['l200', 'l58', 'l65']);
    expect(await found({ likes: { lt: 57 } })).toEqual(['l45', 'l55']);
    expect(await found({ likes: { gt: 55, lte: 65 } })).toEqual(['l58', 'l65']);
    // On an edge the vector documents answer alone.
    expect(await found({ likes: { gte: 60 } })).toEqual(['l200', 'l65']);
  });

  it('is left alone by a re-observation within a bucket, rewritten across one, and filtered exactly right after either', async () => {
    const before = await vectorVersion('l55');
    const later = '2026-06-02T10:00:00Z';
    expect((await stack.ingest([observe('l55', 57, later)])).statusCode).toBe(200);
    expect(await vectorVersion('l55')).toBe(before);
    expect(await found({ likes: { gte: 57 } })).toEqual(['l200', 'l55', 'l58', 'l65']);
    expect(await found({ likes: { gte: 58 } })).toEqual(['l200', 'l58', 'l65']);

    const latest = '2026-06-03T10:00:00Z';
    expect((await stack.ingest([observe('l55', 61, latest)])).statusCode).toBe(200);
    expect(await vectorVersion('l55')).toBeGreaterThan(before);
    expect(await found({ likes: { gte: 60 } })).toEqual(['l200', 'l55', 'l65']);
    expect(await found({ likes: { lt: 60 } })).toEqual(['l45', 'l58']);
  });

  it('loses its vector document when its text becomes one the model cannot read, and is no longer found by meaning', async () => {
    const thai = 'วิธีดูแลผิวหน้าให้สวยใส';
    expect((await stack.ingest([observe('l200', 200, '2026-06-04T10:00:00Z', thai)])).statusCode).toBe(200);
    const index = `${stack.config.INDEX_PREFIX}-post-vectors`;
    expect(await stack.runtime.es.exists({ index, id: id('l200') })).toBe(false);
    expect(await found({})).not.toContain('l200');
  });

  // An earlier attempt of a job may have had its post written and its vector document refused, then
  // died: the retry finds the post unchanged, and only a check of the vector document brings it back.
  it('is written again by a retried job whose earlier attempt left it behind', async () => {
    const index = `${stack.config.INDEX_PREFIX}-post-vectors`;
    const es = stack.runtime.es;
    const lose = async (key: Key) => {
      await es.delete({ index, id: id(key), refresh: true });
      expect(await es.exists({ index, id: id(key) })).toBe(false);
    };

    // The observations job: the post's observation again, as the retried job carries it.
    await lose('l45');
    const parsed = parseObservation(observe('l45', LIKES.l45, T0));
    if (!parsed.ok) throw new Error(parsed.detail);
    const observations: Observation[] = [parsed.value];
    const locks = createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
    const process = createObservationProcessor({ store: stack.runtime.engine.intake, locks });
    await process(observations, { refresh: true });
    expect(await es.exists({ index, id: id('l45') })).toBe(false);
    await process(observations, { refresh: true, retry: true });
    expect(await es.exists({ index, id: id('l45') })).toBe(true);
    expect(await found({ likes: { lt: 50 } })).toEqual(['l45']);

    // The embeddings job: the post's vector is current, so only the retry looks at its document.
    await lose('l65');
    const records = createRecordEmbeddings({ store: stack.runtime.engine.intake, embedder: stack.runtime.embedder });
    expect(await records.embed({ posts: [id('l65')], accounts: [] })).toBe(0);
    expect(await es.exists({ index, id: id('l65') })).toBe(false);
    await records.embed({ posts: [id('l65')], accounts: [] }, { retry: true });
    expect(await es.exists({ index, id: id('l65') })).toBe(true);
    await es.indices.refresh({ index });
    // A filter no earlier search used: the deletion above went around the service's result cache.
    expect(await found({ likes: { gte: 62 } })).toContain('l65');

    // A follow-up run (the author's posts rewritten with its new facts), retried.
    await lose('l58');
    const followUps = createFollowUps({ store: stack.runtime.engine.intake, locks });
    const author = mintId('account', 'pv-a');
    const work = { accounts: [author], authors: [author], history: [] };
    await followUps.runDeferred(work);
    expect(await es.exists({ index, id: id('l58') })).toBe(false);
    await followUps.runDeferred(work, { recheck: true });
    expect(await es.exists({ index, id: id('l58') })).toBe(true);
  });
});

// An author's counters are wider still on the vector documents (1-2-5 a decade, against the posts'
// ten buckets a decade): an author crossing one of the posts' edges fans out to its posts but not
// to their vector documents, and an author filter between two wide edges is checked on the posts.
describe("authors' counters on the vector documents", () => {
  const FOLLOWERS = { f1: 10_500, f2: 13_000, f3: 25_000 } as const;
  type Author = keyof typeof FOLLOWERS;
  const postOf = (k: Author) => mintId('post', `pv-${k}-post`);
  const authorOf = new Map(Object.keys(FOLLOWERS).map((k) => [postOf(k as Author), k]));
  const author = (k: Author, followers: number, observedAt: string) =>
    accountObs({ platform_id: `pv-${k}`, handle: `vectors.${k}`, followers_count: followers, observed_at: observedAt });

  beforeAll(async () => {
    const response = await stack.ingest([
      ...(Object.keys(FOLLOWERS) as Author[]).map((k) => author(k, FOLLOWERS[k], T0)),
      ...(Object.keys(FOLLOWERS) as Author[]).map((k) =>
        postObs(`pv-${k}`, { platform_id: `pv-${k}-post`, caption: `Sourdough starter diary of ${k}`, likes: 30 }),
      ),
    ]);
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  }, 120_000);

  /** These authors' posts a semantic search finds under a followers filter, by author, sorted. */
  async function byFollowers(bounds: Record<string, number>): Promise<string[]> {
    const page = await searchPage(stack, {
      post: { query: 'sourdough starter', author: { filters: { followers_count: bounds } } },
      limit: 50,
    });
    return page.data
      .map((p) => authorOf.get(p.id))
      .filter((k): k is string => k !== undefined)
      .sort();
  }

  const seqNo = async (k: Author) =>
    (await stack.runtime.es.get({ index: `${stack.config.INDEX_PREFIX}-post-vectors`, id: postOf(k) }))._seq_no!;

  it('answers author filters exactly, and rewrites a vector document only when its author crosses a wide edge', async () => {
    // 12,000 is a posts' edge inside the wide bucket [10,000, 20,000): checked on the posts.
    expect(await byFollowers({ gte: 12_000 })).toEqual(['f2', 'f3']);
    expect(await byFollowers({ lt: 12_000 })).toEqual(['f1']);
    expect(await byFollowers({ gte: 11_000 })).toEqual(['f2', 'f3']);
    expect(await byFollowers({ gte: 20_000 })).toEqual(['f3']);

    // Across the posts' edge 12,000, within the wide bucket: the post is rewritten, its vector document is not.
    const before = await seqNo('f1');
    expect((await stack.ingest([author('f1', 12_500, '2026-06-02T10:00:00Z')])).statusCode).toBe(200);
    expect(await seqNo('f1')).toBe(before);
    expect(await byFollowers({ gte: 12_000 })).toEqual(['f1', 'f2', 'f3']);
    expect(await byFollowers({ lt: 12_600 })).toEqual(['f1']);

    // Across the wide edge 20,000: the vector document follows.
    expect((await stack.ingest([author('f1', 21_000, '2026-06-03T10:00:00Z')])).statusCode).toBe(200);
    expect(await seqNo('f1')).toBeGreaterThan(before);
    expect(await byFollowers({ gte: 20_000 })).toEqual(['f1', 'f3']);
    expect(await byFollowers({ lt: 20_000 })).toEqual(['f2']);
  });
});
