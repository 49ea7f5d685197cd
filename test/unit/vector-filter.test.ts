import { describe, expect, it } from 'vitest';
import { coarse, wide } from '../../src/domain/volatile-facts.ts';
import type { FilterNode, RangeNode } from '../../src/query/ast.ts';
import { vectorFilter } from '../../src/engine/elasticsearch/queries/vector-filter.ts';

// A post's vector document keeps its likes coarse, its author's followers wider still (posts keep
// them coarse, and author ranges reach it resolved: bounds on the coarse value) and has no
// observed_at (vector-projection.ts).
// What a kNN finds under the relaxed filter must include every post the filter admits (else a
// result is lost before the check can see it), and equal them when no check follows.

interface Post {
  likes: number;
  followers: number;
  observedAt: number;
}

function holds(node: FilterNode, values: Record<string, number | undefined>): boolean {
  switch (node.kind) {
    case 'and':
      return node.children.every((c) => holds(c, values));
    case 'or':
      return node.children.some((c) => holds(c, values));
    case 'not':
      return !holds(node.child, values);
    case 'range': {
      const x = values[node.field];
      if (x === undefined) return true;
      const n = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : (v as number | undefined));
      const [gt, gte, lt, lte] = [n(node.gt), n(node.gte), n(node.lt), n(node.lte)];
      return (
        (gt === undefined || x > gt) &&
        (gte === undefined || x >= gte) &&
        (lt === undefined || x < lt) &&
        (lte === undefined || x <= lte)
      );
    }
    default:
      throw new Error(`no ${node.kind} leaves here`);
  }
}

const onPost = (node: FilterNode, post: Post) =>
  holds(node, {
    'post.likes': post.likes,
    'author.followers_count': coarse(post.followers),
    'post.observed_at': post.observedAt,
  });
// The vector document: likes coarse, followers wide, observed_at absent (a relaxed filter never reads it).
const onVectors = (node: FilterNode, post: Post) =>
  holds(node, { 'post.likes': coarse(post.likes), 'author.followers_count': wide(post.followers) });
// A vector document written before the wide grid: its author counters as the posts keep them.
const onOlderVectors = (node: FilterNode, post: Post) =>
  holds(node, { 'post.likes': coarse(post.likes), 'author.followers_count': coarse(post.followers) });

/** A deterministic pseudo-random source (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function counterRange(next: () => number, field: 'post.likes' | 'author.followers_count'): RangeNode {
  // Bounds on 1-2-5 edges, on the posts' other edges (1.2, 1.5, …) and off both, both
  // directions, inclusive and exclusive.
  const r = next();
  const bound = () =>
    r < 0.3
      ? [10, 50, 100, 1000, 5000][Math.floor(next() * 5)]!
      : r < 0.55
        ? coarse(Math.floor(10 ** (next() * 4)))
        : Math.floor(10 ** (next() * 4));
  const node: RangeNode = { kind: 'range', field };
  if (next() < 0.7) node[next() < 0.5 ? 'gte' : 'gt'] = bound();
  if (next() < 0.5 || node.gte === undefined) node[next() < 0.5 ? 'lte' : 'lt'] = bound();
  return node;
}

function tree(next: () => number, depth: number): FilterNode {
  const r = next();
  if (depth === 0 || r < 0.35) return counterRange(next, next() < 0.5 ? 'post.likes' : 'author.followers_count');
  if (r < 0.45)
    return { kind: 'range', field: 'post.observed_at', gte: new Date(1_700_000_000_000 + next() * 1e9).toISOString() };
  if (r < 0.65) return { kind: 'not', child: tree(next, depth - 1) };
  return { kind: r < 0.85 ? 'and' : 'or', children: [tree(next, depth - 1), tree(next, depth - 1)] };
}

describe('a post filter as the vector documents answer it', () => {
  it('admits every post the filter admits, and exactly those when no check follows, on vector documents of either grid', () => {
    const next = random(56);
    let checkedTrees = 0;
    for (let t = 0; t < 400; t++) {
      const filter = tree(next, 3);
      const { node, checked } = vectorFilter(filter);
      if (checked) checkedTrees++;
      for (let p = 0; p < 200; p++) {
        const post = {
          likes: Math.floor(10 ** (next() * 4.5)),
          followers: Math.floor(10 ** (next() * 4.5)),
          observedAt: 1_700_000_000_000 + next() * 1e9,
        };
        const exact = onPost(filter, post);
        const relaxed = onVectors(node, post);
        const older = onOlderVectors(node, post);
        if (exact) expect(relaxed, JSON.stringify({ filter, node, post })).toBe(true);
        if (exact) expect(older, JSON.stringify({ filter, node, post, older: true })).toBe(true);
        if (!checked) expect(relaxed, JSON.stringify({ filter, node, post })).toBe(exact);
        if (!checked) expect(older, JSON.stringify({ filter, node, post, older: true })).toBe(exact);
      }
    }
    // Both kinds were drawn.
    expect(checkedTrees).toBeGreaterThan(50);
    expect(checkedTrees).toBeLessThan(400);
  });

  it('needs no check for bounds on bucket edges, and one for a bound inside a bucket', () => {
    const edge: FilterNode = { kind: 'range', field: 'post.likes', gte: 50_000 };
    expect(vectorFilter(edge)).toEqual({ node: edge, checked: false });
    expect(vectorFilter({ kind: 'not', child: { kind: 'range', field: 'post.likes', lt: 1000 } }).checked).toBe(false);
    const inside = vectorFilter({ kind: 'range', field: 'post.likes', gte: 57 });
    expect(inside).toEqual({ node: { kind: 'range', field: 'post.likes', gte: 50 }, checked: true });
    expect(vectorFilter({ kind: 'range', field: 'post.observed_at', gte: '2026-01-01T00:00:00.000Z' })).toEqual({
      node: { kind: 'and', children: [] },
      checked: true,
    });
    // An author's counter: exact on the 1-2-5 edges, widened (or, negated, narrowed) between them.
    const followers = (bounds: Record<string, number>): FilterNode => ({
      kind: 'range',
      field: 'author.followers_count',
      ...bounds,
    });
    expect(vectorFilter(followers({ gte: 50_000, lt: 100_000 }))).toEqual({
      node: followers({ gte: 50_000, lt: 100_000 }),
      checked: false,
    });
    expect(vectorFilter(followers({ gte: 12_000 }))).toEqual({ node: followers({ gte: 10_000 }), checked: true });
    expect(vectorFilter({ kind: 'not', child: followers({ gte: 12_000 }) })).toEqual({
      node: { kind: 'not', child: followers({ gte: 20_000 }) },
      checked: true,
    });
    // Facts the vector documents hold as they are pass unchanged.
    const topics: FilterNode = { kind: 'contains', field: 'post.topics', mode: 'any', values: ['t1'] };
    expect(vectorFilter(topics)).toEqual({ node: topics, checked: false });
  });
});
