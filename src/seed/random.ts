/**
 * Seeded pseudo-random numbers for the demo dataset. The generator must be reproducible byte for
 * byte across machines and Node versions, so nothing here touches `Math.random` and every draw is
 * integer arithmetic on 32-bit words (sfc32, seeded through splitmix32).
 */

const TWO_POW_32 = 4294967296;

/** splitmix32 step: spreads a small or sequential seed over all 32 bits. */
function splitmix32(state: number): number {
  let z = (state + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return (z ^ (z >>> 15)) >>> 0;
}

/**
 * A bijective 32-bit mix (the "lowbias32" finalizer): distinct inputs give distinct outputs, which
 * makes it usable for collision-free identifiers derived from a counter.
 */
export function mix32(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d);
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Combines two 32-bit values into one well-mixed 32-bit hash (not bijective in the pair). */
export function hash2(a: number, b: number): number {
  return mix32((mix32(a >>> 0) ^ Math.imul(b >>> 0, 0x9e3779b1)) >>> 0);
}

/** A small, fast, seeded PRNG (sfc32) with the distributions the seed generator needs. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | null = null;

  /** Seeds from any number; equal seeds yield equal sequences. */
  constructor(seed: number) {
    // Integer part (both words, sign included) and fraction all count: 1.5, 1 and 2^32 + 1
    // are different seeds.
    const whole = Math.floor(seed);
    const hi = Math.floor(whole / TWO_POW_32) >>> 0;
    const frac = Math.floor((seed - whole) * TWO_POW_32) >>> 0;
    this.a = splitmix32(whole >>> 0);
    this.b = splitmix32(this.a ^ hi);
    this.c = splitmix32(this.b ^ frac);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.uint32(); // let the state decorrelate from the seed
  }

  /** A uniform unsigned 32-bit integer. */
  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.uint32() / TWO_POW_32;
  }

  /** A uniform float in [min, max). */
  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** A uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element; the array must not be empty. */
  pick<T>(items: readonly T[]): T {
    return at(items, Math.floor(this.next() * items.length));
  }

  /** An element chosen with probability proportional to its weight. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return at(items, i);
    }
    return at(items, items.length - 1);
  }

  /** Up to `k` distinct elements, in random order. */
  sample<T>(items: readonly T[], k: number): T[] {
    const n = items.length;
    if (k >= n) return this.shuffle(items.slice());
    const out: T[] = [];
    const taken = new Set<number>();
    while (out.length < k) {
      const i = Math.floor(this.next() * n);
      if (!taken.has(i)) {
        taken.add(i);
        out.push(at(items, i));
      }
    }
    return out;
  }

  /** Fisher–Yates in place; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = at(items, i);
      items[i] = at(items, j);
      items[j] = tmp;
    }
    return items;
  }

  /** A standard normal deviate (Box–Muller, caching the second value). */
  normal(): number {
    if (this.spareNormal !== null) {
      const v = this.spareNormal;
      this.spareNormal = null;
      return v;
    }
    const u = 1 - this.next(); // (0, 1], so the logarithm is finite
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** A log-normal deviate given its median and the sigma of its logarithm. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /**
   * A truncated Pareto deviate in [xmin, xmax]. Truncating through the inverse CDF (instead of
   * clamping) avoids an artificial pile-up of values at the upper bound.
   */
  pareto(xmin: number, alpha: number, xmax = Infinity): number {
    const tail = xmax === Infinity ? 0 : Math.pow(xmin / xmax, alpha);
    const u = this.next();
    return xmin * Math.pow(1 - u * (1 - tail), -1 / alpha);
  }

  /** A Poisson-distributed count (Knuth for small means, a rounded normal for large ones). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()));
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }
}

/** Element `i` of `items`, which the caller keeps in range. */
function at<T>(items: readonly T[], i: number): T {
  // In range by the caller's arithmetic, which noUncheckedIndexedAccess cannot follow: an element, not undefined.
  return items[i] as T;
}
