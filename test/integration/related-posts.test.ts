import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, classificationObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A query the model cannot read (surely German) ranks by its words, and the posts classified as
// its strong word matches follow them: the query's language first, above the posts that share
// only a minor word of it (src/query/related-evidence.ts). Search, its pages and facets alike.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const QUERY = 'Meine Hautpflege-Routine für die Nacht';
let stack: Stack;

const POSTS: Record<string, { caption: string; language: string; topic: string; at: string }> = {
  // The strong match: every word of the query.
  deHaut: {
    caption: 'Meine Hautpflege-Routine für die Nacht: Reinigung, Serum, fertig',
    language: 'de',
    topic: 'night_skincare_routine',
    at: '2026-03-01T10:00:00Z',
  },
  // The same topic in German, without a word of the query.
  deSerum: {
    caption: 'Mein Serum am Abend: Niacinamid und Retinol, dann schlafen',
    language: 'de',
    topic: 'night_skincare_routine',
    at: '2026-03-02T10:00:00Z',
  },
  // The same topic in other languages (the French one shares the minor word "routine").
  frSoin: {
    caption: 'Ma routine soin de nuit : sérum puis crème',
    language: 'fr',
    topic: 'night_skincare_routine',
    at: '2026-03-04T10:00:00Z',
  },
  enNight: {
    caption: 'Night serum steps before bed',
    language: 'en',
    topic: 'night_skincare_routine',
    at: '2026-03-03T10:00:00Z',
  },
  // German, on another topic, sharing only the minor word.
  deLauf: {
    caption: 'Meine Morgen-Routine: zehn Kilometer laufen vor der Arbeit',
    language: 'de',
    topic: 'running_routine',
    at: '2026-03-05T10:00:00Z',
  },
  // German, another topic, no word of the query: not a result.
  deKueche: {
    caption: 'Schnelle Küche für die Woche: drei Gerichte',
    language: 'de',
    topic: 'meal_prep',
    at: '2026-03-06T10:00:00Z',
  },
};

// A query whose strong word match waits for its enrichment (no topics yet): the posts nearest to it
// by their vectors, by authors who share its author's niche, follow it (src/engine/elasticsearch/
// reads/related-posts.ts), above a post sharing a minor word. all-MiniLM-L6-v2's cosines to the
// strong match: pizza 0.63 and focaccia 0.58 (above its floor of 0.51), the smoothie 0.43 (below).
const IT_QUERY = 'Il mio pane con lievito madre';
const ITALIAN: Record<string, { caption: string; author: string; topic: string | null }> = {
  // Every word of the query; enrichment pending.
  itPane: { caption: 'Il mio pane con lievito madre: impasto, pieghe e forno di casa', author: 'rp-food', topic: null },
  // Near it, no word of the query, its author in the same niche, on a topic of its own.
  itPizza: {
    caption: 'Impasto a lunga maturazione per la pizza napoletana nel forno di casa',
    author: 'rp-food',
    topic: 'pizza_dough',
  },
  // The same author, no word of the query, below the floor.
  itSmoothie: { caption: 'Smoothie verde con spinaci e banana', author: 'rp-food', topic: 'smoothies' },
  // Near it, by an author of other niches.
  itFocaccia: {
    caption: 'Focaccia alta e soffice: impasto, farina e forno',
    author: 'rp-travel',
    topic: 'city_food_guides',
  },
  // Only the minor word "madre".
  itTeresa: { caption: 'Madre Teresa: una biografia', author: 'rp-travel', topic: 'biographies' },
};
// Both tables are keyed by strings: a key of either.
type Key = string;
const keyOf = new Map([...Object.keys(POSTS), ...Object.keys(ITALIAN)].map((k) => [mintId('post', `rp-${k}`), k]));

// Classified in `language` as `topic`, with nothing else of the enrichment's text to match.
const classified = (key: string, language: string, topic: string) =>
  classificationObs(`rp-${key}`, { primary_language: language, topics: [topic] });

beforeAll(async () => {
  stack = await startStack('related-posts', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'rp-a', handle: 'related.posts' }),
    ...Object.entries(POSTS).flatMap(([key, p]) => [
      postObs('rp-a', { platform_id: `rp-${key}`, caption: p.caption, posted_at: p.at }),
      classified(key, p.language, p.topic),
    ]),
    ...['rp-food', 'rp-travel'].flatMap((author) => [
      accountObs({ platform_id: author, handle: author.replace('-', '.') }),
      accountEnrichmentObs(author, {
        niches: author === 'rp-food' ? ['food'] : ['travel', 'books'],
        publishing_languages: ['it'],
      }),
    ]),
    ...Object.entries(ITALIAN).flatMap(([key, p], i) => [
      postObs(p.author, { platform_id: `rp-${key}`, caption: p.caption, posted_at: `2026-04-0${i + 1}T10:00:00Z` }),
      ...(p.topic === null ? [] : [classified(key, 'it', p.topic)]),
    ]),
  ]);
  expect(response.statusCode).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

async function search(body: Record<string, unknown>) {
  const response = await stack.post('/v1/social/posts/search', body);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return response.body as {
    data: Array<{ id: string }>;
    next_cursor: string | null;
    matches?: Array<{ retrieved_by: string }>;
  };
}
async function topicFacets(query: string) {
  const response = await stack.post('/v1/social/posts/facets', { post: { query }, facets: [{ field: 'topics' }] });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return response.body as { total: number; facets: { topics: Array<{ value: string | null; count: number }> } };
}
const keys = (page: { data: Array<{ id: string }> }): Key[] => page.data.map((p) => keyOf.get(p.id) as Key);

describe('a query the model cannot read: posts related to its strong word matches', () => {
  it('follow the strong match, in its language first, above a post sharing only a minor word', async () => {
    const page = await search({ post: { query: QUERY }, limit: 10, include: ['matches'] });
    const ranked = keys(page);
    expect(ranked[0]).toBe('deHaut');
    // The German post on the topic, though it has no word of the query, before the other languages'.
    expect(ranked[1]).toBe('deSerum');
    // The others on the topic (newest first), then the German post on running that says "Routine".
    expect(ranked.slice(2)).toEqual(['frSoin', 'enNight', 'deLauf']);
    // Found by what it is about, not by its words.
    expect(page.matches?.[1]?.retrieved_by).toBe('semantic');
  });

  it('page through the same order', async () => {
    const seen: Key[] = [];
    let page = await search({ post: { query: QUERY }, limit: 2 });
    seen.push(...keys(page));
    while (page.next_cursor) {
      page = await search({ cursor: page.next_cursor, limit: 2 });
      seen.push(...keys(page));
    }
    expect(seen).toEqual(['deHaut', 'deSerum', 'frSoin', 'enNight', 'deLauf']);
  });

  it('keep to the filters', async () => {
    const page = await search({ post: { query: QUERY, filters: { primary_language: { in: ['de'] } } }, limit: 10 });
    expect(keys(page)).toEqual(['deHaut', 'deSerum', 'deLauf']);
  });

  it('are counted by facets as the search returns them', async () => {
    const counted = await topicFacets(QUERY);
    expect(counted.total).toBe(5);
    expect(counted.facets.topics).toEqual([
      { value: 'night_skincare_routine', count: 4 },
      { value: 'running_routine', count: 1 },
    ]);
  });
});

describe('a query the model cannot read: posts near its strong word matches', () => {
  it("follow a strong match whose enrichment is pending: near it, by its author's niche, above the floor", async () => {
    const page = await search({ post: { query: IT_QUERY }, limit: 10, include: ['matches'] });
    // Not the smoothie (below the floor), nor the focaccia (an author of other niches); the post on
    // the minor word "madre" last.
    expect(keys(page)).toEqual(['itPane', 'itPizza', 'itTeresa']);
    expect(page.matches?.map((m) => m.retrieved_by)).toEqual(['lexical', 'semantic', 'lexical']);
  });

  it('are counted by facets as the search returns them', async () => {
    const counted = await topicFacets(IT_QUERY);
    expect(counted.total).toBe(3);
    expect(counted.facets.topics).toEqual([
      { value: 'biographies', count: 1 },
      { value: 'pizza_dough', count: 1 },
      // The strong match, whose enrichment is pending.
      { value: null, count: 1 },
    ]);
  });
});
