import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { facetsTotal, pagedIds, searchPage } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// SEARCH_VECTOR_FEEDBACK=on (the default; src/query/relevance-feedback.ts): a hybrid search moves its query
// vector toward its first fused results before the final kNN, so a question phrased like posts of
// other topics ("what do I need to know about …") still reaches the posts about its topic that
// share none of its words. Two stacks on the same posts: feedback on for every query, and off.
//
// The bread-culture posts sit near the similarity floor (0.3), so what they assert must hold with
// another CPU's rounding (docs/testing.md, "What the ranking tolerates": cosines move by up to
// ~0.05). The culture post is 0.06 under the floor for the question as typed and 0.05 over it for
// the moved question (0.238 → 0.353); the jar post 0.02 under and 0.03 over (0.282 → 0.334), a
// near tie either way, so it is only counted.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const POSTS = {
  starterSchedule: 'Sourdough starter feeding schedule: twice a day at room temperature',
  starterDay5: 'My sourdough starter on day five, finally doubling',
  starterHydration: 'Sourdough starter hydration explained, from stiff to liquid',
  levain: 'Levain bubbling after a night on the counter: wild yeast, rye flour and water at one to one',
  culture: 'Feeding my bread culture so it rises: equal parts flour and water, discard half each morning',
  jar: 'The jar of bubbly yeast on my counter that makes every loaf of bread',
  running: 'What you need to know before you start running: shoes, pace and rest days',
  budgeting: 'Everything I wish I knew about budgeting before my first paycheck',
  camera: 'Things to know about your first camera before you buy one',
  guitar: 'What nobody tells you about learning guitar as an adult',
  plants: 'All you need to know about watering houseplants in winter',
  travel: 'Cheap alternatives to expensive hotels in Lisbon: guesthouses and hostels',
};
type Key = keyof typeof POSTS;
const id = (key: Key) => mintId('post', `vf-${key}`);
const keyOf = new Map(Object.keys(POSTS).map((k) => [id(k as Key), k]));
const QUESTION = 'what do I need to know about sourdough starter';
let on: Stack;
let off: Stack;

async function start(feedback: 'on' | 'off'): Promise<Stack> {
  const stack = await startStack(`vector-feedback-${feedback}`, {
    MODEL_DIR,
    SEARCH_RANKING: 'hybrid',
    SEARCH_VECTOR_FEEDBACK: feedback,
  });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'vf-a', handle: 'vector.feedback' }),
    ...Object.entries(POSTS).map(([key, caption]) => postObs('vf-a', { platform_id: `vf-${key}`, caption })),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return stack;
}

beforeAll(async () => {
  [on, off] = await Promise.all([start('on'), start('off')]);
}, 240_000);

afterAll(async () => {
  await Promise.all([on?.close(), off?.close()]);
});

const ranked = async (stack: Stack, query: string, limit = 20) =>
  (await searchPage(stack, { post: { query }, limit })).data.map((p) => keyOf.get(p.id) ?? p.id);

describe('vector feedback in hybrid search', () => {
  it("reaches the posts about the question's topic that share none of its words", async () => {
    const starters = ['starterDay5', 'starterHydration', 'starterSchedule'];
    const withFeedback = await ranked(on, QUESTION);
    const without = await ranked(off, QUESTION);
    // Both put the posts naming the topic first.
    expect(withFeedback.slice(0, 3).sort()).toEqual(starters);
    expect(without.slice(0, 3).sort()).toEqual(starters);
    // The bread-culture posts: under the similarity floor for the question as typed, over it for
    // the question moved toward the sourdough-starter posts.
    expect(without).not.toContain('culture');
    expect(withFeedback).toContain('culture');
    const bread = (ranking: string[]) => ranking.filter((key) => key === 'culture' || key === 'jar').length;
    expect(bread(withFeedback)).toBeGreaterThan(bread(without));
  });

  it('pages through the same order as one long page: the cursor carries the moved vector', async () => {
    const whole = await ranked(on, QUESTION, 100);
    const paged = (await pagedIds(on, QUESTION, 3)).map((id) => keyOf.get(id) ?? id);
    expect(paged).toEqual(whole);
  });

  it('facets count exactly the posts the search returns', async () => {
    const all = await ranked(on, QUESTION, 100);
    expect(await facetsTotal(on, QUESTION)).toBe(all.length);
  });

  it('leaves entity queries, a bare word and words no post has as they were', async () => {
    // No feedback runs for these, so both stacks ask the engine the same. They are two indices,
    // though, each quantizing its vectors to int8 by its own segments (which the load decides), so
    // a neighbour within a hair of the similarity floor is in one and not the other: for "homemade
    // leavening for bakers" the jar post sits 0.002 above it (cosine 0.302), and EMBEDDING_NOISE
    // puts others there. Such a post fades in over FLOOR_BAND and so comes last, if at all. Posts
    // that neither word nor meaning tells apart tie as closely: for "@vector.feedback starter" the
    // houseplant and running posts (ranks 11 and 12, both on meaning alone, far from "starter")
    // swapped between the indices once. So the posts both show keep their order to within one
    // place; feedback moves a query's vector far enough to reorder more than neighbours.
    const queries = ['"sourdough starter"', '"bread culture" flour', 'sourdough', '@vector.feedback starter'];
    for (const query of [...queries, 'xkq zzt brrp', 'homemade leavening for bakers']) {
      const [a, b] = await Promise.all([ranked(on, query), ranked(off, query)]);
      const both = a.filter((key) => b.includes(key));
      const inB = b.filter((key) => a.includes(key));
      const moved = both.map((key, rank) => ({ key, by: Math.abs(inB.indexOf(key) - rank) }));
      expect(
        moved.filter(({ by }) => by > 1),
        query,
      ).toEqual([]);
      expect(Math.max(a.length, b.length) - both.length, query).toBeLessThanOrEqual(1);
    }
  });
});
