import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import type { AlertQuery } from '../../src/engine/alerts.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Saved searches are matched by evaluating each one's engine query against the posts in memory
// (alert-matching.ts, src/percolator): each saved search must match exactly the posts its own
// post search finds. Checked here against the post search API, on hand-made posts and on the
// demo corpus, the posts read back as the recovery pass reads them.
const WORDS = ['sourdough', 'espresso', 'kayak', 'retinol', 'woodworking', 'budget', 'marathon', 'origami'];
const TAGS = ['baking', 'coffee', 'outdoors', 'skincare'];
const FORMATS = ['reel', 'image', 'carousel'] as const;
let stack: Stack;
const postIds: string[] = [];

beforeAll(async () => {
  stack = await startStack('alert-matching', { SEARCH_RANKING: 'lexical' });
  const posts = Array.from({ length: 60 }, (_, i) => {
    const words = [WORDS[i % 8]!, WORDS[(i * 3 + 1) % 8]!];
    postIds.push(mintId('post', `am-${i}`));
    return postObs('am-author', {
      platform_id: `am-${i}`,
      caption: `Notes on ${words.join(' and ')} #${TAGS[i % 4]}`,
      hashtags: [TAGS[i % 4]],
      views: 100 * (i + 1),
      format: FORMATS[i % 3],
    });
  });
  const response = await stack.ingest([accountObs({ platform_id: 'am-author', handle: 'am.author' }), ...posts]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
});

afterAll(async () => {
  await stack?.close();
});

/** Which of the posts `ids` each query matches, the posts read as they are stored. */
async function matchStored(ids: readonly string[], queries: readonly AlertQuery[]) {
  const records = await stack.runtime.engine.reads.posts.get(ids);
  return stack.runtime.engine.alerts.match([...records.values()], queries);
}

/** Every post a post search finds, across its pages. */
async function searched(post: object): Promise<string[]> {
  const found: string[] = [];
  let body: object = { post, limit: 100 };
  for (;;) {
    const page = await stack.post('/v1/social/posts/search', body);
    expect(page.statusCode, JSON.stringify(page.body)).toBe(200);
    found.push(...(page.body.data as Array<{ id: string }>).map((p) => p.id));
    if (!page.body.has_more) return found.sort();
    body = { cursor: page.body.next_cursor };
  }
}

describe('matching many saved searches at once', () => {
  it('gives each saved search exactly the posts its own post search finds', async () => {
    const scopes: object[] = Array.from({ length: 150 }, (_, i) => {
      const views = { gte: 100 * ((i * 7) % 60) };
      return i % 3 === 0
        ? { query: `${WORDS[i % 8]}${i % 2 === 0 ? ` ${WORDS[(i + 3) % 8]}` : ''}` }
        : i % 3 === 1
          ? { filters: { hashtags: { contains_any: [TAGS[i % 4]] }, views } }
          : { query: WORDS[(i * 5) % 8], filters: { views, format: { in: [FORMATS[i % 3]] } } };
    });
    // Long queries (hundreds of words): each of their words is a way in.
    const filler = Array.from({ length: 240 }, (_, i) => `fl${i.toString(36)}`).join(' ');
    for (const word of WORDS) scopes.push({ query: `${word} ${filler}` });
    const queries: AlertQuery[] = scopes.map((post, i) => {
      const request = parsePostSearchRequest({ post });
      if (request.kind !== 'initial') throw new Error('expected an initial request');
      return { id: `ss_${i}`, search: request.search, vector: null };
    });
    const matches = await matchStored(postIds, queries);
    let matching = 0;
    for (const [i, post] of scopes.entries()) {
      const expected = await searched(post);
      expect([...(matches.get(`ss_${i}`) ?? [])].sort(), JSON.stringify(post)).toEqual(expected);
      if (expected.length > 0) matching++;
    }
    // Not a vacuous check: most saved searches match something, and none matches everything.
    expect(matching).toBeGreaterThan(100);
    expect(Math.max(...[...matches.values()].map((s) => s.size))).toBeLessThan(postIds.length);
  });

  it('agrees with post search on the demo corpus: eight languages, entities, emoji, filters', async () => {
    const corpus = [...generateObservations({ posts: 240, accounts: 24, seed: 11 })];
    for (let i = 0; i < corpus.length; i += 500) {
      const response = await stack.ingest(corpus.slice(i, i + 500), { vectors: false });
      expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    }
    const posts = corpus.filter((o) => o['kind'] === 'post');
    const ids = posts.map((o) => mintId('post', String(o['platform_id'])));
    const scopes = corpusScopes(corpus);
    const queries = scopes.map((post, i) => alertQuery(`demo_${i}`, post));
    const matches = await matchStored(ids, queries);
    let matching = 0;
    for (const [i, post] of scopes.entries()) {
      const expected = (await searched(post)).filter((id) => ids.includes(id));
      expect([...(matches.get(`demo_${i}`) ?? [])].sort(), JSON.stringify(post)).toEqual(expected);
      if (expected.length > 0) matching++;
    }
    expect(matching).toBeGreaterThan(scopes.length / 2);
  });
});

function alertQuery(id: string, post: object): AlertQuery {
  const request = parsePostSearchRequest({ post });
  if (request.kind !== 'initial') throw new Error('expected an initial request');
  return { id, search: request.search, vector: null };
}

/**
 * Saved searches drawn from the demo corpus: caption words in every language it holds (Japanese
 * runs included), hashtags bare and with `#`, handles, quoted phrases, questions, emoji, stop words
 * only, each alone or with filters of every kind (post ranges and keywords, author facts, the
 * author's counters, which the pass resolves through the accounts index).
 */
function corpusScopes(corpus: ReadonlyArray<Record<string, unknown>>): object[] {
  const posts = corpus.filter((o) => o['kind'] === 'post');
  const handles = corpus.filter((o) => o['kind'] === 'account').map((o) => String(o['handle']));
  const tags = [...new Set(posts.flatMap((p) => String(p['caption']).match(/(?<=#)[\p{L}\p{N}_]+/gu) ?? []))];
  const times = posts.map((p) => String(p['posted_at'])).sort();
  const texts: string[] = [];
  for (const [i, p] of posts.entries()) {
    if (i % 6 !== 0) continue;
    const words = String(p['caption'])
      .split(/\s+/)
      .filter((w) => /\p{L}/u.test(w) && !/^[#@]/.test(w));
    const at = (i * 7) % Math.max(1, words.length - 2);
    const two = words.slice(at, at + 2).join(' ');
    texts.push(two, `"${two}"`, `how do I get better at ${words[at]}?`);
  }
  for (const [i, tag] of tags.entries()) if (i % 4 === 0) texts.push(tag, `#${tag} tips`);
  for (const handle of handles.slice(0, 6)) texts.push(`@${handle}`);
  texts.push('🔥', '✨ glow', '🛍️', 'to be or not to be', 'the', '自炊', 'スキンケア ルーティン');
  const filters: Array<Record<string, unknown>> = [
    {},
    { filters: { views: { gte: 1000 } } },
    { filters: { format: { in: ['reel', 'carousel'] } } },
    { filters: { posted_at: { gte: times[Math.floor(times.length / 2)] } } },
    { filters: { primary_language: { eq: 'ja' } } },
    { filters: { topics: { exists: true }, hashtags: { contains_none: [tags[0]] } } },
    { author: { filters: { followers_count: { gte: 10_000 } } } },
    { author: { filters: { handle: { in: handles.slice(0, 8) }, is_verified: { eq: false } } } },
  ];
  const scopes: object[] = texts.map((query, i) => ({ query, ...filters[i % filters.length] }));
  // Filters alone, no query.
  for (const f of filters.slice(1)) scopes.push(f);
  return scopes;
}
