import { describe, expect, it } from 'vitest';
import { engagementRateByViews, viewRatiosToBaseline, type BaselineInput } from '../../src/domain/derived.ts';

const DAY = 24 * 60 * 60 * 1000;
const BASE = Date.parse('2026-06-01T12:00:00.000Z');
/** A post `daysBefore` days (may be fractional) before BASE. */
const post = (id: string, daysBefore: number, views: number | null, extraMs = 0): BaselineInput => ({
  id,
  postedAt: new Date(BASE - daysBefore * DAY - extraMs).toISOString(),
  views,
});

/** Ratio of the post `id` when the given posts are its author's. */
const ratioOf = (id: string, posts: BaselineInput[]) => viewRatiosToBaseline(posts).get(id);

describe('engagementRateByViews', () => {
  it('is (likes + comments) / views', () => {
    expect(engagementRateByViews(900, 100, 10_000)).toBe(0.1);
    expect(engagementRateByViews(0, 0, 50)).toBe(0);
    expect(engagementRateByViews(3, 0, 4)).toBe(0.75);
  });

  it('is null when views is null or 0', () => {
    expect(engagementRateByViews(900, 100, null)).toBeNull();
    expect(engagementRateByViews(900, 100, 0)).toBeNull();
  });
});

describe('viewRatiosToBaseline', () => {
  it('divides by the median of the 3 other posts of the previous 90 days (odd count)', () => {
    const posts = [post('target', 0, 600), post('a', 1, 100), post('b', 10, 300), post('c', 80, 200)];
    expect(ratioOf('target', posts)).toBe(3); // 600 / median(100, 200, 300)
  });

  it('takes the mean of the two middle values for an even count', () => {
    const posts = [post('target', 0, 500), post('a', 1, 100), post('b', 2, 200), post('c', 3, 300), post('d', 4, 1000)];
    expect(ratioOf('target', posts)).toBe(2); // 500 / ((200 + 300) / 2)
  });

  it('is null with fewer than 3 qualifying posts', () => {
    expect(ratioOf('target', [post('target', 0, 600), post('a', 1, 100), post('b', 2, 200)])).toBeNull();
    expect(ratioOf('target', [post('target', 0, 600)])).toBeNull();
  });

  it('includes a post exactly 90 days earlier and excludes one 90 days and 1 ms earlier', () => {
    const near = [post('a', 1, 100), post('b', 2, 100)];
    expect(ratioOf('target', [post('target', 0, 300), ...near, post('edge', 90, 100)])).toBe(3);
    expect(ratioOf('target', [post('target', 0, 300), ...near, post('edge', 90, 100, 1)])).toBeNull();
  });

  it('counts only posts strictly before this one: never itself, never later or simultaneous posts', () => {
    const later = [post('l1', -1, 1), post('l2', -2, 1), post('l3', -3, 1)];
    const simultaneous = post('same-time', 0, 1);
    expect(ratioOf('target', [post('target', 0, 500), ...later, simultaneous])).toBeNull();
    // each later post does see the target among its earlier posts
    const posts = [post('target', 0, 500), post('a', 1, 100), post('b', 2, 100), post('after', -1, 1000)];
    expect(ratioOf('after', posts)).toBe(10); // median(500, 100, 100) = 100
  });

  it('ignores posts without views in the window', () => {
    const posts = [
      post('target', 0, 400),
      post('a', 1, 100),
      post('b', 2, 200),
      post('n1', 3, null),
      post('n2', 4, null),
    ];
    expect(ratioOf('target', posts)).toBeNull(); // only 2 posts with views
    expect(ratioOf('target', [...posts, post('c', 5, 300)])).toBe(2); // 400 / median(100, 200, 300)
  });

  it('is null for a post without views and when the median is 0', () => {
    const others = [post('a', 1, 100), post('b', 2, 200), post('c', 3, 300)];
    expect(ratioOf('target', [post('target', 0, null), ...others])).toBeNull();
    const zeros = [post('z1', 1, 0), post('z2', 2, 0), post('z3', 3, 5)];
    expect(ratioOf('target', [post('target', 0, 100), ...zeros])).toBeNull();
  });

  it('returns a value for every post, independent of input order', () => {
    const posts = [post('p0', 0, 800), post('p1', 1, 100), post('p2', 5, 200), post('p3', 9, 400), post('p4', 100, 50)];
    const forward = viewRatiosToBaseline(posts);
    const backward = viewRatiosToBaseline([...posts].reverse());
    expect([...forward.keys()].sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    for (const p of posts) expect(backward.get(p.id)).toBe(forward.get(p.id));
    expect(forward.get('p0')).toBe(4); // 800 / median(100, 200, 400)
    expect(forward.get('p1')).toBeNull(); // only p2, p3 inside its window (p4 is 99 days before it)
  });
});
