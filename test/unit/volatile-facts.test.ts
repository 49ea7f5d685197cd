import { describe, expect, it } from 'vitest';
import {
  bucketEnd,
  coarse,
  inBounds,
  isEdge,
  rangeBuckets,
  type NumericBounds,
} from '../../src/domain/volatile-facts.ts';
import { replacesSnapshot } from '../../src/domain/merge.ts';
import { rewriteVolatile, volatileLeaves } from '../../src/engine/elasticsearch/queries/volatile-bounds.ts';
import type { FilterNode, RangeNode } from '../../src/query/ast.ts';
import type { AccountSnapshot } from '../../src/domain/records.ts';

/** A deterministic stream of values around the edges people type and in between (counts, rates, growth). */
function values(): number[] {
  const out: number[] = [0, 1, -1, 10_000, 9_999, 10_001, 12_000, 11_999.5, 0.05, 0.0499, -0.012, 1e15, 3e15, -5e-7];
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 400; i++) {
    const magnitude = 10 ** (next() * 16 - 6);
    out.push((next() < 0.2 ? -1 : 1) * (next() < 0.5 ? Math.round(magnitude) : magnitude));
  }
  return out;
}

describe('coarse copies of volatile author facts', () => {
  it('are the lower edge of a bucket: monotone, at most the value, and the value itself on an edge', () => {
    const xs = values().sort((a, b) => a - b);
    for (const [i, x] of xs.entries()) {
      const c = coarse(x);
      if (x >= -1e16) expect(c).toBeLessThanOrEqual(x);
      expect(x).toBeLessThan(bucketEnd(c));
      expect(coarse(c)).toBe(c);
      if (i > 0) expect(c).toBeGreaterThanOrEqual(coarse(xs[i - 1]!));
    }
    for (const round of [1_000, 5_000, 10_000, 50_000, 100_000, 1_000_000, 0.01, 0.05])
      expect(isEdge(round)).toBe(true);
  });

  it('a 1 %-a-day grower keeps its bucket most days', () => {
    let followers = 10_000;
    let changes = 0;
    for (let day = 0; day < 90; day++) {
      const next = Math.round(followers * 1.01);
      if (coarse(next) !== coarse(followers)) changes++;
      followers = next;
    }
    // 90 days of 1 % growth cross a factor of 2.45, about four edges (10k, 12k, 15k, 20k, 25k).
    expect(changes).toBeLessThanOrEqual(5);
  });

  it('read any range exactly: interior buckets on the copies, the bounds’ buckets by exact value', () => {
    const xs = values();
    const bounds: NumericBounds[] = [];
    for (const b of [10_000, 10_500, 0.05, 0.051, -0.01, 0, 7]) {
      bounds.push({ gte: b }, { gt: b }, { lt: b }, { lte: b }, { gte: b, lt: b * 1.1 + 1 }, { gt: -b - 1, lte: b });
    }
    for (const range of bounds) {
      const { interior, boundary } = rangeBuckets(range);
      for (const x of xs) {
        const c = coarse(x);
        const read = inBounds(c, interior) || (boundary.includes(c) && inBounds(x, range));
        expect(read, `${x} in ${JSON.stringify(range)}`).toBe(inBounds(x, range));
      }
    }
  });

  it('a bound on an edge that includes its bucket needs no accounts', () => {
    expect(rangeBuckets({ gte: 10_000 })).toEqual({ interior: { gte: 10_000 }, boundary: [] });
    expect(rangeBuckets({ gte: 10_000, lt: 50_000 })).toEqual({ interior: { gte: 10_000, lt: 50_000 }, boundary: [] });
    expect(rangeBuckets({ gt: 10_000 })).toEqual({ interior: { gt: 10_000 }, boundary: [10_000] });
    expect(rangeBuckets({ gte: 10_500, lte: 11_000 })).toEqual({
      interior: { gt: 10_000, lt: 10_000 },
      boundary: [10_000],
    });
  });
});

describe('the filter rewrite', () => {
  const leaf = (bounds: Omit<RangeNode, 'kind' | 'field'>, field = 'author.followers_count'): RangeNode =>
    ({ kind: 'range', field, ...bounds }) as RangeNode;

  it('replaces volatile author ranges only, keeping every other node as it is', () => {
    const volatile = leaf({ gte: 10_500 });
    const metric = leaf({ gte: 0.05 }, 'author.engagement_rate_90d');
    const filter: FilterNode = {
      kind: 'and',
      children: [
        { kind: 'range', field: 'post.views', gte: 10_500 },
        { kind: 'not', child: volatile },
        metric,
        { kind: 'exists', field: 'author.median_views_90d' },
      ],
    };
    expect(volatileLeaves(filter)).toHaveLength(3);
    const accounts = new Map<FilterNode, string[]>([
      [volatile, ['acc_1', 'acc_2']],
      [metric, ['acc_3']],
    ]);
    expect(rewriteVolatile(filter, accounts)).toEqual({
      kind: 'and',
      children: [
        { kind: 'range', field: 'post.views', gte: 10_500 },
        {
          kind: 'not',
          child: {
            kind: 'or',
            children: [
              { kind: 'range', field: 'author.followers_count', gt: 10_000 },
              { kind: 'terms', field: 'author.id', values: ['acc_1', 'acc_2'] },
            ],
          },
        },
        // Posts do not keep the metrics: the accounts that satisfy them, by ID (none: nothing).
        { kind: 'terms', field: 'author.id', values: ['acc_3'] },
        { kind: 'or', children: [] },
      ],
    });
  });

  it('a bound whose bucket holds no matching account reads the copies alone', () => {
    expect(rewriteVolatile(leaf({ gt: 10_500 }), new Map())).toEqual({
      kind: 'range',
      field: 'author.followers_count',
      gt: 10_000,
    });
  });
});

describe('snapshots in posts', () => {
  const snapshot = (version: string, followers: number): AccountSnapshot => ({
    version,
    status: 'active',
    profile: { followers_count: followers } as AccountSnapshot['profile'],
    niches: null,
    publishing_languages: null,
  });

  it('a later state that reads the same does not replace the held one; one that reads differently does', () => {
    expect(replacesSnapshot(snapshot('2', 10_000), snapshot('1', 10_000))).toBe(false);
    expect(replacesSnapshot(snapshot('2', 12_000), snapshot('1', 10_000))).toBe(true);
    expect(replacesSnapshot(snapshot('1', 12_000), snapshot('2', 10_000))).toBe(false);
  });
});
