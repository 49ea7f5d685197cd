import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { createProducer } from '../../src/queues/registry.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { facetsTotal, pagedIds, searchPage } from '../helpers/post-search.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// A question carries, beside its topic, the words of the asking ("get better at", "without
// expensive stuff"), which posts of every niche share. By default a hybrid search phrased as a
// question weighs its words by how much of it the model says each carries (question-weights.ts), a
// lexical hit carrying little of the query's information by the corpus's statistics keeps little
// of its lexical share (query-terms.ts, src/query/fusion.ts), and vector feedback moves the query's
// vector toward the posts the first fusion ranks highest (vector-feedback.ts). Two stacks on the
// same posts: the defaults, and all three off (every word weighs the same).
//
// What holds on every CPU (docs/testing.md, "What the ranking tolerates"): both stacks see the
// same vectors, so the test compares them. In the first ten posts alone "crochet" was in three and
// "better", "without" and "expensive" in two each, so BM25's IDF favoured the asking words and the
// second and third crochet posts, pull-ups and the hotels post lay within 0.01–0.1 of fused score
// of each other, a near tie any kernel's rounding settled either way (the top 3 failed on AVX-512
// VNNI and AMX machines). The asking words are common in any real corpus of posts, so the eleven
// posts after them carry them too. Under seven noise seeds (0.015) the first post is a crochet
// post and two of them come before "Expensive-looking nails without a salon", which with every
// word at the same weight is first or second; the third crochet post and the nails post are a near
// tie (one seed in seven puts nails third).
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const POSTS = {
  crochetBlanket: 'Crochet granny square blanket: the pattern row by row',
  crochetBunny: 'Amigurumi crochet bunny, free pattern and the yarn I used',
  crochetStitches: 'Five crochet stitches to learn first, slow motion',
  hotels: 'Hotel deals without the expensive booking fees',
  packing: 'Better packing: one carry-on for a two-week trip',
  flights: 'All the stuff I pack for long-haul flights',
  pullups: 'Get better at pull-ups without a gym membership',
  budget: 'Expensive city, cheap week: how I travel on a budget',
  pasta: 'Weeknight pasta in twenty minutes with what is in the fridge',
  knitting: 'Knitting my first sweater: wool, needles and a lot of patience',
  // The asking words are common in any real corpus of posts; here too.
  sleep: 'Better sleep without melatonin: my wind-down routine',
  kitchen: 'The stuff I actually use every day in my kitchen',
  serums: 'Skincare without expensive serums: three drugstore basics',
  hills: 'How to get better at running hills',
  office: 'Budget home office: better light without a new lamp',
  vlog: 'My camera stuff for travel vlogs',
  coffee: 'Better coffee at home without an espresso machine',
  abroad: 'Stuff nobody tells you about moving abroad',
  chess: 'Getting better at chess openings in a month',
  nails: 'Expensive-looking nails without a salon',
  hands: 'Drawing better hands: the stuff that helped me',
};
type Key = keyof typeof POSTS;
const id = (key: Key) => mintId('post', `qw-${key}`);
const keyOf = new Map(Object.keys(POSTS).map((k) => [id(k as Key), k]));
const QUESTION = 'how can I get better at crochet without expensive stuff?';
const CROCHET = ['crochetBlanket', 'crochetBunny', 'crochetStitches'];
let byDefault: Stack;
let plain: Stack;

async function start(name: string, env: Record<string, string>): Promise<Stack> {
  const stack = await startStack(`questions-${name}`, { MODEL_DIR, SEARCH_RANKING: 'hybrid', ...env });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'qw-a', handle: 'question.weights' }),
    ...Object.entries(POSTS).map(([key, caption]) => postObs('qw-a', { platform_id: `qw-${key}`, caption })),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return stack;
}

beforeAll(async () => {
  [byDefault, plain] = await Promise.all([
    start('default', {}),
    start('plain', { SEARCH_VECTOR_FEEDBACK: 'off', SEARCH_QUESTION_WEIGHTS: 'off', SEARCH_QUERY_TERMS: 'off' }),
  ]);
}, 240_000);

afterAll(async () => {
  await Promise.all([byDefault?.close(), plain?.close()]);
});

const ranked = async (stack: Stack, query: string, limit = 20) =>
  (await searchPage(stack, { post: { query }, limit })).data.map((p) => keyOf.get(p.id) ?? p.id);

describe('questions in hybrid search', () => {
  it('ranks posts about the topic above the posts sharing only the asking words', async () => {
    const weighted = await ranked(byDefault, QUESTION);
    const uniform = await ranked(plain, QUESTION);
    // Every word at the same weight, "Expensive-looking nails without a salon" comes first or second.
    expect(uniform.indexOf('nails'), uniform.join(', ')).toBeLessThan(2);
    expect(CROCHET, weighted.join(', ')).toContain(weighted[0]);
    expect(
      weighted.slice(0, weighted.indexOf('nails')).filter((k) => CROCHET.includes(k)).length,
    ).toBeGreaterThanOrEqual(2);
    // No crochet post loses a place to the question handling.
    for (const key of CROCHET) expect(weighted.indexOf(key), key).toBeLessThanOrEqual(uniform.indexOf(key));
  });

  it("pages through the same order as one long page: the cursor carries the moved vector and the words' weights", async () => {
    const whole = await ranked(byDefault, QUESTION, 100);
    const paged = (await pagedIds(byDefault, QUESTION, 2)).map((id) => keyOf.get(id) ?? id);
    expect(paged).toEqual(whole);
  });

  it('facets count exactly the posts the search returns', async () => {
    const all = await ranked(byDefault, QUESTION, 100);
    expect(await facetsTotal(byDefault, QUESTION)).toBe(all.length);
  });

  it('leaves entity queries, a bare word and words no post has as they rank with all three off', async () => {
    const queries = ['"crochet" stitches?', 'how do I crochet #amigurumi?', 'crochet', 'xkq zzt brrp?'];
    for (const query of queries) expect(await ranked(byDefault, query), query).toEqual(await ranked(plain, query));
  });

  it('answers a question whose first results are not embedded yet (feedback reads the vectors there are)', async () => {
    const queue = createProducer('embeddings', {
      connection: byDefault.runtime.connections.redis(),
      prefix: byDefault.config.REDIS_PREFIX,
    });
    await queue.pause();
    try {
      const caption = 'Amigurumi with chunky velvet yarn, my budget version';
      const response = await byDefault.ingest([postObs('qw-a', { platform_id: 'qw-late', caption })], {
        vectors: false,
      });
      expect(response.statusCode).toBe(200);
      const late = mintId('post', 'qw-late');
      expect((await byDefault.runtime.engine.intake.posts.get([late])).get(late)?.embedding).toBeUndefined();
      // Found by its words, among the first three: the feedback documents.
      expect((await ranked(byDefault, 'how do I make amigurumi with chunky velvet yarn?')).slice(0, 3)).toContain(late);
    } finally {
      await queue.resume();
      await queue.close();
    }
  });
});
