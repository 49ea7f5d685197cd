import { describe, expect, it } from 'vitest';
import { fuseRelated, relatedEvidence, strongHits } from '../../src/query/related-evidence.ts';

const hit = (id: string, score: number, topics: string[] = [], tier = 0, niches: string[] = []) => ({
  id,
  score,
  tier,
  topics,
  niches,
});

describe('posts related to the strong word matches of a query the model cannot read', () => {
  it('takes as strong the hits at least halfway from the lexical floor to the best, as BM25 ranks them', () => {
    // Floor 4: the best is 20, half-way is 12.
    const hits = [hit('a', 20), hit('b', 12), hit('c', 11.9), hit('d', 5)];
    expect([...strongHits(hits, 4)]).toEqual(['a', 'b']);
    // A hit on an exact entity is strong whatever its text score.
    expect(strongHits([hit('a', 20), hit('e', 1, [], 1)], 0).has('e')).toBe(true);
  });

  it("shares the evidence among the strong hits' topics by how far each stands above the floor", () => {
    const evidence = relatedEvidence(
      [hit('a', 20, ['night']), hit('b', 12, ['night', 'acne']), hit('c', 5, ['running'])],
      4,
    );
    // a weighs 16, b 8: night carries both (1), acne b's third; the weak hit's topic none.
    expect(evidence?.sources).toEqual(['a', 'b']);
    expect(evidence?.topics.get('night')).toBeCloseTo(1, 12);
    expect(evidence?.topics.get('acne')).toBeCloseTo(1 / 3, 12);
    expect(evidence?.topics.has('running')).toBe(false);
    // Strong hits without topics (enrichment pending) are still evidence, by their vectors and
    // their authors' niches; the weak hit's topic and niche are not.
    const pending = relatedEvidence([hit('a', 20, [], 0, ['food']), hit('b', 3, ['x'], 0, ['tech'])], 0);
    expect(pending?.sources).toEqual(['a']);
    expect(pending?.topics.size).toBe(0);
    expect([...(pending?.niches ?? [])]).toEqual(['food']);
    expect(relatedEvidence([], 0)).toBeNull();
  });

  it('ranks the strong hits, then the related posts in their order, then the weak hits; a related weak hit with the related', () => {
    const lexical = [hit('a', 20), hit('b', 15), hit('w1', 6), hit('w2', 5)];
    const fused = fuseRelated(
      lexical,
      [
        { id: 'r1', score: 3 },
        { id: 'w2', score: 2 },
        { id: 'r2', score: 2 },
      ],
      0,
    );
    expect(fused.map((f) => f.id)).toEqual(['a', 'b', 'r1', 'w2', 'r2', 'w1']);
    // Without related posts, BM25's order.
    expect(fuseRelated(lexical, [], 0).map((f) => f.id)).toEqual(['a', 'b', 'w1', 'w2']);
  });
});
