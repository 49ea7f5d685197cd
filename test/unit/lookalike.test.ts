import { describe, expect, it } from 'vitest';
import { cosine, LOOKALIKE_POSTS, LOOKALIKE_TEXT_SHARE, lookalikeVector } from '../../src/domain/lookalike.ts';

const DAY = 86_400_000;
const NEWEST = Date.parse('2026-11-01T00:00:00Z');
const at = (daysBefore: number) => new Date(NEWEST - daysBefore * DAY).toISOString();
/** A unit vector along axis `i` of a 4-dimensional space. */
const axis = (i: number, length = 1) => [0, 1, 2, 3].map((k) => (k === i ? length : 0));
const norm = (v: number[]) => Math.hypot(...v);

describe('lookalikeVector', () => {
  it('is null with neither posts nor a text vector, and the text alone without posts', () => {
    expect(lookalikeVector([], null)).toBeNull();
    expect(lookalikeVector([], [0, 0, 0, 0])).toBeNull();
    expect(lookalikeVector([], axis(2, 3))).toEqual(axis(2));
  });

  it('weighs a recent post over an old one: a post a half-life older counts half', () => {
    const vector = lookalikeVector(
      [
        { postedAt: at(0), vector: axis(0) },
        { postedAt: at(90), vector: axis(1, 5) },
      ],
      null,
    )!;
    expect(norm(vector)).toBeCloseTo(1, 10);
    // Each post's vector counts at unit length, so the ratio is the recency weight alone.
    expect(vector[1]! / vector[0]!).toBeCloseTo(0.5, 10);
  });

  it("gives the account's own text its share when there are posts", () => {
    const vector = lookalikeVector([{ postedAt: at(0), vector: axis(0) }], axis(1))!;
    expect(vector[1]! / vector[0]!).toBeCloseTo(LOOKALIKE_TEXT_SHARE / (1 - LOOKALIKE_TEXT_SHARE), 10);
    expect(cosine(vector, axis(0))).toBeGreaterThan(cosine(vector, axis(1)));
  });

  it('counts only the most recent posts, whatever order they come in', () => {
    const recent = Array.from({ length: LOOKALIKE_POSTS }, (_, i) => ({ postedAt: at(i / 10), vector: axis(0) }));
    const older = Array.from({ length: 10 }, (_, i) => ({ postedAt: at(10 + i), vector: axis(3) }));
    const vector = lookalikeVector([...older, ...recent].reverse(), null)!;
    expect(vector).toEqual(axis(0));
  });

  it('ignores a text vector of another dimension (a model change in flight)', () => {
    expect(lookalikeVector([{ postedAt: at(0), vector: axis(1) }], [1, 0])).toEqual(axis(1));
  });
});
