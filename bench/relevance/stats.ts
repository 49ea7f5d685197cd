/** Small statistics helpers for the relevance benches. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Two-sided paired sign-flip randomization test on per-query score differences (system a vs b over
 * the queries of a). Seeded (mulberry32), so a rerun gives the same p. Returns (extreme + 1) / (n + 1).
 */
export function pairedRandomizationP(
  a: ReadonlyMap<string, number>,
  b: ReadonlyMap<string, number>,
  iterations = 10_000,
): number {
  const diffs = [...a.keys()].map((id) => (a.get(id) ?? 0) - (b.get(id) ?? 0));
  const observed = Math.abs(diffs.reduce((s, d) => s + d, 0));
  if (observed === 0) return 1;
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let extreme = 0;
  for (let i = 0; i < iterations; i++) {
    let sum = 0;
    for (const d of diffs) sum += random() < 0.5 ? -d : d;
    if (Math.abs(sum) >= observed - 1e-12) extreme++;
  }
  return (extreme + 1) / (iterations + 1);
}
