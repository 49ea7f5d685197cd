import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { pagedIds, rankedKeys, ranksOf } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// What a query's words are worth, as a user types them (bench/relevance.md, "Questions phrased in
// the asker's own words"): a generic word ("fast", "better") that is all a post shares with the
// query must not put it above the posts the query means, and a misspelt word is a word, not
// nonsense. The real model and engine, through the API.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const POSTS = {
  acneAcid: 'Salicylic acid and hydrocolloid patches cleared my acne breakouts',
  acneRoutine: 'My acne treatment routine: gentle cleanser, spot patches, no over-exfoliating',
  acneChin: 'How I calm hormonal breakouts on my chin without drying my skin out',
  pcBuild: 'Budget gaming PC build with a fast SSD and a mid-range GPU',
  pcBoot: 'Fast boot times: why I moved my gaming rig to an NVMe drive',
  gutFiber: 'Gut health basics: fiber, fermented foods and thirty plants a week',
  gutKefir: 'Kefir and sauerkraut every day for a happier gut',
  soloPlanner: 'Solo travel made me a better planner: my itinerary template',
  soloHostels: 'Better hostels for solo travelers in Lisbon',
  sourdoughStarter: 'Sourdough bread for beginners: feeding my starter every morning',
  sourdoughBake: 'My sourdough loaf schedule and a hot Dutch oven bake',
  chicken: 'One-pan chicken thighs with lemon, garlic and potatoes',
} as const;
type Key = keyof typeof POSTS;
const id = (key: Key) => mintId('post', `qwd-${key}`);
const keyOf = new Map(Object.keys(POSTS).map((k) => [id(k as Key), k]));
let stack: Stack;

beforeAll(async () => {
  stack = await startStack('query-words', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'qwd-a', handle: 'query.words' }),
    ...Object.entries(POSTS).map(([key, caption]) => postObs('qwd-a', { platform_id: `qwd-${key}`, caption })),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

const ranked = (query: string, limit = 20) => rankedKeys(stack, keyOf, query, limit);

describe('a generic word is not what a query is about', () => {
  it('a question on clearing pimples fast answers acne posts before the posts that are only fast', async () => {
    const results = await ranked('how do I get rid of pimples fast?');
    // The acne posts share no word with the question; the PC posts share "fast" alone.
    const acne = ranksOf(results, ['acneAcid', 'acneRoutine']);
    const fast = ranksOf(results, ['pcBuild', 'pcBoot']);
    expect(Math.max(...acne), results.join(', ')).toBeLessThan(Math.min(...fast));
  });

  it('a question on eating for better digestion answers gut posts before the posts that are only better', async () => {
    const results = await ranked('what should I eat for better digestion?');
    const gut = ranksOf(results, ['gutFiber', 'gutKefir']);
    const better = ranksOf(results, ['soloPlanner', 'soloHostels']);
    expect(Math.max(...gut), results.join(', ')).toBeLessThan(Math.min(...better));
  });

  it('a post that carries the words the query is about still comes first', async () => {
    const results = await ranked('fast gaming PC build on a budget');
    expect(results.slice(0, 2).sort()).toEqual(['pcBoot', 'pcBuild']);
  });

  it('pages through the same order as one long page', async () => {
    const query = 'how do I get rid of pimples fast?';
    const whole = await ranked(query, 100);
    expect((await pagedIds(stack, query, 2)).map((p) => keyOf.get(p) ?? p)).toEqual(whole);
  });
});

describe('a misspelt word is a word', () => {
  it('finds the posts of the word it misspells', async () => {
    const results = await ranked('soudough');
    expect(results.slice(0, 2).sort(), results.join(', ')).toEqual(['sourdoughBake', 'sourdoughStarter']);
  });

  it('in a longer query too', async () => {
    const results = await ranked('soudough starter for beginers');
    expect(results[0], results.join(', ')).toBe('sourdoughStarter');
  });

  it('pages through the same order as one long page', async () => {
    const whole = await ranked('soudough bake', 100);
    expect((await pagedIds(stack, 'soudough bake', 1)).map((p) => keyOf.get(p) ?? p)).toEqual(whole);
  });

  it('leaves nonsense unanswered', async () => {
    for (const query of ['grblfrxx', 'xkq zzt brrp', 'zxqv wplkj vvrq', '🔥🔥🔥'])
      expect(await ranked(query), query).toEqual([]);
  });
});
