import type { FastifyInstance } from 'fastify';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSearchResponseSchema } from '../../src/contract/api.ts';
import { facetsResponseSchema } from '../../src/contract/search-extras.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// `corrected_query` (docs/api-decisions.md, "Generic words and misspellings"): a hybrid search
// whose lexical side searched a misspelt word as the indexed word it misspells says what it
// searched, so a client can show "Showing results for …". The real model and engine, through the API.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const POSTS = {
  starter: 'Sourdough bread for beginners: feeding my starter every morning',
  bake: 'My sourdough loaf schedule and a hot Dutch oven bake',
  focaccia: 'Weekend baking: sourdough focaccia with rosemary',
  kombuchaFirst: 'Brewing kombucha at home: the second fermentation',
  kombuchaFlavours: 'Three kombucha flavours I make every week',
  // "matcha" is carried by two posts, "macha" (one edit away) by one.
  matchaIced: 'Iced matcha for lunch',
  matchaOat: 'Breakfast matcha with oat milk',
  macha: 'Macha tea ceremony in Kyoto',
  chicken: 'One-pan chicken thighs with lemon, garlic and potatoes',
  // "white" is carried by two posts; "write", one edit away, by none.
  whiteLoaf: 'White sourdough sandwich loaf',
  whiteTea: 'White tea or green tea in the morning',
  // "brow" is carried by two posts, one edit from the German "brot" (bread).
  browGel: 'Brow gel routine for fuller brows',
  browLamination: 'Brow lamination at home, step by step',
} as const;
type Key = keyof typeof POSTS;
const keyOf = new Map(Object.keys(POSTS).map((k) => [mintId('post', `cq-${k}`), k as Key]));
let stack: Stack;
/** An API node over the same data ranking by words alone (`SEARCH_RANKING=lexical`, as without a model). */
let lexical: { runtime: TestRuntime; app: FastifyInstance };

beforeAll(async () => {
  stack = await startStack('corrected-query', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'cq-a', handle: 'corrected.query' }),
    ...Object.entries(POSTS).map(([key, caption]) => postObs('cq-a', { platform_id: `cq-${key}`, caption })),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  const runtime = openTestRuntime({ ...stack.config, SEARCH_RANKING: 'lexical' });
  await runtime.ready();
  await runtime.api.app.ready();
  lexical = { runtime, app: runtime.api.app };
}, 240_000);

afterAll(async () => {
  await lexical?.app.close();
  await lexical?.runtime.close();
  await stack?.close();
});

async function search(body: Record<string, unknown>) {
  const response = await stack.post('/v1/social/posts/search', body);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  const page = postSearchResponseSchema.parse(response.body);
  return { ...page, keys: page.data.map((p) => keyOf.get(p.id) ?? p.id), members: Object.keys(response.body) };
}

describe('corrected_query', () => {
  it('names the query as searched when a misspelt content word was corrected, after the spec members', async () => {
    const page = await search({ post: { query: 'Soudough STARTER' }, limit: 10 });
    expect(page.corrected_query).toBe('Sourdough STARTER');
    expect(page.keys[0], page.keys.join(', ')).toBe('starter');
    expect(page.keys).toContain('bake');
    expect(page.members.at(-1)).toBe('corrected_query');
    expect(page.members.slice(0, 4)).toEqual(['request_id', 'data', 'has_more', 'next_cursor']);
  });

  it('shows the corrected word as the match evidence, as the lexical side searched it', async () => {
    const response = await stack.post('/v1/social/posts/search', {
      post: { query: 'soudough focaccia' },
      limit: 3,
      include: ['matches'],
    });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const body = response.body as {
      corrected_query?: string;
      matches: Array<{
        id: string;
        fields: Array<{
          field: string;
          snippets: Array<{ text: string; highlights: Array<{ start: number; end: number }> }>;
        }>;
      }>;
    };
    expect(body.corrected_query).toBe('sourdough focaccia');
    const focaccia = body.matches.find((m) => keyOf.get(m.id) === 'focaccia');
    const caption = focaccia?.fields.find((f) => f.field === 'caption');
    const highlighted = caption?.snippets.flatMap((s) =>
      s.highlights.map((h) => s.text.slice(h.start, h.end).toLowerCase()),
    );
    expect(highlighted, JSON.stringify(focaccia)).toEqual(expect.arrayContaining(['sourdough', 'focaccia']));
  });

  it('is absent when every word is one posts carry', async () => {
    const page = await search({ post: { query: 'sourdough starter' }, limit: 10 });
    expect(page.keys[0]).toBe('starter');
    expect(page).not.toHaveProperty('corrected_query');
  });

  it('is absent, and nothing is found, for nonsense with no close word', async () => {
    for (const query of ['grblfrxx', 'zxqv wplkj vvrq']) {
      const page = await search({ post: { query }, limit: 10 });
      expect(page.data, query).toEqual([]);
      expect(page, query).not.toHaveProperty('corrected_query');
      expect(page, query).not.toHaveProperty('suggested_query');
    }
  });

  it('has the model read the query as corrected: it ranks as the words meant, not as the slips', async () => {
    // Read as typed, "matcah" drew the sourdough loaf among the matcha posts.
    for (const query of ['iced matcah', 'brekfast matcah']) {
      const typed = await search({ post: { query }, limit: 4 });
      expect(typed.corrected_query, query).toBe(query.replace('matcah', 'matcha'));
      const meant = await search({ post: { query: typed.corrected_query }, limit: 4 });
      expect(typed.keys, query).toEqual(meant.keys);
      expect(typed.keys, query).not.toContain('whiteLoaf');
    }
  });

  it('never replaces a word of English, though no post carries it and a near word two posts carry', async () => {
    const page = await search({ post: { query: 'write a sourdough diary' }, limit: 10 });
    expect(page).not.toHaveProperty('corrected_query');
    expect(page.keys).toContain('whiteLoaf');
  });

  it('keeps a query in another language as typed: no correction the rest of the query does not bear out', async () => {
    // "brot backen" (German: baking bread) was searched as "brow backen", and answered with brow posts.
    for (const query of ['brot backen', 'Brot selber backen', 'brot recipes with sourdough']) {
      const page = await search({ post: { query }, limit: 10 });
      expect(page, query).not.toHaveProperty('corrected_query');
      expect(page, query).not.toHaveProperty('suggested_query');
      expect(page.keys, query).not.toContain('browGel');
      expect(page.keys, query).not.toContain('browLamination');
    }
    // A slip the rest of the query bears out is still corrected.
    const slip = await search({ post: { query: 'brwo gel' }, limit: 10 });
    expect(slip.corrected_query).toBe('brow gel');
    expect(slip.keys[0]).toBe('browGel');
  });

  it('never replaces a word some post carries: a rare word is for suggested_query to correct', async () => {
    const page = await search({ post: { query: 'macha' }, limit: 10 });
    expect(page.keys).toContain('macha');
    expect(page).not.toHaveProperty('corrected_query');
  });

  it('is on every page of the search, as its cursor carries the correction', async () => {
    let page = await search({ post: { query: 'soudough bake' }, limit: 1 });
    const seen = [page.corrected_query];
    while (page.has_more) {
      page = await search({ cursor: page.next_cursor });
      seen.push(page.corrected_query);
    }
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen)).toEqual(new Set(['sourdough bake']));
  });
});

describe('corrected_query when ranked by words alone', () => {
  async function post(url: string, body: Record<string, unknown>) {
    const response = await lexical.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Record<string, unknown>>();
  }
  async function searchByWords(body: Record<string, unknown>) {
    const page = postSearchResponseSchema.parse(await post('/v1/social/posts/search', body));
    return { ...page, keys: page.data.map((p) => keyOf.get(p.id) ?? p.id) };
  }

  it('searches a misspelt word as the word it misspells, on every page', async () => {
    let page = await searchByWords({ post: { query: 'soudough' }, limit: 1 });
    const keys = [...page.keys];
    const seen = [page.corrected_query];
    while (page.has_more) {
      page = await searchByWords({ cursor: page.next_cursor });
      keys.push(...page.keys);
      seen.push(page.corrected_query);
    }
    expect(new Set(keys)).toEqual(new Set(['starter', 'bake', 'focaccia', 'whiteLoaf']));
    expect(new Set(seen)).toEqual(new Set(['sourdough']));
  });

  it('counts in facets what the corrected search finds', async () => {
    const page = await searchByWords({ post: { query: 'kombuca flavours' }, limit: 10 });
    expect(page.corrected_query).toBe('kombucha flavours');
    expect(new Set(page.keys)).toEqual(new Set(['kombuchaFirst', 'kombuchaFlavours']));
    const facets = facetsResponseSchema.parse(
      await post('/v1/social/posts/facets', { post: { query: 'kombuca flavours' }, facets: [{ field: 'format' }] }),
    );
    expect(facets.total).toBe(2);
  });

  it('is never repeated by suggested_query when the search found few posts', async () => {
    const page = await searchByWords({ post: { query: 'kombuca' }, limit: 10 });
    expect(page.corrected_query).toBe('kombucha');
    expect(page.keys.slice(0, 2).sort(), page.keys.join(', ')).toEqual(['kombuchaFirst', 'kombuchaFlavours']);
    expect(page.data.length).toBeLessThan(3);
    expect(page).not.toHaveProperty('suggested_query');
  });

  it('searches a quoted word as typed, and a query of known words unchanged', async () => {
    const quoted = await searchByWords({ post: { query: '"soudough"' }, limit: 10 });
    expect(quoted.data).toEqual([]);
    expect(quoted).not.toHaveProperty('corrected_query');
    const known = await searchByWords({ post: { query: 'macha' }, limit: 10 });
    expect(known.keys).toEqual(['macha']);
    expect(known).not.toHaveProperty('corrected_query');
  });
});
