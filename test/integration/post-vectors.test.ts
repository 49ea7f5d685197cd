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

  // An earlier attempt of a job may have had its post written and its vector document's write
  // refused (here the vector index refuses writes), then died: the retry finds the post unchanged,
  // and only a check of the vector document brings it up to date.
  it('is written again by a retried job whose earlier attempt left it behind', async () => {
    const index = `${stack.config.INDEX_PREFIX}-post-vectors`;
    const es = stack.runtime.es;
    const store = stack.runtime.engine.intake;
    const refusing = async (attempt: () => Promise<unknown>) => {
      await es.indices.putSettings({ index, settings: { 'index.blocks.write': true } });
      try {
        await expect(attempt()).rejects.toThrow();
      } finally {
        await es.indices.putSettings({ index, settings: { 'index.blocks.write': null } });
      }
    };
    const parsed = (observation: Record<string, unknown>): Observation[] => {
      const result = parseObservation(observation);
      if (!result.ok) throw new Error(result.detail);
      return [result.value];
    };
    const locks = createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
    const process = createObservationProcessor({ store, locks });

    // The observations job: l45 moves from the likes bucket [40, 50) to [50, 60).
    const moved = parsed(observe('l45', 52, '2026-06-05T10:00:00Z'));
    await refusing(() => process(moved, { refresh: true }));
    expect(await found({ likes: { gte: 50, lt: 55 } })).toEqual([]);
    await process(moved, { refresh: true, retry: true });
    expect(await found({ likes: { gte: 51, lt: 55 } })).toEqual(['l45']);

    // The embeddings job: a post's new vectors go to its vector document alone, so a post whose
    // vectors were refused does not know of them, and the retry embeds it again.
    const rye = 'Rye sourdough starter notes, jar l65: whole grain flour and a warm kitchen';
    await process(parsed(observe('l65', LIKES.l65, '2026-06-05T10:00:00Z', rye)), { refresh: true });
    const before = await vectorVersion('l65');
    const records = createRecordEmbeddings({ store, embedder: stack.runtime.embedder });
    await refusing(() => records.embed({ posts: [id('l65')], accounts: [] }));
    expect(await vectorVersion('l65')).toBe(before);
    expect(await records.embed({ posts: [id('l65')], accounts: [] }, { retry: true })).toBe(1);
    expect(await vectorVersion('l65')).toBeGreaterThan(before);

    // A follow-up run: the author crosses the vector documents' edge of 20,000 followers, and its
    // posts' vector documents follow it only once the run is retried.
    const author = mintId('account', 'pv-a');
    const followed = async (gte: number) => {
      const page = await searchPage(stack, {
        post: { query: 'sourdough starter', author: { filters: { followers_count: { gte } } } },
        limit: 50,
      });
      return page.data.map((p) => keyOf.get(p.id) ?? p.id).sort();
    };
    const crossed = parsed(
      accountObs({
        platform_id: 'pv-a',
        handle: 'post.vectors',
        followers_count: 25_000,
        observed_at: '2026-06-05T10:00:00Z',
      }),
    );
    await refusing(() => process(crossed, { refresh: true }));
    await store.publish({ points: [] });
    expect(await followed(20_000)).toEqual([]);
    const followUps = createFollowUps({ store, locks });
    await followUps.runDeferred({ accounts: [author], authors: [author], history: [] }, { recheck: true });
    // Visible as a waited batch makes them (the refused attempt never did).
    await store.publish({ points: [] });
    expect(await followed(20_001)).toEqual(['l45', 'l55', 'l58', 'l65']);
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
