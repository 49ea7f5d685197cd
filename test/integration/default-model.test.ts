import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { cosine } from '../../src/domain/lookalike.ts';
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { defaultModelDirs } from '../../src/internal/paths.ts';
import { startEmbeddings } from '../../src/start/embeddings.ts';
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// The default model as `npm start` runs it: bge-small-en-v1.5 as `scripts/services.sh start` lays
// it out, no floor configured, so its calibrated floors apply (src/embedding/model-floors.ts). Its
// cosines sit in a narrow band (every post is above 0.3 to any query), so all-MiniLM-L6-v2's floor
// would let nonsense through; the other integration tests run all-MiniLM-L6-v2, which stays supported.
const MODEL_DIR = defaultModelDirs()[0]!;
const POSTS = {
  bedtime: 'Bedtime skincare steps I swear by: cleanser, serum, moisturiser before sleep',
  evening: 'My evening skincare regimen, products linked in bio',
  starter: 'Feeding my sourdough starter twice a day before the bake',
  crumb: 'Open crumb sourdough loaf, 78% hydration, long cold proof',
  tyre: 'How to change a flat tyre on the motorway safely',
  gpu: 'New graphics card benchmarks: frame rates at 1440p in five games',
};
const id = (key: keyof typeof POSTS) => mintId('post', `dm-${key}`);

let stack: Stack;
let atMiniLmFloor: TestRuntime;

beforeAll(async () => {
  if (!existsSync(path.join(MODEL_DIR, 'onnx', 'model_quantized.onnx')))
    throw new Error(`no default model at ${MODEL_DIR}: run \`bash scripts/services.sh model\``);
  stack = await startStack('defmodel', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  // The same indices and model at all-MiniLM-L6-v2's floor.
  atMiniLmFloor = openTestRuntime({
    ...stack.config,
    SEARCH_SIMILARITY_FLOOR: 0.3,
    SEARCH_SIMILARITY_FLOOR_UNMATCHED: 0.3,
  });
  await atMiniLmFloor.ready();
  await atMiniLmFloor.api.app.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'dm-a', handle: 'default.model' }),
    ...Object.entries(POSTS).map(([key, caption]) => postObs('dm-a', { platform_id: `dm-${key}`, caption })),
  ]);
  expect(response.statusCode).toBe(200);
}, 180_000);

afterAll(async () => {
  await atMiniLmFloor?.api.app.close();
  await atMiniLmFloor?.close();
  await stack?.close();
});

const search = (query: string) => stack.post('/v1/social/posts/search', { post: { query }, limit: 10 });
const ids = (body: { data: Array<{ id: string }> }) => body.data.map((p) => p.id);

describe('the default model (bge-small-en-v1.5) with its calibrated floors', () => {
  it('loads from where scripts/services.sh puts it, and says so', async () => {
    const status = stack.runtime.embedder.status();
    expect(status.state).toBe('ready');
    expect(status.model).toBe('bge-small-en-v1.5@q8');
  });

  it('reads at most 256 tokens of a text in one run, as all-MiniLM-L6-v2 does, though it was trained on 512', async () => {
    // "word" is one token: [CLS] + 254 words + [SEP] fills 256 tokens; what follows is for passages.
    const head = 'word '.repeat(254).trim();
    const [alone, withTail] = await stack.runtime.embedder.embedDocuments([
      head,
      `${head} ${'the car needs a new tyre and an oil change '.repeat(30)}`,
    ]);
    expect(cosine(alone!, withTail!)).toBeGreaterThan(0.9999);
  });

  it('answers nonsense empty, which all-MiniLM-L6-v2’s floor would answer with posts', async () => {
    for (const query of ['qwertyuiop zxcvbnm', 'asdfghjkl asdf']) {
      const response = await search(query);
      expect(response.statusCode).toBe(200);
      expect(ids(response.body), query).toEqual([]);
    }
    const loose = await atMiniLmFloor.api.app.inject({
      method: 'POST',
      url: '/v1/social/posts/search',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ post: { query: 'qwertyuiop zxcvbnm' }, limit: 10 }),
    });
    expect(loose.statusCode).toBe(200);
    expect(loose.json().data.length).toBeGreaterThan(0);
  });

  it('answers a query without a word ("#", "...") empty at any floor: the model reads nothing of it', async () => {
    // A floor low enough that the model's nearest posts to punctuation pass it by far (its cosines
    // to any text sit above 0.45), so no CPU's rounding decides the outcome.
    const lowFloor = openTestRuntime({ ...stack.config, SEARCH_SIMILARITY_FLOOR: 0.3 });
    await lowFloor.ready();
    await lowFloor.api.app.ready();
    try {
      const vectors = await stack.runtime.engine.reads.postVectors(
        Object.keys(POSTS).map((k) => id(k as keyof typeof POSTS)),
      );
      for (const query of ['#', '...', '-']) {
        const vector = await stack.runtime.embedder.embedQuery(query);
        const nearest = Math.max(...[...vectors.values()].map((v) => cosine(v, vector)));
        expect(nearest, query).toBeGreaterThan(0.4);
        const response = await lowFloor.api.app.inject({
          method: 'POST',
          url: '/v1/social/posts/search',
          headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ post: { query }, limit: 10 }),
        });
        expect(response.statusCode).toBe(200);
        expect(response.json().data, query).toEqual([]);
        // The calibrated floors answer it empty as well.
        expect(ids((await search(query)).body), query).toEqual([]);
      }
    } finally {
      await lowFloor.api.app.close();
      await lowFloor.close();
    }
  });

  it('answers a question in the asker’s own words with its subject’s posts first', async () => {
    const cases: Array<[string, Array<keyof typeof POSTS>]> = [
      ['what should I put on my face at night?', ['bedtime', 'evening']],
      ['how do I keep my yeast culture alive for baking?', ['starter', 'crumb']],
    ];
    for (const [query, expected] of cases) {
      const response = await search(query);
      expect(response.statusCode).toBe(200);
      const found = ids(response.body);
      expect(found.slice(0, 2).sort(), query).toEqual(expected.map(id).sort());
      expect(found, query).not.toContain(id('tyre'));
    }
  });
});

describe('a switch of model before the indices are rebuilt', () => {
  /** What startEmbeddings logs, by level. */
  const capture = () => {
    const lines: Array<{ level: string; message: string }> = [];
    const at = (level: string) => (_fields: object, message?: string) =>
      void lines.push({ level, message: message ?? '' });
    return { lines, logger: { info: at('info'), warn: at('warn'), fatal: at('fatal') } as never };
  };

  it('warns once at start that the posts hold another model’s vectors, and names the rebuild', async () => {
    const same = capture();
    await startEmbeddings(stack.runtime.embedder, 'hybrid', same.logger, stack.config, stack.runtime.engine.health);
    expect(same.lines.filter((line) => line.level === 'warn')).toEqual([]);

    // The other supported model, on the same indices, whose posts were embedded by the default one.
    const other = createEmbedder({ ...stack.config, MODEL_DIR: defaultModelDirs()[1]! });
    try {
      const switched = capture();
      await startEmbeddings(other, 'hybrid', switched.logger, stack.config, stack.runtime.engine.health);
      const warnings = switched.lines.filter((line) => line.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain(`${Object.keys(POSTS).length} of ${Object.keys(POSTS).length} posts`);
      expect(warnings[0]!.message).toContain('bge-small-en-v1.5@q8, not of all-MiniLM-L6-v2@q8');
      expect(warnings[0]!.message).toContain('indices rebuild posts');
    } finally {
      await other.close();
    }
  }, 60_000);
});
