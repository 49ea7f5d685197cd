import { describe, expect, it } from 'vitest';
import { usesVectorFeedback } from '../../src/engine/elasticsearch/vector-feedback.ts';
import { FEEDBACK_WEIGHT, feedbackVector } from '../../src/query/relevance-feedback.ts';

const cosine = (a: readonly number[], b: readonly number[]) =>
  a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));

describe('Rocchio feedback on the query vector', () => {
  it('moves the query toward the mean of its feedback documents, by β = 0.75, at unit length', () => {
    const moved = feedbackVector(
      [1, 0, 0],
      [
        [0, 1, 0],
        [0, 0, 1],
      ],
    );
    // q + 0.75 · mean = [1, 0.375, 0.375], normalized.
    const norm = Math.hypot(1, 0.375, 0.375);
    expect(moved.map((x) => +x.toFixed(6))).toEqual([1 / norm, 0.375 / norm, 0.375 / norm].map((x) => +x.toFixed(6)));
    expect(Math.hypot(...moved)).toBeCloseTo(1, 12);
    expect(FEEDBACK_WEIGHT).toBe(0.75);
  });

  it('stays closer to the query than to the documents: feedback corrects the query, never replaces it', () => {
    const query = [1, 0];
    const doc = [0, 1];
    const moved = feedbackVector(query, [doc]);
    expect(cosine(moved, query)).toBeGreaterThan(cosine(moved, doc));
    expect(cosine(moved, doc)).toBeGreaterThan(0);
  });

  it('leaves out documents without a vector (or of another length), and returns the query when none is left', () => {
    expect(feedbackVector([0.6, 0.8], [[], [1, 2, 3]])).toEqual([0.6, 0.8]);
    expect(feedbackVector([1, 0], [[], [0, 1]])).toEqual(feedbackVector([1, 0], [[0, 1]]));
    expect(feedbackVector([], [[1]])).toEqual([]);
  });
});

describe('which searches use vector feedback', () => {
  it('hybrid searches of text the model reads', () => {
    expect(usesVectorFeedback('any cheap tips for capsule wardrobe?', 'hybrid', true)).toBe(true);
    expect(usesVectorFeedback('night-time skincare routine', 'hybrid', true)).toBe(true);
  });

  it('never entity queries, queries the model cannot read, or the semantic-only mode: they rank as before', () => {
    for (const query of ['#skincare', '@glow.maya', '"capsule wardrobe"', 'skincare', 'tips for #skincare'])
      expect(usesVectorFeedback(query, 'hybrid', true), query).toBe(false);
    expect(usesVectorFeedback('¿cómo empiezo con cuidado de la piel?', 'hybrid', false)).toBe(false);
    expect(usesVectorFeedback('night-time skincare routine', 'semantic', true)).toBe(false);
  });
});
