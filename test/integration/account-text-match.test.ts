import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountEnrichmentObs, accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * How `account.query` matches an account's own words (docs/api-decisions.md, "Lexical relevance"):
 * other inflections of a word, a query's function words left out, and the words an account
 * states counted word by word, wherever it states them.
 */
let stack: Stack;
const handles = async (query: string) => {
  const response = await stack.post('/v1/social/accounts/search', { account: { query }, limit: 10 });
  expect(response.statusCode).toBe(200);
  return (response.body as { data: Array<{ handle: string }> }).data.map((a) => a.handle);
};

const cook = (id: string, biography: string) =>
  accountObs({
    platform_id: `atm-${id}`,
    handle: `atm.${id}`,
    display_name: `Home Chef ${id}`,
    category_label: 'Home cooking',
    biography,
  });

beforeAll(async () => {
  // The words alone: what the lexical side does (account-hybrid.test.ts: with the vectors).
  stack = await startStack('account-text-match', { SEARCH_RANKING: 'lexical' });
  const ingested = await stack.ingest(
    [
      accountObs({
        platform_id: 'atm-trainer',
        handle: 'atm.trainer',
        display_name: 'Sam Reyes',
        category_label: 'Fitness',
        biography: 'Strength coach: a home workout with no equipment, three times a week.',
      }),
      accountObs({
        platform_id: 'atm-beginner',
        handle: 'atm.beginner',
        display_name: 'Dana Park',
        category_label: 'Fitness',
        biography: 'Strength training for beginners.',
      }),
      cook('one', 'Home cook sharing home cooking, weeknight dinner recipes and more.'),
      cook('two', 'Home cook sharing home cooking and easy bakes.'),
      cook('three', 'Home cooking at home, for the whole family at home.'),
      accountObs({
        platform_id: 'atm-cocina',
        handle: 'atm.cocina',
        display_name: 'Lucía Gómez',
        category_label: 'Cocina',
        biography: 'Comparto recetas caseras y postres sin horno.',
      }),
      accountEnrichmentObs('atm-cocina', {
        publishing_summary: 'Publica recetas caseras en español.',
        publishing_languages: ['es'],
        niches: ['home_cooking'],
      }),
      // A post each, for the publishing scope below.
      ...['trainer', 'beginner', 'one', 'two', 'three', 'cocina'].map((id) =>
        postObs(`atm-${id}`, { platform_id: `atm-post-${id}`, views: 5000 }),
      ),
    ],
    // Account search is lexical: no vectors waited for.
    { vectors: false },
  );
  expect(ingested.statusCode).toBe(200);
  expect(ingested.body.rejected).toEqual([]);
});
afterAll(async () => stack?.close());

describe('account.query matches an account by its words', () => {
  it('finds another inflection of a word ("workouts" → "workout"), in the account\'s language too', async () => {
    expect(await handles('workouts')).toEqual(['atm.trainer']);
    expect(await handles('receta casera')).toEqual(['atm.cocina']);
  });

  it('ranks the account that states every word above those whose name and category repeat one of them', async () => {
    const found = await handles('home workouts');
    expect(found[0]).toBe('atm.trainer');
    // The cooks still match "home": found, after it.
    expect(found).toContain('atm.one');
  });

  it('leaves a query\'s function words out: "recipes for dinner" does not find "training for beginners"', async () => {
    const found = await handles('recipes for dinner');
    expect(found[0]).toBe('atm.one');
    expect(found).not.toContain('atm.beginner');
  });

  it('ranks by the query with a publishing scope too', async () => {
    const body = {
      account: { query: 'home workouts', posts: { minimum_matching_posts: 1, filters: { views: { gte: 1000 } } } },
      limit: 10,
    };
    const response = await stack.post('/v1/social/accounts/search', body);
    expect(response.statusCode).toBe(200);
    const found = (response.body as { data: Array<{ handle: string }> }).data.map((a) => a.handle);
    // Every account of the scope that matches a word, the one stating both first.
    expect(found[0]).toBe('atm.trainer');
    expect(new Set(found)).toEqual(new Set(['atm.trainer', 'atm.one', 'atm.two', 'atm.three']));
  });

  it('still finds an account by its name, and by its exact handle first', async () => {
    expect((await handles('Sam Reyes'))[0]).toBe('atm.trainer');
    expect((await handles('@atm.two'))[0]).toBe('atm.two');
  });
});

describe('misspelt words in account.query', () => {
  type Page = {
    data: Array<{ handle: string }>;
    next_cursor: string | null;
    suggested_query?: string;
    corrected_query?: string;
  };
  const searchOf = async (body: unknown) => {
    const response = await stack.post('/v1/social/accounts/search', body);
    expect(response.statusCode).toBe(200);
    return response.body as Page;
  };

  it('searches a word no account carries as the closest word two accounts state, on every page', async () => {
    const first = await searchOf({ account: { query: 'Strenght coaching' }, limit: 1 });
    // The case typed, after the spec's members.
    expect(first.corrected_query).toBe('Strength coaching');
    expect(Object.keys(first).at(-1)).toBe('corrected_query');
    const next = await searchOf({ cursor: first.next_cursor });
    expect(next.corrected_query).toBe('Strength coaching');
    expect(new Set([...first.data, ...next.data].map((a) => a.handle))).toEqual(
      new Set(['atm.trainer', 'atm.beginner']),
    );
  });

  it('suggests the query with a word one account states when it finds fewer than 3', async () => {
    // "weeknight" is in one biography: too rare to search unasked, offered instead.
    const page = await searchOf({ account: { query: 'Weeknigt dinner' }, limit: 10 });
    expect(page.data.map((a) => a.handle)).toEqual(['atm.one']);
    expect(page).not.toHaveProperty('corrected_query');
    expect(page.suggested_query).toBe('Weeknight dinner');
    expect(Object.keys(page).at(-1)).toBe('suggested_query');
  });

  it('neither corrects nor suggests for a query that finds enough accounts or nonsense, nor corrects a quote', async () => {
    expect(await searchOf({ account: { query: 'home cooking' }, limit: 10 })).not.toHaveProperty('suggested_query');
    const nonsense = await searchOf({ account: { query: 'qwxzv blorptang' }, limit: 10 });
    expect(nonsense.data).toEqual([]);
    expect(nonsense).not.toHaveProperty('suggested_query');
    expect(nonsense).not.toHaveProperty('corrected_query');
    // A quote asks for exactly its words.
    expect(await searchOf({ account: { query: '"Strenght coaching"' }, limit: 10 })).not.toHaveProperty(
      'corrected_query',
    );
  });
});
