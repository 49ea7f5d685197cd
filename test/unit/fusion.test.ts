import { describe, expect, it } from 'vitest';
import { dequantizeVector, quantizeVector } from '../../src/engine/elasticsearch/vectors.ts';
import { fuseReciprocalRank } from '../../bench/relevance/rrf.ts';
import { fuseConvex } from '../../src/query/fusion.ts';
import { decodeVector, encodeVector } from '../../src/text/vector-codec.ts';

describe('convex fusion of min–max normalized scores', () => {
  it('puts a document both retrievers rank high above one that only one of them found', () => {
    const fused = fuseConvex(
      [
        { id: 'a', score: 20 },
        { id: 'b', score: 12 },
        { id: 'c', score: 4 },
      ],
      [
        { id: 'b', score: 0.9 },
        { id: 'd', score: 0.85 },
        { id: 'a', score: 0.5 },
      ],
    );
    expect(fused.map((f) => f.id)).toEqual(['b', 'a', 'd', 'c']);
    // b: 0.5·(12−4)/16 + 0.5·1 = 0.75; a: 0.5·1 + 0.5·0 = 0.5; d: 0.5·0.875 = 0.4375; c: 0
    expect(fused.map((f) => +f.score.toFixed(4))).toEqual([0.75, 0.5, 0.4375, 0]);
    const d = fused.find((f) => f.id === 'd')!;
    expect(d.lexical).toBeNull();
    expect(d.semantic).toBeCloseTo(0.875, 12);
  });

  it('is scale-free: multiplying BM25 scores by any factor changes nothing', () => {
    const lexical = [
      { id: 'a', score: 3 },
      { id: 'b', score: 2 },
      { id: 'c', score: 1 },
    ];
    const semantic = [
      { id: 'c', score: 0.8 },
      { id: 'b', score: 0.7 },
      { id: 'a', score: 0.1 },
    ];
    const scaled = lexical.map((h) => ({ ...h, score: h.score * 37.5 }));
    expect(fuseConvex(scaled, semantic)).toEqual(fuseConvex(lexical, semantic).map((f) => ({ ...f })));
  });

  it('breaks ties by ID so every page sees the same total order', () => {
    const fused = fuseConvex(
      [
        { id: 'z', score: 1 },
        { id: 'y', score: 1 },
      ],
      [
        { id: 'x', score: 0.5 },
        { id: 'w', score: 0.9 },
      ],
    );
    // w, y and z tie at 0.5 and sort by ID; x is the semantic window's minimum (0).
    expect(fused.map((f) => f.id)).toEqual(['w', 'y', 'z', 'x']);
  });

  it('with weight 0 orders by similarity alone (the semantic-only mode)', () => {
    const fused = fuseConvex(
      [],
      [
        { id: 'b', score: 0.3 },
        { id: 'c', score: 0.6 },
        { id: 'a', score: 0.45 },
      ],
      0,
    );
    expect(fused.map((f) => f.id)).toEqual(['c', 'a', 'b']);
  });

  it('reciprocal rank fusion (the measured alternative) sums 1/(k + rank)', () => {
    const fused = fuseReciprocalRank(
      [
        { id: 'a', score: 5 },
        { id: 'b', score: 1 },
      ],
      [{ id: 'b', score: 0.9 }],
    );
    expect(fused.map((f) => [f.id, +f.score.toFixed(6)])).toEqual([
      ['b', +(1 / 62 + 1 / 61).toFixed(6)],
      ['a', +(1 / 61).toFixed(6)],
    ]);
  });
});

describe('vector codecs', () => {
  const vector = Array.from({ length: 384 }, (_, i) => Math.sin(i) / 10);

  it('stores record vectors exactly (float32)', () => {
    const decoded = decodeVector(encodeVector(vector));
    decoded.forEach((v, i) => expect(v).toBeCloseTo(vector[i]!, 6));
    expect(encodeVector(vector)).toHaveLength(2048);
  });

  it('quantizes cursor vectors to int8 within half a step, in ~520 characters', () => {
    const encoded = quantizeVector(vector);
    expect(encoded.length).toBeLessThan(520);
    const step = Math.max(...vector.map(Math.abs)) / 127;
    dequantizeVector(encoded).forEach((v, i) => expect(Math.abs(v - vector[i]!)).toBeLessThanOrEqual(step / 2 + 1e-9));
    // Deterministic: the same vector always yields the same cursor text.
    expect(quantizeVector(vector)).toBe(encoded);
  });
});
