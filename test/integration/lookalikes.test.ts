import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { createMediaUrlSigner } from '../../src/media/url-signer.ts';
import type { RecordReads } from '../../src/engine/reads.ts';
import { createCursorCodec } from '../../src/query/cursor-codec.ts';
import { createMatchEvidence } from '../../src/services/search/match-evidence.ts';
import { createReferences } from '../../src/services/search/references.ts';
import { createAccountSearchService, createPostSearchService } from '../../src/services/search/search-service.ts';
import { createSimilarEvidence } from '../../src/services/search/similar-evidence.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// "Creators like this one" and "posts like this one" with the real model, through the HTTP API.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
let stack: Stack;

const SKINCARE = [
  'My night-time skincare routine: double cleanse, retinol serum and a thick barrier cream',
  'Morning skincare steps with vitamin C serum and SPF 50 sunscreen',
  'How I cleared my acne with salicylic acid and hydrocolloid patches',
  'Testing five mineral sunscreens for white cast on oily skin',
  'Repairing my skin barrier with ceramides and a gentle cleanser',
];
const COOKING = [
  'Weeknight pasta with garlic, chili and lemon in fifteen minutes',
  'Sourdough bread from starter to crust, my full baking schedule',
  'One-pan chicken thighs with roasted potatoes and rosemary',
  'Meal prep for the week: rice bowls, roasted vegetables and tofu',
  'Homemade ramen broth simmered overnight with miso and pork bones',
];
const FITNESS = [
  'Full body dumbbell workout for beginners at home',
  'How I added 20 kg to my squat in three months of training',
  'Stretching routine after a long run to avoid sore legs',
  'Push pull legs split explained for muscle gain',
  'High protein breakfast before the gym',
];

type Spec = { handle: string; followers: number; captions: string[]; niches: string[]; isPrivate?: boolean };
const ACCOUNTS: Record<string, Spec> = {
  glow: { handle: 'glow.ref', followers: 50_000, captions: SKINCARE, niches: ['skincare'] },
  dewy: {
    handle: 'dewy.skin',
    followers: 40_000,
    captions: SKINCARE.map((c) => `${c} — my take`),
    niches: ['skincare'],
  },
  tiny: { handle: 'tiny.skin', followers: 800, captions: SKINCARE.slice(1), niches: ['skincare'] },
  hidden: { handle: 'hidden.skin', followers: 30_000, captions: SKINCARE, niches: ['skincare'], isPrivate: true },
  chef: { handle: 'chef.home', followers: 60_000, captions: COOKING, niches: ['home_cooking'] },
  lifter: { handle: 'lifter.gym', followers: 20_000, captions: FITNESS, niches: ['fitness'] },
};
const accountId = (key: string) => mintId('account', `lk-${key}`);
const postId = (key: string, i: number) => mintId('post', `lk-${key}-${i}`);

function observations(key: string, spec: Spec, captions = spec.captions, from = 0): unknown[] {
  return [
    accountObs({
      platform_id: `lk-${key}`,
      handle: spec.handle,
      followers_count: spec.followers,
      is_private: spec.isPrivate ?? false,
    }),
    accountEnrichmentObs(`lk-${key}`, { niches: spec.niches, publishing_languages: ['en'] }),
    ...captions.flatMap((caption, n) => {
      const i = from + n;
      return [
        postObs(`lk-${key}`, {
          platform_id: `lk-${key}-${i}`,
          caption,
          posted_at: at(-60 * 24 * (30 - i)),
          views: 1000 * (i + 1),
        }),
        postEnrichmentObs(`lk-${key}-${i}`, { topics: [`${spec.niches[0]}_topic_${i % 2}`] }),
      ];
    }),
  ];
}

beforeAll(async () => {
  stack = await startStack('lookalikes', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  for (const [key, spec] of Object.entries(ACCOUNTS)) {
    const response = await stack.ingest(observations(key, spec));
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

const searchAccounts = (body: unknown) => stack.post('/v1/social/accounts/search', body);
const searchPosts = (body: unknown) => stack.post('/v1/social/posts/search', body);
const ids = (response: { body: { data: Array<{ id: string }> } }) => response.body.data.map((d) => d.id);

/** Every result of a search, page after page of `limit`. */
async function pageAll(url: string, body: Record<string, unknown>, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let response = await stack.post(url, { ...body, limit });
  for (;;) {
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    seen.push(...ids(response));
    if (!response.body.next_cursor) return seen;
    response = await stack.post(url, { cursor: response.body.next_cursor });
  }
}

describe('creators like this one', () => {
  it('ranks the accounts that publish alike first, leaves out the reference and never returns private ones', async () => {
    const response = await searchAccounts({ account: { similar_to: '@Glow.Ref' } });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const found = ids(response);
    expect(found.slice(0, 2).sort()).toEqual([accountId('dewy'), accountId('tiny')].sort());
    expect(found).not.toContain(accountId('glow'));
    expect(found).not.toContain(accountId('hidden'));
    expect(found).toContain(accountId('chef'));
  });

  it('composes with account filters and the publishing scope', async () => {
    const filtered = await searchAccounts({
      account: { similar_to: accountId('glow'), filters: { followers_count: { gte: 10_000 } } },
    });
    expect(ids(filtered)[0]).toBe(accountId('dewy'));
    expect(ids(filtered)).not.toContain(accountId('tiny'));
    const scoped = await searchAccounts({
      account: {
        similar_to: 'glow.ref',
        posts: { minimum_matching_posts: 3, filters: { views: { gte: 3000 } } },
      },
    });
    // tiny's posts have views 1,000 to 4,000: only two reach 3,000.
    expect(ids(scoped)).not.toContain(accountId('tiny'));
    expect(ids(scoped)[0]).toBe(accountId('dewy'));
  });

  it('pages with cursors without repeating or skipping', async () => {
    const whole = ids(await searchAccounts({ account: { similar_to: '@glow.ref' }, limit: 100 }));
    expect(whole.length).toBe(4);
    expect(await pageAll('/v1/social/accounts/search', { account: { similar_to: '@glow.ref' } }, 1)).toEqual(whole);
  });

  it('says why each account matched: shared niches, topics and languages, and its posts closest to the reference', async () => {
    const response = await searchAccounts({ account: { similar_to: '@glow.ref' }, include: ['matches'], limit: 2 });
    const matches = response.body.matches as Array<Record<string, any>>;
    expect(matches.map((m) => m.id)).toEqual(ids(response));
    const dewy = matches.find((m) => m.id === accountId('dewy'))!;
    expect(dewy.shared).toEqual({
      niches: ['skincare'],
      topics: expect.arrayContaining(['skincare_topic_0', 'skincare_topic_1']),
      languages: ['en'],
    });
    expect(dewy.similarity).toBeGreaterThan(0.5);
    expect(dewy.closest_posts).toHaveLength(3);
    const dewyPosts = new Set(ACCOUNTS.dewy!.captions.map((_, i) => postId('dewy', i)));
    for (const post of dewy.closest_posts) expect(dewyPosts.has(post.id)).toBe(true);
    const similarities = dewy.closest_posts.map((p: { similarity: number }) => p.similarity);
    expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
  });

  it('counts facets over exactly the accounts the search can show', async () => {
    const facets = await stack.post('/v1/social/accounts/facets', {
      account: { similar_to: '@glow.ref' },
      facets: [{ field: 'niches' }],
    });
    expect(facets.statusCode).toBe(200);
    expect(facets.body.total).toBe(4);
    expect(facets.body.facets.niches).toEqual(
      expect.arrayContaining([
        { value: 'skincare', count: 2 },
        { value: 'home_cooking', count: 1 },
        { value: 'fitness', count: 1 },
      ]),
    );
  });

  it('follows what the reference publishes: new cooking posts move it towards the cooks', async () => {
    // The chef's similarity to the lifter, and the order. Whether the chef already leads before is
    // a near tie the model's arithmetic decides ("high protein breakfast" is food too): what must
    // hold is that recipes move the lifter towards the cook, and the cook then leads.
    const lookalikes = async () => {
      const response = await searchAccounts({ account: { similar_to: '@lifter.gym' }, include: ['matches'] });
      const matches = response.body.matches as Array<{ id: string; similarity: number }>;
      return { order: ids(response), chef: matches.find((m) => m.id === accountId('chef'))!.similarity };
    };
    const before = await lookalikes();
    // The lifter starts posting recipes, many and recent.
    const cooking = COOKING.flatMap((c) => [c, `${c}, again`]);
    expect((await stack.ingest(observations('lifter', ACCOUNTS.lifter!, cooking, 10))).statusCode).toBe(200);
    const after = await lookalikes();
    expect(after.chef).toBeGreaterThan(before.chef + 0.1);
    expect(after.order[0]).toBe(accountId('chef'));
  });
});

describe('posts like this one', () => {
  it('ranks posts by similarity to the reference, composed with post and author filters, the reference left out', async () => {
    const reference = postId('glow', 0);
    const response = await searchPosts({ post: { similar_to: reference }, limit: 5 });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const found = ids(response);
    expect(found).not.toContain(reference);
    // The two other night-time routines first (a private author's posts are served like any other).
    expect(found.slice(0, 2).sort()).toEqual([postId('dewy', 0), postId('hidden', 0)].sort());
    const cooks = await searchPosts({
      post: { similar_to: 'SClk-glow-0', author: { filters: { niches: { contains_any: ['home_cooking'] } } } },
    });
    expect(ids(cooks).every((id) => id.startsWith(mintId('post', 'lk-chef-').slice(0, 10)))).toBe(true);
    expect(ids(cooks).length).toBeGreaterThan(0);
    const whole = ids(await searchPosts({ post: { similar_to: reference }, limit: 100 }));
    expect(await pageAll('/v1/social/posts/search', { post: { similar_to: reference } }, 7)).toEqual(whole);
  });

  it('says what each post shares with the reference', async () => {
    const response = await searchPosts({
      post: { similar_to: postId('glow', 0), author: { filters: { handle: { eq: 'dewy.skin' } } } },
      include: ['matches'],
      limit: 1,
    });
    const [match] = response.body.matches as Array<Record<string, any>>;
    expect(match).toMatchObject({
      id: postId('dewy', 0),
      retrieved_by: 'semantic',
      fields: [],
      similar: { shared: { topics: ['skincare_topic_0'], author_niches: ['skincare'], languages: ['en'] } },
    });
    expect(match!.similar.similarity).toBeGreaterThan(0.8);
  });
});

describe('a page resolves its reference once', () => {
  /** The searches as the API composes them, over reads that count the reference's lookups. */
  function countedSearches() {
    const { engine, config } = stack.runtime;
    const lookups: string[] = [];
    const reads: RecordReads = {
      ...engine.reads,
      posts: { get: (list) => (lookups.push(...list.map((id) => `post ${id}`)), engine.reads.posts.get(list)) },
      accounts: {
        get: (list) => (lookups.push(...list.map((id) => `account ${id}`)), engine.reads.accounts.get(list)),
      },
    };
    const signer = createMediaUrlSigner({
      baseUrl: config.PUBLIC_BASE_URL,
      secret: config.SIGNING_SECRET,
      ttlSeconds: 60,
    });
    const search = {
      engine: engine.search,
      references: createReferences({ reads, model: () => 'ready' }),
      similarEvidence: createSimilarEvidence({ engine: engine.similarity }),
      signer,
      cursors: createCursorCodec({ secret: config.SIGNING_SECRET, ttlSeconds: 60 }),
      cursorTtlSeconds: 60,
    };
    const posts = createPostSearchService({
      ...search,
      reads,
      evidence: createMatchEvidence({ highlighter: engine.highlights, signer }),
    });
    return { posts, accounts: createAccountSearchService(search), lookups };
  }

  it('reads a post reference once for a first page ranked and explained by it, and a next page only to explain it', async () => {
    const { posts, lookups } = countedSearches();
    const similarTo = { kind: 'id' as const, id: postId('glow', 0) };
    const first = await posts.search({
      kind: 'initial',
      search: { query: null, filter: { kind: 'and', children: [] }, sort: null, include: ['matches'], similarTo },
      limit: 2,
    });
    expect(first.matches?.map((m) => m.id)).toEqual(first.data.map((p) => p.id));
    expect(lookups).toEqual([`post ${postId('glow', 0)}`]);
    const next = await posts.search({ kind: 'continuation', cursor: first.next_cursor!, limit: null });
    expect(next.matches?.map((m) => m.similar?.shared.topics)).toHaveLength(2);
    expect(lookups).toHaveLength(2);
    const unexplained = await posts.search({
      kind: 'initial',
      search: { query: null, filter: { kind: 'and', children: [] }, sort: null, similarTo },
      limit: 2,
    });
    await posts.search({ kind: 'continuation', cursor: unexplained.next_cursor!, limit: null });
    expect(lookups).toHaveLength(3);
  });

  it('reads an account reference once for a first page ranked and explained by it', async () => {
    const { accounts, lookups } = countedSearches();
    const page = await accounts.search({
      kind: 'initial',
      search: {
        query: null,
        filter: { kind: 'and', children: [] },
        posts: null,
        sort: null,
        include: ['matches'],
        similarTo: { kind: 'alias', alias: 'glow.ref' },
      },
      limit: 2,
    });
    expect(page.matches).toHaveLength(2);
    expect(lookups).toEqual([`account ${accountId('glow')}`]);
  });
});

describe('what similar_to refuses', () => {
  const cases: Array<[string, string, unknown, string]> = [
    ['accounts', 'with a query', { account: { similar_to: '@glow.ref', query: 'skincare' } }, '/account/similar_to'],
    ['accounts', 'with a sort', { account: { similar_to: '@glow.ref' }, sort: { by: 'followers_count' } }, '/sort'],
    ['accounts', 'an unknown handle', { account: { similar_to: '@nobody.here' } }, '/account/similar_to'],
    [
      'accounts',
      'a private account',
      { account: { similar_to: '@hidden.skin' } },
      '/account/similar_to: this account is private',
    ],
    ['accounts', 'matches without similar_to', { account: { query: 'skin' }, include: ['matches'] }, '/include'],
    ['accounts', 'an empty reference', { account: { similar_to: ' ' } }, '/account/similar_to'],
    ['posts', 'with a query', { post: { similar_to: postId('glow', 0), query: 'serum' } }, '/post/similar_to'],
    ['posts', 'with a sort', { post: { similar_to: postId('glow', 0) }, sort: { by: 'views' } }, '/sort'],
    ['posts', 'an unknown shortcode', { post: { similar_to: 'SCnothing' } }, '/post/similar_to'],
    [
      'posts',
      'a value neither an ID nor a shortcode',
      { post: { similar_to: 'not a shortcode!' } },
      '/post/similar_to: no tracked post has this ID or shortcode',
    ],
    [
      'accounts',
      'a value neither an ID nor a handle',
      { account: { similar_to: '@no spaces' } },
      '/account/similar_to: no tracked, available account has this ID or handle',
    ],
  ];
  for (const [operation, what, body, says] of cases) {
    it(`answers 422 for ${operation} ${what}`, async () => {
      const response = await stack.post(`/v1/social/${operation}/search`, body);
      expect(response.statusCode, JSON.stringify(response.body)).toBe(422);
      expect(response.body.detail).toContain(says);
    });
  }
});

describe('a reference that can never have a vector', () => {
  it('answers 422 saying why: a post with no text to compare by', async () => {
    const response = await stack.ingest([postObs('lk-chef', { platform_id: 'lk-blank', caption: '', views: 10 })]);
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const refused = await searchPosts({ post: { similar_to: mintId('post', 'lk-blank') } });
    expect(refused.statusCode, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.detail).toMatch(/^\/post\/similar_to: this post has no text to compare by/);
  });

  it('answers 422 saying why when the service runs without the embedding model, not a 503 that never clears', async () => {
    const off = await startStack('lookalikes-off', { EMBEDDINGS: 'off' });
    try {
      expect((await off.ingest(observations('glow', ACCOUNTS.glow!))).statusCode).toBe(200);
      for (const [operation, body, member] of [
        ['accounts', { account: { similar_to: '@glow.ref' } }, '/account/similar_to'],
        ['posts', { post: { similar_to: postId('glow', 0) } }, '/post/similar_to'],
      ] as const) {
        const response = await off.post(`/v1/social/${operation}/search`, body);
        expect(response.statusCode, operation).toBe(422);
        expect(response.body.detail).toBe(
          `${member}: this ${operation.slice(0, -1)} has no vector, and this service runs without an embedding model (BM25 only), so none will be made`,
        );
      }
    } finally {
      await off.close();
    }
  });
});

describe('a reference whose vector is on its way', () => {
  it('answers 503 with Retry-After: it clears by itself once the vector is written', async () => {
    const id = postId('chef', 4);
    // As it stands between its write and its embedding job: text, no vector yet (its vector
    // document gone, and its record naming none).
    await stack.runtime.es.delete({ index: `${stack.config.INDEX_PREFIX}-post-vectors`, id, refresh: true });
    await stack.runtime.engine.intake.posts.merge([id], (_id, record) => {
      if (!record) return null;
      const { embedding: _vector, ...rest } = record;
      return rest;
    });
    const pending = await searchPosts({ post: { similar_to: id } });
    expect(pending.statusCode, JSON.stringify(pending.body)).toBe(503);
    expect(pending.headers['retry-after']).toBeDefined();
    expect(pending.body.detail).toMatch(/no vector to compare with yet/);
  });
});
