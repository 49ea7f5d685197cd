import type { FastifyInstance } from 'fastify';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { createProducer } from '../../src/queues/registry.ts';
import type { PostRecord } from '../../src/domain/records.ts';
import { embeddingTextHash, postEmbeddingText, postPassageTexts } from '../../src/text/embedding-text.ts';
import { cosine } from '../../src/domain/lookalike.ts';
import { accountObs, longCaption, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// The real model (../shared/models/all-MiniLM-L6-v2), end to end: the worker embeds what the
// intake brings, and `post.query` finds posts by meaning, through the HTTP API.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
let stack: Stack;
let lexical: { runtime: TestRuntime; app: FastifyInstance };

const QUERY = 'creators showing a night-time skincare routine with a discount code';
const POSTS = {
  // Shares no word with the query: only its meaning can find it.
  bedtime: 'Bedtime face care steps I swear by: cleanser, serum, moisturiser. Use GLOW20 at checkout for 20% off',
  evening: 'My evening skin care regimen before sleep, products linked in bio',
  tyre: 'How to change a flat tyre on the motorway safely',
  // Shares words with the query, not its meaning.
  decoy: 'Night-time routine code review for the platform team: discount the flaky tests',
};
const id = (key: keyof typeof POSTS) => mintId('post', `sem-${key}`);

beforeAll(async () => {
  stack = await startStack('semantic', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const runtime = openTestRuntime({ ...stack.config, SEARCH_RANKING: 'lexical' });
  await runtime.ready();
  const app = runtime.api.app;
  await app.ready();
  lexical = { runtime, app };
  const response = await stack.ingest([
    accountObs({ platform_id: 'sem-a', handle: 'semantic.author' }),
    ...Object.entries(POSTS).map(([key, caption]) =>
      postObs('sem-a', { platform_id: `sem-${key}`, caption, format: key === 'evening' ? 'carousel' : 'reel' }),
    ),
  ]);
  expect(response.statusCode).toBe(200);
}, 120_000);

afterAll(async () => {
  await lexical?.app.close();
  await lexical?.runtime.close();
  await stack?.close();
});

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((p) => p.id);

describe('semantic ranking with the real model', () => {
  it('says in /readyz which model ranks queries', async () => {
    const response = await stack.get('/readyz');
    expect(response.statusCode).toBe(200);
    expect(response.body.checks.embeddings).toMatch(
      /^ready: all-MiniLM-L6-v2\b.*\bq8\b.*384 dimensions.*queries rank hybrid$/,
    );
  });

  it('gives every post a vector of its current text before ?wait=vectors returns', async () => {
    const records = await stack.runtime.engine.intake.posts.get(
      Object.keys(POSTS).map((k) => id(k as keyof typeof POSTS)),
    );
    for (const record of records.values()) {
      expect(record.embedding?.model).toBe('all-MiniLM-L6-v2@q8');
      expect(record.embedding?.text_hash).toBe(embeddingTextHash(postEmbeddingText(record)));
    }
  });

  it('finds by meaning what shares no word with the query, which BM25 alone cannot', async () => {
    const hybrid = await stack.post('/v1/social/posts/search', { post: { query: QUERY }, limit: 10 });
    expect(hybrid.statusCode).toBe(200);
    const ranked = ids(hybrid.body);
    expect(ranked).toContain(id('bedtime'));
    // The unrelated post ranks below both, or (the relevance floor) is not returned at all.
    const rankOf = (key: keyof typeof POSTS) => (ranked.includes(id(key)) ? ranked.indexOf(id(key)) : Infinity);
    expect(rankOf('bedtime')).toBeLessThan(rankOf('tyre'));
    expect(rankOf('evening')).toBeLessThan(rankOf('tyre'));

    const bm25 = await lexical.app.inject({
      method: 'POST',
      url: '/v1/social/posts/search',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ post: { query: QUERY }, limit: 10 }),
    });
    expect(ids(bm25.json())).not.toContain(id('bedtime'));
    expect(ids(bm25.json())[0]).toBe(id('decoy'));
  });

  it('applies the filters to both retrievers', async () => {
    const response = await stack.post('/v1/social/posts/search', {
      post: { query: QUERY, filters: { format: { in: ['carousel'] } } },
      limit: 10,
    });
    expect(ids(response.body)).toEqual([id('evening')]);
  });

  it('pages a hybrid ranking with cursors in the same order as one page', async () => {
    const whole = ids((await stack.post('/v1/social/posts/search', { post: { query: QUERY }, limit: 100 })).body);
    const walked: string[] = [];
    let page = await stack.post('/v1/social/posts/search', { post: { query: QUERY }, limit: 1 });
    for (;;) {
      expect(page.statusCode).toBe(200);
      walked.push(...ids(page.body));
      if (!page.body.next_cursor) break;
      page = await stack.post('/v1/social/posts/search', { cursor: page.body.next_cursor });
    }
    expect(walked).toEqual(whole);
  });

  it('re-embeds a post through the embeddings queue when its enrichment arrives', async () => {
    const before = (await stack.runtime.engine.intake.posts.get([id('tyre')])).get(id('tyre'))!.embedding!;
    const vectorOf = async () => (await stack.runtime.engine.reads.postVectors([id('tyre')])).get(id('tyre'));
    const vectorBefore = await vectorOf();
    expect(vectorBefore).toHaveLength(384);
    await stack.ingest(
      [
        postEnrichmentObs('sem-tyre', {
          content_summary: 'A roadside safety tutorial on replacing a punctured wheel.',
        }),
      ],
      { wait: false },
    );
    // The new vectors go to the post's vector document, which names the text they are of (the
    // post's own record learns it at its next write).
    const vectorsIndex = `${stack.config.INDEX_PREFIX}-post-vectors`;
    const storedHash = async () =>
      (await stack.runtime.es.get({ index: vectorsIndex, id: id('tyre'), stored_fields: ['text_hash'] })).fields
        ?.text_hash?.[0] as string | undefined;
    let hash: string | undefined;
    for (let i = 0; i < 200; i++) {
      hash = await storedHash();
      if (hash !== before.text_hash) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const record = (await stack.runtime.engine.intake.posts.get([id('tyre')])).get(id('tyre'))!;
    expect(postEmbeddingText(record)).toContain('roadside safety tutorial');
    expect(hash).toBe(embeddingTextHash(postEmbeddingText(record)));
    // The new vector is in the post's vector document (visible after a refresh).
    await stack.runtime.es.indices.refresh({ index: `${stack.config.INDEX_PREFIX}-post-vectors` });
    const vectorAfter = await vectorOf();
    expect(vectorAfter).toHaveLength(384);
    expect(vectorAfter).not.toEqual(vectorBefore);
  });

  it('answers ?wait=true once a post is searchable by its words; its vector follows on the embeddings queue', async () => {
    const queue = createProducer('embeddings', {
      connection: stack.runtime.connections.redis(),
      prefix: stack.config.REDIS_PREFIX,
    });
    const late = mintId('post', 'sem-late');
    await queue.pause();
    try {
      const response = await stack.ingest(
        [postObs('sem-a', { platform_id: 'sem-late', caption: 'A quiet facial massage ritual with jade rollers' })],
        { vectors: false },
      );
      expect(response.statusCode).toBe(200);
      // Not embedded yet (the queue holds the work), and yet found by its words at once.
      expect((await stack.runtime.engine.intake.posts.get([late])).get(late)?.embedding).toBeUndefined();
      const found = await stack.post('/v1/social/posts/search', { post: { query: 'facial massage ritual' } });
      expect(ids(found.body)).toContain(late);
    } finally {
      await queue.resume();
    }
    let embedded: PostRecord | undefined;
    for (let i = 0; i < 120 && !embedded?.embedding; i++) {
      embedded = (await stack.runtime.engine.intake.posts.get([late])).get(late);
      if (!embedded?.embedding) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(embedded?.embedding?.text_hash).toBe(embeddingTextHash(postEmbeddingText(embedded!)));
    await queue.close();
  });

  it("keeps a post's vectors in its vector document alone, and writes them again unchanged when only its facts move", async () => {
    const es = stack.runtime.es;
    const prefix = stack.config.INDEX_PREFIX;
    const tyre = id('tyre');
    const vectorDocument = async () => {
      const hit = (
        await es.search({
          index: `${prefix}-post-vectors`,
          query: { ids: { values: [tyre] } },
          docvalue_fields: ['embedding'],
          _source: false,
          seq_no_primary_term: true,
        })
      ).hits.hits[0]!;
      return { seqNo: hit._seq_no!, vector: Float32Array.from((hit.fields?.['embedding'] as number[][])[0]!) };
    };
    const storedRecord = async () =>
      (await es.get<{ record: PostRecord }>({ index: `${prefix}-posts`, id: tyre }))._source!.record;
    // Once its vector document holds them, a rewrite of the post stores its record without its vectors.
    for (let minute = 1; minute <= 3 && (await storedRecord()).embedding?.vector !== undefined; minute++) {
      const seen = await stack.ingest([
        postObs('sem-a', { platform_id: 'sem-tyre', caption: POSTS.tyre, observed_at: `2026-06-01T11:0${minute}:00Z` }),
      ]);
      expect(seen.statusCode, JSON.stringify(seen.body)).toBe(200);
    }
    const stored = await storedRecord();
    expect(stored.embedding).toEqual({ model: 'all-MiniLM-L6-v2@q8', text_hash: expect.any(String) });
    const before = await vectorDocument();
    const [fresh] = await stack.runtime.embedder.embedDocuments([postEmbeddingText(stored)]);
    expect(cosine(Array.from(before.vector), Array.from(fresh!))).toBeGreaterThan(0.999);

    // A re-observation whose views cross a bucket the vector document keeps: written again, same vector.
    const again = await stack.ingest([
      postObs('sem-a', {
        platform_id: 'sem-tyre',
        caption: POSTS.tyre,
        views: 5_000_000,
        observed_at: '2026-06-02T00:00:00Z',
      }),
    ]);
    expect(again.statusCode, JSON.stringify(again.body)).toBe(200);
    await es.indices.refresh({ index: `${prefix}-post-vectors` });
    const after = await vectorDocument();
    expect(after.seqNo).toBeGreaterThan(before.seqNo);
    expect(after.vector).toEqual(before.vector);
    // And a search by meaning under a filter on those views finds it.
    const found = await stack.post('/v1/social/posts/search', {
      post: { query: 'changing a punctured tyre on the motorway', filters: { views: { gte: 1_000_000 } } },
    });
    expect(found.statusCode).toBe(200);
    expect(ids(found.body)).toEqual([tyre]);
  });

  it('finds a long post by what its tail says, past the head the model reads (passages)', async () => {
    const caption = longCaption({ mend: true });
    const response = await stack.ingest([postObs('sem-a', { platform_id: 'sem-long', caption })]);
    expect(response.statusCode).toBe(200);
    const long = mintId('post', 'sem-long');
    const record = (await stack.runtime.engine.intake.posts.get([long])).get(long)!;
    const passages = postPassageTexts(record);
    // Its vector document holds a vector per passage.
    const vectorDocument = await stack.runtime.es.search({
      index: `${stack.config.INDEX_PREFIX}-post-vectors`,
      query: {
        bool: {
          filter: [{ ids: { values: [long] } }],
          should: [{ nested: { path: 'passages', query: { match_all: {} }, inner_hits: { _source: false } } }],
        },
      },
      _source: false,
    });
    expect(vectorDocument.hits.hits[0]?.inner_hits?.passages?.hits.total).toMatchObject({ value: passages.length });
    expect(passages.length).toBeGreaterThan(2);
    expect(passages.every((p) => p.startsWith('Trail diary, day three\n\n'))).toBe(true);

    const query = 'how to fix a flat bicycle tire';
    const vector = await stack.runtime.embedder.embedQuery(query);
    // The head alone is about the hike: under the similarity floor, so no neighbour by it.
    expect(cosine(vector, (await stack.runtime.engine.reads.postVectors([long])).get(long)!)).toBeLessThan(0.3);
    const hybrid = await stack.post('/v1/social/posts/search', { post: { query }, limit: 10 });
    expect(hybrid.statusCode).toBe(200);
    expect(ids(hybrid.body)).toContain(long);
    const bm25 = await lexical.app.inject({
      method: 'POST',
      url: '/v1/social/posts/search',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ post: { query }, limit: 10 }),
    });
    expect(ids(bm25.json())).not.toContain(long);
  });
});
