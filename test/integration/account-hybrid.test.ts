import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * `account.query` ranked with the query's embedding (docs/api-decisions.md, "What ranks"): the
 * accounts' own text's vectors fused with BM25, under every filter, paged on one snapshot.
 */
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
let stack: Stack;
type Page = { data: Array<{ handle: string; is_private: boolean }>; has_more: boolean; next_cursor: string | null };
const search = async (body: unknown): Promise<Page> => {
  const response = await stack.post('/v1/social/accounts/search', body);
  expect(response.statusCode).toBe(200);
  return response.body as Page;
};
const handles = async (query: string, limit = 10) =>
  (await search({ account: { query }, limit })).data.map((a) => a.handle);

/** Accounts stating "workout tips" in their biographies: more than one fused window (50). */
const COACHES = 64;

beforeAll(async () => {
  stack = await startStack('account-hybrid', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  const ingested = await stack.ingest([
    accountObs({
      platform_id: 'ahy-trainer',
      handle: 'ahy.trainer',
      display_name: 'Sam Reyes',
      category_label: 'Fitness',
      biography: 'Strength coach: a home workout with no equipment, three times a week.',
    }),
    accountObs({
      platform_id: 'ahy-hidden',
      handle: 'ahy.hidden',
      display_name: 'Jo Hidden',
      category_label: 'Fitness',
      biography: 'Daily exercise routines and gym training plans.',
      is_private: true,
    }),
    accountObs({
      platform_id: 'ahy-baker',
      handle: 'ahy.baker',
      display_name: 'Lou Baker',
      category_label: 'Home cooking',
      biography: 'Sourdough loaves, cinnamon buns and weekend baking.',
    }),
    // A second account stating "sourdough": a silent correction needs two.
    accountObs({
      platform_id: 'ahy-rye',
      // A handle that is one word, one letter from a word two accounts state.
      handle: 'sourdoughy',
      display_name: 'Ida Rye',
      category_label: 'Bakery',
      biography: 'Sourdough starter care and rye bread.',
    }),
    // Near what the slip "sourdogh" reads as to the model, far from "sourdough".
    accountObs({
      platform_id: 'ahy-paws',
      handle: 'ahy.paws',
      display_name: 'Rex Paws',
      category_label: 'Pets',
      biography: 'Sour-faced dogs of the neighbourhood.',
    }),
    // A word of the corpus no account states, one letter from one every coach states ("sharing").
    postObs('ahy-trainer', { platform_id: 'ahy-post-shading', caption: 'Pencil shading for beginners' }),
    ...Array.from({ length: COACHES }, (_, i) =>
      accountObs({
        platform_id: `ahy-coach-${i}`,
        handle: `ahy.coach${i}`,
        display_name: `Coach ${i}`,
        category_label: 'Fitness',
        biography: `Coach number ${i} sharing workout tips${' and more'.repeat(i % 5)}.`,
      }),
    ),
  ]);
  expect(ingested.statusCode).toBe(200);
  expect(ingested.body.rejected).toEqual([]);
});
afterAll(async () => stack?.close());

describe('account search ranked with the query embedding', () => {
  it('finds an account by what its words mean, not only by the words ("exercise routines" → "home workout")', async () => {
    // No account a search can return states "exercise" or "routines" (only the private one does).
    // all-MiniLM-L6-v2's cosines: the trainer 0.51, the coaches 0.33, the baker 0.06; floor 0.3.
    const found = await handles('exercise routines', 100);
    expect(found).toContain('ahy.trainer');
    expect(found).not.toContain('ahy.baker');
    // A private account is never a result, however near it is.
    expect(found).not.toContain('ahy.hidden');
  });

  it('pages past the fused window through every account that states a word, without repeats', async () => {
    const seen: string[] = [];
    let page = await search({ account: { query: 'workout tips' }, limit: 20 });
    seen.push(...page.data.map((a) => a.handle));
    let pages = 1;
    while (page.has_more && pages < 20) {
      page = await search({ cursor: page.next_cursor, limit: 20 });
      seen.push(...page.data.map((a) => a.handle));
      pages += 1;
    }
    expect(page.has_more).toBe(false);
    expect(new Set(seen).size).toBe(seen.length);
    for (let i = 0; i < COACHES; i++) expect(seen).toContain(`ahy.coach${i}`);
    expect(seen).not.toContain('ahy.hidden');
    // Every page but the last was full.
    expect(seen.length).toBeGreaterThan(20 * (pages - 1));
  });

  it('ranks the account whose handle the query is first', async () => {
    expect((await handles('ahy.coach7'))[0]).toBe('ahy.coach7');
  });

  it('counts facets over what the search shows', async () => {
    const response = await stack.post('/v1/social/accounts/facets', {
      account: { query: 'exercise routines' },
      facets: [{ field: 'account_type' }],
    });
    expect(response.statusCode).toBe(200);
    const shown = await handles('exercise routines', 100);
    expect(response.body.total).toBe(shown.length);
    // Found by meaning (no word of the query in it), and counted.
    expect(shown).toContain('ahy.trainer');
  });

  it("searches a word no account carries as the accounts' closest word, and says so on every page", async () => {
    // "Sourdogh" is in no name or description; "sourdough" is in two. Found by its words, not only
    // by the model's reading of a misspelling.
    const first = (await stack.post('/v1/social/accounts/search', { account: { query: 'Sourdogh loaves' }, limit: 1 }))
      .body as Page & { corrected_query?: string };
    expect(first.corrected_query).toBe('Sourdough loaves');
    expect(Object.keys(first).at(-1)).toBe('corrected_query');
    expect(first.data.map((a) => a.handle)).toEqual(['ahy.baker']);
    // The cursor carries what was searched.
    const next = (await stack.post('/v1/social/accounts/search', { cursor: first.next_cursor })).body as Page & {
      corrected_query?: string;
    };
    expect(next.corrected_query).toBe('Sourdough loaves');
    expect(next.data.map((a) => a.handle)).toContain('sourdoughy');
    // Facets count what the search shows: the accounts stating the corrected word, which no word
    // of the query as typed finds.
    const facets = await stack.post('/v1/social/accounts/facets', {
      account: { query: 'my sourdogh' },
      facets: [{ field: 'account_type' }],
    });
    expect(facets.statusCode).toBe(200);
    const shown = (await search({ account: { query: 'my sourdogh' }, limit: 100 })).data.map((a) => a.handle);
    expect(shown).toEqual(expect.arrayContaining(['ahy.baker', 'sourdoughy']));
    expect(facets.body.total).toBe(shown.length);
  });

  it('searches the neighbours of the words as corrected, on every page and in the facets', async () => {
    // The model reads the slip "sourdogh" as a sour dog: all-MiniLM-L6-v2's cosine of the
    // sour-faced dogs to "sourdogh care" is 0.40, to "sourdough care" 0.21 (floor 0.3).
    const query = 'sourdogh care';
    const first = (await stack.post('/v1/social/accounts/search', { account: { query }, limit: 20 })).body as Page & {
      corrected_query?: string;
    };
    expect(first.corrected_query).toBe('sourdough care');
    const found = first.data.map((a) => a.handle);
    expect(found).toEqual(expect.arrayContaining(['ahy.baker', 'sourdoughy']));
    expect(found).not.toContain('ahy.paws');
    // Page by page, the same accounts: every page searches the corrected text's vector.
    const paged: string[] = [];
    let page = (await stack.post('/v1/social/accounts/search', { account: { query }, limit: 1 })).body as Page;
    paged.push(...page.data.map((a) => a.handle));
    while (page.has_more && paged.length < 20) {
      page = (await stack.post('/v1/social/accounts/search', { cursor: page.next_cursor })).body as Page;
      paged.push(...page.data.map((a) => a.handle));
    }
    expect(paged).toEqual(found);
    // Facets count what the search shows.
    const facets = await stack.post('/v1/social/accounts/facets', {
      account: { query },
      facets: [{ field: 'account_type' }],
    });
    expect(facets.statusCode).toBe(200);
    expect(facets.body.total).toBe(found.length);
  });

  it('corrects no other inflection of a word accounts state ("home workouts")', async () => {
    const page = (await stack.post('/v1/social/accounts/search', { account: { query: 'home workouts' }, limit: 5 }))
      .body as Page & { corrected_query?: string };
    expect(page).not.toHaveProperty('corrected_query');
    expect(page.data[0]!.handle).toBe('ahy.trainer');
  });

  it('corrects no word posts carry, though no account states it', async () => {
    const page = (await stack.post('/v1/social/accounts/search', { account: { query: 'workout shading' }, limit: 5 }))
      .body as Page & { corrected_query?: string };
    expect(page).not.toHaveProperty('corrected_query');
  });

  it('corrects no word an account carries, a handle typed without its @ too', async () => {
    const page = (await stack.post('/v1/social/accounts/search', { account: { query: 'sourdoughy' }, limit: 5 }))
      .body as Page & { corrected_query?: string };
    expect(page).not.toHaveProperty('corrected_query');
    expect(page.data[0]!.handle).toBe('sourdoughy');
  });
});
