import { describe, expect, it } from 'vitest';
import {
  cosine,
  LOOKALIKE_POSTS,
  LOOKALIKE_TEXT_SHARE,
  LOOKALIKE_TOPIC_SHARE,
  LOOKALIKE_WEIGHTS,
  lookalikeVector,
  topicText,
} from '../../src/domain/lookalike.ts';

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

  it("gives the posts' topics their share: accounts on one subject in two languages come closer", () => {
    // The model reads one language's posts alike whatever their subject (cosine 0.9) and the other
    // language's posts on the same subject as different (0.3); the last two axes are two topics.
    const spanishPosts = [1, 0, 0, 0];
    const spanishOtherSubject = [0.9, Math.sqrt(1 - 0.81), 0, 0];
    const englishPosts = [0.3, -Math.sqrt(1 - 0.09), 0, 0];
    const topic = (i: number) => [0, 0, 0, 0, 0, 0].map((_, k) => (k === i ? 1 : 0));
    const topics = new Map([
      ['acne_treatment', topic(4)],
      ['home_workout', topic(5)],
    ]);
    const account = (vector: number[], topicId: string) =>
      lookalikeVector(
        [{ postedAt: at(0), vector: [...vector, 0, 0], topics: [topicId] }],
        null,
        LOOKALIKE_WEIGHTS,
        topics,
      )!;
    const spanish = account(spanishPosts, 'acne_treatment');
    const english = account(englishPosts, 'acne_treatment');
    const otherSubject = account(spanishOtherSubject, 'home_workout');
    // By the posts alone the other Spanish account is the closer one; with the topics, the English one.
    expect(cosine(spanishPosts, spanishOtherSubject)).toBeGreaterThan(cosine(spanishPosts, englishPosts));
    expect(cosine(spanish, english)).toBeGreaterThan(cosine(spanish, otherSubject));
    // The topic takes its share of the vector, the posts the rest.
    expect(spanish[4]! / spanish[0]!).toBeCloseTo(LOOKALIKE_TOPIC_SHARE / (1 - LOOKALIKE_TOPIC_SHARE), 10);
  });

  it('is as before when no post carries a topic with a vector (pending enrichment, a model change)', () => {
    const posts = [{ postedAt: at(0), vector: axis(0), topics: ['unknown_topic'] }];
    expect(lookalikeVector(posts, axis(1), LOOKALIKE_WEIGHTS, new Map([['other', axis(2)]]))).toEqual(
      lookalikeVector([{ postedAt: at(0), vector: axis(0) }], axis(1)),
    );
  });

  it('reads a topic ID as words', () => {
    expect(topicText('night_skincare_routine')).toBe('night skincare routine');
  });
});
