/**
 * How the benches measure: nearest-rank quantiles, sides timed request by request in a rotating
 * order (so machine noise and warm caches hit every side alike), and results written as JSON under
 * bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/**
 * The nearest-rank quantile `q` (0..1) of `values` (sorted here, on a copy): the value at
 * `floor(q × n)`, the last one for q = 1; `empty` when there is none.
 */
export function quantile<E = number>(values: readonly number[], q: number, empty?: E): number | E {
  if (values.length === 0) return empty ?? Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** `x` rounded to `digits` decimals, as a number (what the results files hold). */
export const round = (x: number, digits = 2): number => +x.toFixed(digits);

/** One side of a comparison: a name and the call it times for a request. */
export type Side<S extends string, R> = readonly [name: S, call: (request: R, i: number) => Promise<unknown>];

/**
 * Times every side on `warmup + n` requests, one request at a time: request i goes to the sides
 * in turn, starting at side `i mod sides` (with two sides: alternating which goes first). The
 * request is built before the clock starts; the first `warmup` rounds are not kept. `answer` sees
 * each answer after the clock stops (to check it, or record how many matched in a kept round).
 */
export async function interleave<S extends string, R>(options: {
  n: number;
  warmup: number;
  request: (i: number) => R;
  sides: ReadonlyArray<Side<S, R>>;
  answer?: (side: S, answer: unknown, request: R, kept: boolean) => void;
}): Promise<Record<S, number[]>> {
  const { n, warmup, request, sides } = options;
  const times = Object.fromEntries(sides.map(([name]) => [name, [] as number[]])) as Record<S, number[]>;
  for (let i = 0; i < n + warmup; i++) {
    const body = request(i);
    const k = i % sides.length;
    for (const [name, call] of [...sides.slice(k), ...sides.slice(0, k)]) {
      const started = performance.now();
      const answer = await call(body, i);
      const elapsed = performance.now() - started;
      if (i >= warmup) times[name].push(elapsed);
      options.answer?.(name, answer, body, i >= warmup);
    }
  }
  return times;
}

/** Writes `data` as indented JSON to bench/results/`file` (the folder made if needed); returns the path. */
export function writeResult(file: string, data: unknown): string {
  const target = path.join(REPO_ROOT, 'bench/results', file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(data, null, 2)}\n`);
  return target;
}
