import { Rng } from '../../src/seed/random.ts';

/**
 * What customers save, for the alerts benches: a third a topic (a word of the captions), a third
 * a hashtag with a `views` floor, a third a topic narrowed by a `views` floor and a `format`. Never
 * "every reel": such a search is an export, not an alert.
 *
 * Topics customers watch are specific: words and hashtags of the captions found in 0.1-2 % of the
 * posts (by document frequency), not "routine" or "#skincare" (a stream of everything).
 */
export function savedSearchShapes(posts: ReadonlyArray<Record<string, unknown>>, seed = 17) {
  const specific = (pattern: RegExp) => {
    const df = new Map<string, number>();
    for (const p of posts)
      for (const t of new Set(String(p['caption']).toLowerCase().match(pattern) ?? [])) df.set(t, (df.get(t) ?? 0) + 1);
    return [...df].filter(([, n]) => n >= posts.length * 0.001 && n <= posts.length * 0.02).map(([t]) => t);
  };
  const hashtags = specific(/(?<=#)\p{L}[\p{L}\p{N}_]*/gu);
  const words = specific(/(?<![#@\p{L}])\p{L}{5,}/gu);
  const rng = new Rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng.next() * xs.length)]!;
  return {
    words,
    hashtags,
    /** The `post` scope of the `i`-th saved search. */
    post(i: number): Record<string, unknown> {
      const query = pick(words);
      const floor = { gte: pick([1000, 10_000, 100_000]) };
      return i % 3 === 0
        ? { query }
        : i % 3 === 1
          ? { filters: { hashtags: { contains_any: [pick(hashtags)] }, views: floor } }
          : { query, filters: { views: floor, format: { in: [pick(['reel', 'image', 'carousel', 'video'])] } } };
    },
  };
}
