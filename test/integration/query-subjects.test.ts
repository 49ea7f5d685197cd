import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, postObs } from '../helpers/fixtures.ts';
import { pagedIds, rankedKeys, ranksOf } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A word whose posts are about every subject says how a query is phrased, not what it asks
// (src/query/term-information.ts, specificInformation): "my travel routine" asks for travel, even
// where "routine" is the rarer word. What the service knows of each post's subject is its author's
// niches; in a query the model cannot read (Japanese here), each word's part of a hit's text
// score is weighed the same way. The real model and engine, through the API.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const AUTHORS = {
  travel: 'qsj-travel',
  parenting: 'qsj-parenting',
  skincare: 'qsj-skincare',
  fitness: 'qsj-fitness',
  gaming: 'qsj-gaming',
};
type Niche = keyof typeof AUTHORS;
const POSTS: Record<string, { niche: Niche; caption: string }> = {
  // The travel author: "travel" in every post, "routine" in none.
  carryOn: { niche: 'travel', caption: 'Carry-on travel packing list for a week in Lisbon' },
  railPass: { niche: 'travel', caption: 'Budget travel in Japan: rail pass, hostels and convenience stores' },
  solo: { niche: 'travel', caption: 'Solo travel safety tips for your first long trip' },
  layover: { niche: 'travel', caption: 'How to survive a long layover: travel pillow, snacks and lounges' },
  // "Routine" in three other niches: rarer than "travel" here, so BM25 weighs it more.
  babySleep: { niche: 'parenting', caption: 'Baby sleep routine: bath, book and bed by seven' },
  nightSkin: { niche: 'skincare', caption: 'Night skincare routine with retinol and a gentle cleanser' },
  stretch: { niche: 'fitness', caption: 'Morning stretching routine before work, ten minutes' },
  // Neither word.
  lunches: { niche: 'parenting', caption: 'School lunch ideas the kids actually eat' },
  serum: { niche: 'skincare', caption: 'Vitamin C serum review after a month' },
  squats: { niche: 'fitness', caption: 'Squat form checklist for beginners' },
  // Japanese: "ゲーム" (games) in the gaming author's posts; "ルーティン" (routine), which the segmenter
  // splits in two (ルー, ティン), in three other niches' "私の…ルーティン" posts.
  gameMinute: { niche: 'gaming', caption: '60秒でわかるゲーム 今日はcontrollerを使ったゲームを紹介します。' },
  gameMistakes: {
    niche: 'gaming',
    caption: 'ゲームでやりがちな3つの失敗 今日はgaming headsetを使ったゲームを紹介します。',
  },
  gameSecret: {
    niche: 'gaming',
    caption: 'ゲームで誰も教えてくれないこと 何ヶ月も試して、capture cardでゲームが変わりました。',
  },
  travelRoutine: { niche: 'travel', caption: '私の旅行ルーティン✨ 今日はtravel adapterを使った旅行を紹介します。' },
  babyRoutine: { niche: 'parenting', caption: '私の育児ルーティン✨ 今日は絵本を使った育児を紹介します。' },
  skinRoutine: {
    niche: 'skincare',
    caption: '私のスキンケアルーティン✨ 今日はretinolを使ったスキンケアを紹介します。',
  },
};
const keyOf = new Map(Object.keys(POSTS).map((k) => [mintId('post', `qsj-${k}`), k]));
let stack: Stack;

beforeAll(async () => {
  stack = await startStack('query-subjects', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    ...Object.entries(AUTHORS).flatMap(([niche, author]) => [
      accountObs({ platform_id: author, handle: author.replace('-', '.') }),
      accountEnrichmentObs(author, { niches: [niche] }),
    ]),
    ...Object.entries(POSTS).map(([key, p]) =>
      postObs(AUTHORS[p.niche], { platform_id: `qsj-${key}`, caption: p.caption }),
    ),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

const ranked = (query: string, limit = 20) => rankedKeys(stack, keyOf, query, limit);
describe('a word spread over every subject is not what a query asks', () => {
  it('"my travel routine" answers the travel posts before the routines of other niches', async () => {
    const results = await ranked('my travel routine');
    const travel = ranksOf(results, ['carryOn', 'railPass', 'solo', 'layover']);
    const routines = ranksOf(results, ['babySleep', 'nightSkin', 'stretch']);
    expect(Math.max(...travel), results.join(', ')).toBeLessThan(Math.min(...routines));
  });

  it('a query whose subject is the routine still finds it first', async () => {
    const results = await ranked('baby sleep routine');
    expect(results[0], results.join(', ')).toBe('babySleep');
  });

  it('a Japanese query the model cannot read answers its subject before the routines of other niches', async () => {
    const results = await ranked('私のゲームルーティン');
    const games = ranksOf(results, ['gameMinute', 'gameMistakes', 'gameSecret']);
    const routines = ranksOf(results, ['travelRoutine', 'babyRoutine', 'skinRoutine']);
    expect(Math.max(...games), results.join(', ')).toBeLessThan(Math.min(...routines));
    expect((await ranked('私のスキンケアルーティン'))[0]).toBe('skinRoutine');
  });

  it('pages through the same order as one long page', async () => {
    const whole = await ranked('my travel routine', 100);
    expect((await pagedIds(stack, 'my travel routine', 2)).map((p) => keyOf.get(p) ?? p)).toEqual(whole);
  });
});
