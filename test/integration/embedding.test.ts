import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createEmbedder,
  EmbeddingsUnavailableError,
  type Embedder,
  type EmbeddingConfig,
} from '../../src/embedding/embedder.ts';

// The real model from the shared folder beside the repository; no network, no mocks.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
const config = (overrides: Partial<EmbeddingConfig> = {}): EmbeddingConfig => ({
  MODEL_DIR,
  EMBEDDINGS: 'auto',
  EMBEDDING_DTYPE: 'q8',
  EMBEDDING_THREADS: 0,
  ...overrides,
});

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}
const norm = (v: Float32Array) => Math.hypot(...v);

const WORDS =
  'morning light coffee recipe travel budget sneakers review vintage camera garden tomato puppy training yoga stretch sourdough loaf'.split(
    ' ',
  );
/** Distinct post-like texts of about 70 words. */
function posts(count: number): string[] {
  return Array.from({ length: count }, (_, n) => {
    const words = Array.from({ length: 70 }, (_, k) => WORDS[(n * 7 + k * ((n % 5) + 1)) % WORDS.length]!);
    return `post ${n}: ${words.join(' ')}`;
  });
}

let embedder: Embedder;

beforeAll(async () => {
  embedder = createEmbedder(config());
  expect(embedder.status().state).toBe('loading');
  await embedder.ready();
});

afterAll(async () => {
  await embedder?.close();
});

describe('embedder (all-MiniLM-L6-v2, q8)', () => {
  it('is ready, names model and weights, and makes 384-dimension unit vectors', async () => {
    expect(embedder.status()).toMatchObject({ state: 'ready', model: 'all-MiniLM-L6-v2@q8' });
    expect(embedder.status().detail).toContain(MODEL_DIR);
    expect(embedder.modelId).toBe('all-MiniLM-L6-v2@q8');
    expect(embedder.dimensions).toBe(384);
    const query = await embedder.embedQuery('night-time skincare routine');
    const [doc] = await embedder.embedDocuments(['a reel about an evening skincare routine']);
    for (const v of [query, doc!]) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(384);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('gives no vector to a text it cannot read: mostly word pieces its vocabulary lacks', async () => {
    // 🔥🔥🔥 is one unknown piece; Thai is outside the vocabulary. An emoji beside words, and
    // Japanese (its kana and most ideographs are in the vocabulary), are read.
    const [fire, thai, mixed, japanese] = await embedder.embedDocuments([
      '🔥🔥🔥',
      'วิธีดูแลผิวหน้า',
      'love this 🔥🔥',
      '夜のスキンケアルーティン、毎日やってます',
    ]);
    expect([fire, thai, mixed, japanese].map((v) => v!.length)).toEqual([0, 0, 384, 384]);
    expect((await embedder.embedQuery('🔥🔥🔥')).length).toBe(0);
    expect((await embedder.embedQuery('🔥🔥🔥 skincare')).length).toBe(384);
  });

  it('puts a paraphrase closer than an unrelated text', async () => {
    const [a, b, c] = await embedder.embedDocuments([
      'night-time skincare routine',
      'evening skin care regimen',
      'how to change a car tyre',
    ]);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.3);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(b!, c!) + 0.3);
  });

  it('returns document vectors in input order, equal to query vectors of the same texts', async () => {
    // Mixed lengths: the embedder runs longest first internally and must put them back.
    const texts = ['short', ...posts(40), 'a medium length caption about sourdough', ''];
    const docs = await embedder.embedDocuments(texts);
    expect(docs).toHaveLength(texts.length);
    for (const i of [0, 1, 17, 40, 41, 42]) {
      const alone = await embedder.embedQuery(texts[i]!);
      expect(cosine(docs[i]!, alone)).toBeGreaterThan(0.9999);
    }
    expect(await embedder.embedDocuments([])).toEqual([]);
  });

  it('answers a repeated query from the cache, with a copy the caller may change', async () => {
    const text = 'budget meal prep for the week';
    const first = await embedder.embedQuery(text);
    const before = embedder.stats();
    const again = await embedder.embedQuery(text);
    const after = embedder.stats();
    expect(after.modelCalls).toBe(before.modelCalls);
    expect(after.cacheHits).toBe(before.cacheHits + 1);
    expect(again).toEqual(first);
    again.fill(0);
    expect(await embedder.embedQuery(text)).toEqual(first);
  });

  it('micro-batches concurrent queries into fewer model runs', async () => {
    const queries = Array.from({ length: 24 }, (_, i) => `concurrent query number ${i} about hiking boots`);
    const before = embedder.stats();
    const vectors = await Promise.all([...queries, queries[0]!].map((q) => embedder.embedQuery(q)));
    const after = embedder.stats();
    expect(after.queries - before.queries).toBe(25);
    expect(after.textsEmbedded - before.textsEmbedded).toBe(24); // the duplicate shares the first one's run
    expect(after.modelCalls - before.modelCalls).toBeLessThanOrEqual(2);
    expect(cosine(vectors[0]!, vectors[24]!)).toBe(1);
    // Batched vectors equal the same text embedded alone (padding must not leak into the mean).
    const [alone] = await embedder.embedDocuments([queries[5]!]);
    expect(cosine(vectors[5]!, alone!)).toBeGreaterThan(0.9999);
  });

  it('embeds short texts together in one run, each close to itself alone, in order', async () => {
    const texts = [
      'better crochet without expensive stuff',
      'crochet without expensive stuff',
      '🔥🔥🔥',
      'better stuff',
    ];
    const before = embedder.stats();
    const together = await embedder.embedQueriesTogether(texts);
    const after = embedder.stats();
    expect(after.modelCalls - before.modelCalls).toBe(1);
    expect(together.map((v) => v.length)).toEqual([384, 384, 0, 384]);
    const alone = await embedder.embedDocuments(texts);
    for (const i of [0, 1, 3]) {
      // One run shares the q8 activations' scale (and its padding): near itself alone (0.96–0.99
      // here), not equal, and nearer than to any other text of the run.
      expect(cosine(together[i]!, alone[i]!)).toBeGreaterThan(0.95);
      for (const j of [0, 1, 3].filter((k) => k !== i))
        expect(cosine(together[i]!, alone[i]!)).toBeGreaterThan(cosine(together[i]!, alone[j]!));
      expect(norm(together[i]!)).toBeCloseTo(1, 5);
    }
    // The same texts again are the same run, from the cache: no model, the same vectors. One text
    // of them asked alone is not that run's vector, and runs the model.
    const again = await embedder.embedQueriesTogether(texts);
    expect(embedder.stats().modelCalls).toBe(after.modelCalls + 1);
    expect(again).toEqual(together);
    again[0]![0] = 42;
    expect((await embedder.embedQueriesTogether(texts))[0]).toEqual(together[0]);
    const calls = embedder.stats().modelCalls;
    const alone0 = await embedder.embedQuery(texts[0]!);
    expect(embedder.stats().modelCalls).toBe(calls + 1);
    expect(alone0).not.toEqual(together[0]);
  });

  it("reads a model folder's prompts: a query after its query prompt, a text it cannot read still unreadable", async () => {
    // all-MiniLM-L6-v2 with e5's prompts (config_sentence_transformers.json), its files linked.
    const folder = mkdtempSync(path.join(tmpdir(), 'prompted-model-'));
    try {
      for (const name of readdirSync(MODEL_DIR)) {
        if (name === 'config_sentence_transformers.json') continue;
        symlinkSync(path.join(MODEL_DIR, name), path.join(folder, name));
      }
      writeFileSync(
        path.join(folder, 'config_sentence_transformers.json'),
        JSON.stringify({ prompts: { query: 'query: ', document: 'passage: ' } }),
      );
      const prompted = createEmbedder(config({ MODEL_DIR: folder }));
      try {
        await prompted.ready();
        const [query, document, unreadable] = await Promise.all([
          prompted.embedQuery('sourdough starter'),
          prompted.embedDocuments(['sourdough starter']).then((v) => v[0]!),
          prompted.embedQuery('🔥🔥🔥'),
        ]);
        expect(cosine(query, await embedder.embedQuery('query: sourdough starter'))).toBeGreaterThan(0.9999);
        expect(cosine(document, await embedder.embedQuery('passage: sourdough starter'))).toBeGreaterThan(0.9999);
        expect(unreadable).toHaveLength(0);
      } finally {
        await prompted.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("reads a question's texts run together after the query prompt, but without BGE's instruction for short queries", async () => {
    // all-MiniLM-L6-v2's files under two prompt configurations: e5's role prefix, which every query
    // needs, and BGE's retrieval instruction in a folder named as a BGE model, which a whole
    // sentence is read without (model-plan.ts).
    const instruction = 'Represent this sentence for searching relevant passages: ';
    const setups = [
      { prefix: 'prompted-model-', query: 'query: ', sentence: 'query: ' },
      { prefix: 'bge-prompted-', query: instruction, sentence: '' },
    ];
    for (const setup of setups) {
      const folder = mkdtempSync(path.join(tmpdir(), setup.prefix));
      try {
        for (const name of readdirSync(MODEL_DIR)) {
          if (name === 'config_sentence_transformers.json') continue;
          symlinkSync(path.join(MODEL_DIR, name), path.join(folder, name));
        }
        writeFileSync(
          path.join(folder, 'config_sentence_transformers.json'),
          JSON.stringify({ prompts: { query: setup.query, document: '' } }),
        );
        const prompted = createEmbedder(config({ MODEL_DIR: folder }));
        try {
          const text = 'how do I keep my sourdough starter alive';
          const [together] = await prompted.embedQueriesTogether([text, 'sourdough starter alive']);
          const read = await embedder.embedQuery(setup.sentence + text);
          const other = await embedder.embedQuery((setup.sentence === '' ? setup.query : '') + text);
          // One run shares the q8 activations' scale: near the same text alone, not equal.
          expect(cosine(together!, read)).toBeGreaterThan(0.95);
          expect(cosine(together!, read)).toBeGreaterThan(cosine(together!, other));
        } finally {
          await prompted.close();
        }
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    }
  });

  it("pools as the model folder says: the CLS token's state for a CLS-pooled model, and refuses a pooling it lacks", async () => {
    // all-MiniLM-L6-v2's files linked, with a 1_Pooling/config.json naming the CLS token (BGE's),
    // then max pooling; the reference is the transformers.js pipeline's own CLS pooling.
    const parent = mkdtempSync(path.join(tmpdir(), 'pooled-model-'));
    const folder = path.join(parent, 'cls-model');
    const pooling = (mode: string) =>
      writeFileSync(
        path.join(folder, '1_Pooling', 'config.json'),
        JSON.stringify({ word_embedding_dimension: 384, pooling_mode_mean_tokens: false, [mode]: true }),
      );
    try {
      mkdirSync(path.join(folder, '1_Pooling'), { recursive: true });
      for (const name of readdirSync(MODEL_DIR))
        if (name !== '1_Pooling') symlinkSync(path.join(MODEL_DIR, name), path.join(folder, name));
      pooling('pooling_mode_cls_token');
      const texts = ['night-time skincare routine', 'Vitamin D deficiency and bone fractures in elderly people'];
      const cls = createEmbedder(config({ MODEL_DIR: folder, EMBEDDING_DTYPE: 'fp32', EMBEDDING_THREADS: 1 }));
      const { env, pipeline } = await import('@huggingface/transformers');
      env.allowRemoteModels = false;
      env.localModelPath = `${parent}/`;
      const reference = await pipeline('feature-extraction', 'cls-model', { dtype: 'fp32' });
      try {
        const vectors = await cls.embedDocuments(texts);
        const expectedCls = (await reference(texts, { pooling: 'cls', normalize: true })).tolist() as number[][];
        const expectedMean = (await reference(texts, { pooling: 'mean', normalize: true })).tolist() as number[][];
        for (let i = 0; i < texts.length; i++) {
          expect(cosine(vectors[i]!, Float32Array.from(expectedCls[i]!))).toBeGreaterThan(0.99999);
          expect(cosine(vectors[i]!, Float32Array.from(expectedMean[i]!))).toBeLessThan(0.99);
        }
      } finally {
        await reference.dispose();
        await cls.close();
      }
      pooling('pooling_mode_max_tokens');
      const max = createEmbedder(config({ MODEL_DIR: folder, EMBEDDINGS: 'on' }));
      await expect(max.ready()).rejects.toThrow(/pools by pooling_mode_max_tokens: only the mean or the CLS token/);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('truncates texts longer than 256 tokens instead of failing', async () => {
    // "word" is one token: [CLS] + 254 words + [SEP] fills the 256 tokens exactly.
    const head = 'word '.repeat(254).trim();
    const long = `${head} ${'the car needs a new tyre and an oil change '.repeat(200)}`;
    const [headVector, longVector, tailVector] = await embedder.embedDocuments([
      head,
      long,
      'the car needs a new tyre and an oil change',
    ]);
    expect(norm(longVector!)).toBeCloseTo(1, 5);
    expect(cosine(longVector!, headVector!)).toBeGreaterThan(0.9999);
    expect(cosine(longVector!, tailVector!)).toBeLessThan(0.5);
    expect(await embedder.embedQuery(long)).toHaveLength(384);
  });

  it('keeps the event loop free while it embeds 256 documents', async () => {
    const texts = posts(256);
    let last = performance.now();
    let maxGap = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 10);
    const started = performance.now();
    const vectors = await embedder.embedDocuments(texts);
    const total = performance.now() - started;
    clearInterval(timer);
    expect(vectors).toHaveLength(256);
    expect(total).toBeGreaterThan(300);
    expect(ticks).toBeGreaterThan(total / 10 / 3);
    // Relative to the run, not a time: on a loaded machine the run and every gap grow together (an
    // absolute 250 ms failed once under other processes' load, a 308 ms gap in a 10 s run). The
    // work done on the loop instead would leave one gap of most of the run.
    expect(maxGap).toBeLessThan(total / 8);
  });
});

describe('embedder configuration', () => {
  it('is off with EMBEDDINGS=off, and says so', async () => {
    const off = createEmbedder(config({ EMBEDDINGS: 'off' }));
    expect(off.status()).toEqual({ state: 'off', model: null, detail: 'off: EMBEDDINGS=off (BM25 only)' });
    expect(off.modelId).toBeNull();
    await expect(off.ready()).resolves.toBeUndefined();
    await expect(off.embedQuery('anything')).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    await expect(off.embedDocuments(['anything'])).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    await off.close();
  });

  it('is off with EMBEDDINGS=auto and no model, failed with EMBEDDINGS=on and no model', async () => {
    const auto = createEmbedder({ EMBEDDINGS: 'auto', EMBEDDING_DTYPE: 'q8', EMBEDDING_THREADS: 0 });
    expect(auto.status().state).toBe('off');
    expect(auto.status().detail).toMatch(/MODEL_DIR is unset/);
    const on = createEmbedder({ EMBEDDINGS: 'on', EMBEDDING_DTYPE: 'q8', EMBEDDING_THREADS: 0 });
    expect(on.status().state).toBe('failed');
    await expect(on.ready()).rejects.toThrow(/EMBEDDINGS=on but neither MODEL_DIR nor MODEL_ID is set/);
  });

  it('fails clearly when MODEL_DIR does not exist', async () => {
    const missing = path.join(path.dirname(MODEL_DIR), 'no-such-model');
    const broken = createEmbedder(config({ MODEL_DIR: missing, EMBEDDINGS: 'on' }));
    await expect(broken.ready()).rejects.toThrow(`MODEL_DIR ${missing} does not exist`);
    await expect(broken.ready()).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    expect(broken.status()).toMatchObject({ state: 'failed', model: 'no-such-model@q8' });
    await expect(broken.embedQuery('x')).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
  });

  it('gives fp32 vectors equal to the transformers.js pipeline, q8 ones within cosine 0.98 of them and 0.97 of the untouched q8 file', async () => {
    const fp32 = createEmbedder(config({ EMBEDDING_DTYPE: 'fp32', EMBEDDING_THREADS: 1 }));
    try {
      await fp32.ready();
      expect(fp32.modelId).toBe('all-MiniLM-L6-v2@fp32');
      const texts = [
        'night-time skincare routine',
        'how to change a car tyre',
        posts(1)[0]!,
        'Vitamin D deficiency and bone fractures in elderly people',
      ];
      const [full, quantized] = await Promise.all([fp32.embedDocuments(texts), embedder.embedDocuments(texts)]);
      for (let i = 0; i < texts.length; i++) expect(cosine(full[i]!, quantized[i]!)).toBeGreaterThanOrEqual(0.98);

      // The documented recipe (models README), run here on the main thread: the embedder's own
      // tokenize / pool / normalise must agree with it for texts within 256 tokens.
      const { env, pipeline } = await import('@huggingface/transformers');
      env.allowRemoteModels = false;
      env.localModelPath = `${path.dirname(MODEL_DIR)}/`;
      const reference = await pipeline('feature-extraction', path.basename(MODEL_DIR), { dtype: 'fp32' });
      try {
        const expected = (await reference(texts, { pooling: 'mean', normalize: true })).tolist() as number[][];
        for (let i = 0; i < texts.length; i++)
          expect(cosine(full[i]!, Float32Array.from(expected[i]!))).toBeGreaterThan(0.99999);
      } finally {
        await reference.dispose();
      }
      // The q8 embedder loads its int8 weights at seven bits (every CPU computes the same
      // integers) and the word-embedding table at half precision: its vectors stay as close to the
      // untouched q8 file's, each text run alone, as that file's own vectors are from one CPU to
      // another (AVX2 against AVX-512 VNNI: cosine ≥ 0.985; seven bits against AVX2: ≥ 0.978 over
      // 100 SciFact claims; bench/embeddings.md, "Kernel noise").
      const untouched = await pipeline('feature-extraction', path.basename(MODEL_DIR), { dtype: 'q8' });
      try {
        let differing = 0;
        for (let i = 0; i < texts.length; i++) {
          const expected = Float32Array.from(
            ((await untouched(texts[i]!, { pooling: 'mean', normalize: true })).tolist() as number[][])[0]!,
          );
          expect(cosine(quantized[i]!, expected)).toBeGreaterThanOrEqual(0.97);
          if (quantized[i]!.some((value, j) => value !== expected[j])) differing += 1;
        }
        // Without the conversion the two are equal bit for bit (the same tokenizer and session).
        expect(differing).toBeGreaterThan(0);
      } finally {
        await untouched.dispose();
      }
    } finally {
      await fp32.close();
    }
  });

  it('moves each vector to cosine 1 − distance of itself under EMBEDDING_NOISE (test-only), the same way for the same text', async () => {
    const noisy = createEmbedder(config({ EMBEDDING_THREADS: 1, EMBEDDING_NOISE: { distance: 0.015, seed: 1 } }));
    const other = createEmbedder(config({ EMBEDDING_THREADS: 1, EMBEDDING_NOISE: { distance: 0.015, seed: 2 } }));
    try {
      await Promise.all([noisy.ready(), other.ready()]);
      expect(noisy.status().detail).toContain('perturbed by EMBEDDING_NOISE 0.015:1');
      const texts = ['night-time skincare routine', 'how to change a car tyre', '🔥🔥🔥'];
      const [plain, moved, again, seeded] = await Promise.all([
        embedder.embedDocuments(texts),
        noisy.embedDocuments(texts),
        noisy.embedDocuments(texts),
        other.embedDocuments(texts),
      ]);
      for (let i = 0; i < 2; i++) {
        expect(cosine(plain[i]!, moved[i]!)).toBeCloseTo(0.985, 6);
        expect(norm(moved[i]!)).toBeCloseTo(1, 5);
        expect(again[i]).toEqual(moved[i]);
        // Another seed moves it another way: two perturbed copies are ~twice as far apart.
        expect(cosine(moved[i]!, seeded[i]!)).toBeLessThan(0.985);
      }
      // A text the model cannot read still has no vector.
      expect([moved[2]!.length, (await noisy.embedQuery('🔥🔥🔥')).length]).toEqual([0, 0]);
    } finally {
      await Promise.all([noisy.close(), other.close()]);
    }
  });

  it('rejects waiting and later calls once closed', async () => {
    const closing = createEmbedder(config({ EMBEDDING_THREADS: 1 }));
    const waiting = expect(closing.embedQuery('queued while loading')).rejects.toBeInstanceOf(
      EmbeddingsUnavailableError,
    );
    await closing.close();
    await waiting;
    await expect(closing.embedDocuments(['after close'])).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    expect(closing.status()).toMatchObject({ state: 'failed', detail: 'all-MiniLM-L6-v2@q8: closed' });
  });

  it('closes cleanly in the middle of a run', async () => {
    const busy = createEmbedder(config({ EMBEDDING_THREADS: 1 }));
    await busy.ready();
    const running = expect(busy.embedDocuments(posts(32))).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await busy.close();
    await running;
  });

  it("writes nothing into its user's home: onnxruntime's telemetry is off unless the environment turns it on", async () => {
    // A process of its own with a fresh home, and without the switch this test process already
    // set: onnxruntime reads it once, when it initializes.
    const home = mkdtempSync(path.join(tmpdir(), 'embedder-home-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') };
      delete env['ORT_DISABLE_TELEMETRY'];
      const embedderModule = path.resolve(import.meta.dirname, '../../src/embedding/embedder.ts');
      const script = [
        `import { createEmbedder } from ${JSON.stringify(embedderModule)};`,
        `const embedder = createEmbedder(${JSON.stringify(config({ EMBEDDINGS: 'on', EMBEDDING_THREADS: 1 }))});`,
        `const vector = await embedder.embedQuery('a night-time skincare routine');`,
        'await embedder.close();',
        'process.stdout.write(String(vector.length));',
      ].join('\n');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { env, timeout: 60_000 },
      );
      expect(stdout).toBe('384');
      expect(readdirSync(home, { recursive: true })).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('fails pending work and goes failed when its thread dies', async () => {
    // Catch the embedder's Worker as it posts a request, then end the thread from outside, as a
    // crash would. (Only while idle: ending it during an onnxruntime run aborts the process.)
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const warnings: object[] = [];
    const dying = createEmbedder(config({ EMBEDDING_THREADS: 1 }), {
      info: () => undefined,
      warn: (obj) => warnings.push(obj),
    });
    try {
      await dying.embedQuery('first query');
      const worker = posted.mock.contexts.at(-1) as Worker;
      posted.mockRestore();
      void worker.terminate();
      await expect(dying.embedQuery('sent to a dead thread')).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
      expect(dying.status().state).toBe('failed');
      expect(dying.status().detail).toMatch(/the model thread exited/);
      expect(warnings).toHaveLength(1);
      await expect(dying.embedDocuments(['after the crash'])).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
      expect(await dying.embedQuery('first query')).toHaveLength(384); // the cache still answers
    } finally {
      posted.mockRestore();
      await dying.close();
    }
  });
});
