import { describe, expect, it } from 'vitest';
import type { Client } from '@elastic/elasticsearch';
import {
  readFeedbackVectors,
  usesVectorFeedback,
  vectorFromFeedback,
} from '../../src/engine/elasticsearch/reads/vector-feedback.ts';
import {
  FEEDBACK_BAND,
  FEEDBACK_WEIGHT,
  feedbackShares,
  feedbackVector,
  unitMean,
} from '../../src/query/relevance-feedback.ts';

const cosine = (a: readonly number[], b: readonly number[]) =>
  a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));

describe('Rocchio feedback on the query vector', () => {
  it('moves the query toward the mean of its feedback documents, by β = 0.75, at unit length', () => {
    const moved = feedbackVector([1, 0, 0], [{ vector: [0, 1, 0] }, { vector: [0, 0, 1] }]);
    // q + 0.75 · mean = [1, 0.375, 0.375], normalized.
    const norm = Math.hypot(1, 0.375, 0.375);
    expect(moved.map((x) => +x.toFixed(6))).toEqual([1 / norm, 0.375 / norm, 0.375 / norm].map((x) => +x.toFixed(6)));
    expect(Math.hypot(...moved)).toBeCloseTo(1, 12);
    expect(FEEDBACK_WEIGHT).toBe(0.75);
  });

  it('stays closer to the query than to the documents: feedback corrects the query, never replaces it', () => {
    const query = [1, 0];
    const doc = [0, 1];
    const moved = feedbackVector(query, [{ vector: doc }]);
    expect(cosine(moved, query)).toBeGreaterThan(cosine(moved, doc));
    expect(cosine(moved, doc)).toBeGreaterThan(0);
  });

  it('leaves out documents without a vector (or of another length), and returns the query when none is left', () => {
    expect(feedbackVector([0.6, 0.8], [{ vector: [] }, { vector: [1, 2, 3] }])).toEqual([0.6, 0.8]);
    expect(feedbackVector([1, 0], [{ vector: [] }, { vector: [0, 1] }])).toEqual(
      feedbackVector([1, 0], [{ vector: [0, 1] }]),
    );
    expect(feedbackVector([], [{ vector: [1] }])).toEqual([]);
  });

  it('weighs each document by its share of the fused scores: a weak third result moves the query little', () => {
    const query = [1, 0, 0];
    const onTopic = [0.8, 0.6, 0];
    const elsewhere = [0, 0, 1];
    const equal = feedbackVector(query, [{ vector: onTopic }, { vector: elsewhere }]);
    const weighted = feedbackVector(query, [
      { vector: onTopic, weight: 1 },
      { vector: elsewhere, weight: 0.15 },
    ]);
    expect(cosine(weighted, elsewhere)).toBeLessThan(cosine(equal, elsewhere));
    expect(cosine(weighted, onTopic)).toBeGreaterThan(cosine(equal, onTopic));
    // Only the ratios count.
    const scaled = feedbackVector(query, [
      { vector: onTopic, weight: 10 },
      { vector: elsewhere, weight: 1.5 },
    ]);
    scaled.forEach((x, i) => expect(x).toBeCloseTo(weighted[i]!, 12));
  });

  it('leaves out documents of no weight', () => {
    expect(feedbackVector([1, 0], [{ vector: [0, 1], weight: 0 }])).toEqual([1, 0]);
  });
});

describe('which searches use vector feedback', () => {
  it('questions: hybrid searches phrased as questions that the model reads', () => {
    expect(usesVectorFeedback('any cheap tips for capsule wardrobe?', 'hybrid', true, 'questions')).toBe(true);
    expect(usesVectorFeedback('what do I need to know about sourdough', 'hybrid', true, 'questions')).toBe(true);
    expect(usesVectorFeedback('night-time skincare routine', 'hybrid', true, 'questions')).toBe(false);
  });

  it('on (the default): every hybrid search of text the model reads; off (and absent): none', () => {
    expect(usesVectorFeedback('any cheap tips for capsule wardrobe?', 'hybrid', true, 'on')).toBe(true);
    expect(usesVectorFeedback('night-time skincare routine', 'hybrid', true, 'on')).toBe(true);
    expect(usesVectorFeedback('any cheap tips for capsule wardrobe?', 'hybrid', true, 'off')).toBe(false);
    expect(usesVectorFeedback('any cheap tips for capsule wardrobe?', 'hybrid', true)).toBe(false);
  });

  it('never entity queries, queries the model cannot read, or the semantic-only mode: they rank as before', () => {
    for (const policy of ['on', 'questions'] as const) {
      for (const query of ['#skincare', '@glow.maya', '"capsule wardrobe"', 'skincare', 'how do I tag #skincare?'])
        expect(usesVectorFeedback(query, 'hybrid', true, policy), query).toBe(false);
      expect(usesVectorFeedback('¿cómo empiezo con cuidado de la piel?', 'hybrid', false, policy)).toBe(false);
      expect(usesVectorFeedback('how do I start a skincare routine?', 'semantic', true, policy)).toBe(false);
    }
  });
});

describe('feedback needs lexical evidence', () => {
  // The snapshot spans the posts' vector documents too (reads/nearest-posts.ts).
  const POSTS_ONLY = { prefix: { _index: 'test-posts-v' } };
  const unreachable = {
    search: () => Promise.reject(new Error('no request expected')),
  } as unknown as Client;
  const neighbour = (id: string) => ({ id, score: 0.4, lexical: null, semantic: 0.8, tier: 0 });

  it('asks nothing and moves nothing when BM25 matched none of the first results (neighbours alone)', async () => {
    const moved = await vectorFromFeedback({
      client: unreachable,
      pit: 'pit',
      keepAlive: '30s',
      postsOnly: POSTS_ONLY,
      query: [1, 0],
      fused: [neighbour('a'), neighbour('b'), neighbour('c')],
    });
    expect(moved).toBeNull();
  });

  /** A client whose vector documents hold `stored`, recording what it is asked. */
  function vectorDocuments(stored: Record<string, number[]>) {
    const asked: Array<Record<string, unknown>> = [];
    const ids: string[][] = [];
    const client = {
      search: (request: { query: { bool: { filter: [{ ids: { values: string[] } }] } } }) => {
        asked.push(request);
        ids.push(request.query.bool.filter[0].ids.values);
        const hits = ids
          .at(-1)!
          .filter((id) => stored[id])
          .map((id) => ({ _id: id, fields: { embedding: [stored[id]] } }));
        return Promise.resolve({ hits: { hits } });
      },
    } as unknown as Client;
    return { client, asked, ids };
  }
  const fused = [
    { id: 'a', score: 0.9, lexical: 1, semantic: 0.8, tier: 0 },
    { ...neighbour('b'), score: 0.5 },
    { ...neighbour('c'), score: 0.45 },
    { ...neighbour('d'), score: 0.2 },
  ];

  it('reads the top 3 vectors from their vector documents when a lexical hit is among the first results', async () => {
    const { client, asked } = vectorDocuments({ a: [0, 1], d: [1, 1] });
    const moved = await vectorFromFeedback({
      client,
      pit: 'pit',
      keepAlive: '30s',
      postsOnly: POSTS_ONLY,
      query: [1, 0],
      fused,
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      query: { bool: { filter: [{ ids: { values: ['a', 'b', 'c'] } }, { bool: { must_not: [POSTS_ONLY] } }] } },
      _source: false,
      docvalue_fields: ['embedding'],
    });
    // The feedback documents with a vector move it ('b' and 'c' have no vector document yet).
    expect(moved).toEqual(feedbackVector([1, 0], [{ vector: [0, 1] }]));
  });

  it("reads only the vectors the first neighbours' read did not ask for, and moves the vector alike", async () => {
    const { client, asked, ids } = vectorDocuments({ a: [0, 1], c: [1, 1] });
    const prefetched = readFeedbackVectors({
      client,
      pit: 'pit',
      keepAlive: '30s',
      postsOnly: POSTS_ONLY,
      ids: ['a', 'b'],
    });
    const deps = { client, pit: 'pit', keepAlive: '30s', postsOnly: POSTS_ONLY, query: [1, 0], fused };
    const moved = await vectorFromFeedback({ ...deps, prefetched });
    expect(ids).toEqual([['a', 'b'], ['c']]);
    expect(moved).toEqual(await vectorFromFeedback(deps));
    const all = await readFeedbackVectors({ ...deps, ids: ['a', 'b', 'c'] });
    expect(moved).toEqual(await vectorFromFeedback({ ...deps, prefetched: Promise.resolve(all) }));
    expect(asked).toHaveLength(4);
  });
});

describe('the cut after the feedback documents is a band, not a rank', () => {
  it('counts exactly the top 3, whole, when they lead the rest by more than half the band', () => {
    expect(FEEDBACK_BAND).toBe(0.1);
    expect(feedbackShares([0.9, 0.8, 0.75, 0.5, 0.1])).toEqual([1, 1, 1, 0, 0]);
    // Fewer than three results: a missing score is the lowest there is.
    expect(feedbackShares([0.9, 0.4])).toEqual([1, 1]);
  });

  it('counts both sides of a near tie at the cut by about half', () => {
    const shares = feedbackShares([0.9, 0.8, 0.631, 0.629, 0.2]);
    expect(shares.slice(0, 2)).toEqual([1, 1]);
    expect(shares[2]).toBeCloseTo(0.51, 10);
    expect(shares[3]).toBeCloseTo(0.49, 10);
    expect(shares[4]).toBe(0);
  });

  it('moves the vector by as little as the scores moved when the 3rd and 4th swap on a hair', () => {
    const query = [1, 0, 0, 0];
    const docs = [
      [0, 1, 0, 0],
      [0, 1, 0.2, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 1],
    ];
    const moved = (scores: number[]) => {
      const shares = feedbackShares(scores);
      return feedbackVector(
        query,
        docs.map((vector, i) => ({ vector, weight: shares[i]! * scores[i]! })),
      );
    };
    const before = moved([0.9, 0.8, 0.6305, 0.6295]);
    const after = moved([0.9, 0.8, 0.6295, 0.6305]);
    expect(cosine(before, after)).toBeGreaterThan(0.9999);
    // A hard top 3 would have swapped a whole document.
    const hard = (third: number[]) =>
      feedbackVector(
        query,
        [docs[0]!, docs[1]!, third].map((vector) => ({ vector })),
      );
    expect(cosine(hard(docs[2]!), hard(docs[3]!))).toBeLessThan(0.96);
  });

  it('weighs each document by its fused score times its share, and leaves out those without one', () => {
    const scores = [0.9, 0.8, 0.5, 0.2];
    const shares = feedbackShares(scores);
    const docs = [
      [0, 1, 0],
      [0, 0.6, 0.8],
      [0, 0, 1],
      [1, 0, 0],
    ].map((vector, i) => ({
      vector,
      weight: shares[i]! * scores[i]!,
    }));
    expect(feedbackVector([1, 0, 0], docs)).toEqual(feedbackVector([1, 0, 0], docs.slice(0, 3)));
    const halfway = feedbackVector(
      [1, 0, 0],
      [
        { vector: [0, 1, 0], weight: 1 },
        { vector: [0, 0, 1], weight: 0.5 },
      ],
    );
    // q + 0.75 · (1 · [0, 1, 0] + 0.5 · [0, 0, 1]) / 1.5 = [1, 0.5, 0.25], normalized.
    const norm = Math.hypot(1, 0.5, 0.25);
    expect(halfway.map((x) => +x.toFixed(6))).toEqual([1 / norm, 0.5 / norm, 0.25 / norm].map((x) => +x.toFixed(6)));
  });
});

describe('unitMean: the direction posts share', () => {
  it('is the mean at unit length, without a vector of another length; null for none or when they cancel', () => {
    const mean = unitMean([
      [1, 0, 0],
      [0, 1, 0],
      [1, 2],
    ])!;
    expect(mean.map((x) => +x.toFixed(6))).toEqual([Math.SQRT1_2, Math.SQRT1_2, 0].map((x) => +x.toFixed(6)));
    expect(unitMean([])).toBeNull();
    expect(
      unitMean([
        [1, 0],
        [-1, 0],
      ]),
    ).toBeNull();
  });
});
