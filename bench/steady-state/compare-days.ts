/**
 * Pools the searches of several steady-day runs (day.ts results carrying `search.samples`) by arm:
 * one run's p99 at 30 searches/s is its slowest two or three searches, and swings 2.9–5.2× idle
 * between runs of the same commit here; pooled, an arm's p99 rests on a few hundred samples more.
 *
 *   npx tsx bench/steady-state/compare-days.ts ARM=run1.json,run2.json [ARM=…]
 *
 * Prints per arm: runs, the day's mean service time, and the pooled p50/p99 of the idle searches,
 * of those while the intake indexed and of the whole day, with their ratios to idle. An arm that
 * changes only the intake leaves the idle searches alike, and one run's idle p99 swings 27–114 ms
 * here: `shared_p99_ratio` divides the day's p99 by the idle searches of every arm pooled.
 */
import { readFileSync } from 'node:fs';
import { quantile, round } from '../lib/measure.ts';

interface DayResult {
  day: { service_seconds: number };
  search: { samples?: { idle: number[]; while_sending: number[]; while_indexing: number[] } };
}

const arms = process.argv.slice(2).map((arg) => {
  const [name, files] = arg.split('=') as [string, string | undefined];
  if (!files) throw new Error(`expected ARM=file.json[,file.json…], got ${arg}`);
  return { name, runs: files.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')) as DayResult) };
});

const samples = (name: string, runs: DayResult[], part: 'idle' | 'while_sending' | 'while_indexing') =>
  runs.flatMap((r) => {
    if (!r.search.samples) throw new Error(`${name}: a run without search.samples (day.ts before they were kept)`);
    return r.search.samples[part];
  });
const sharedIdle = arms.flatMap(({ name, runs }) => samples(name, runs, 'idle'));

const rows = arms.map(({ name, runs }) => {
  const pooled = (part: 'idle' | 'while_sending' | 'while_indexing') => samples(name, runs, part);
  const idle = pooled('idle');
  const indexing = pooled('while_indexing');
  const day = [...pooled('while_sending'), ...indexing];
  const q = (xs: number[], at: number) => round(quantile(xs, at));
  return {
    arm: name,
    runs: runs.length,
    day_s: round(runs.reduce((s, r) => s + r.day.service_seconds, 0) / runs.length),
    idle_p50: q(idle, 0.5),
    idle_p99: q(idle, 0.99),
    day_n: day.length,
    day_p50_ratio: round(quantile(day, 0.5) / quantile(idle, 0.5), 2),
    day_p99_ratio: round(quantile(day, 0.99) / quantile(idle, 0.99), 2),
    indexing_p99_ratio: round(quantile(indexing, 0.99) / quantile(idle, 0.99), 2),
    day_p50: q(day, 0.5),
    day_p99: q(day, 0.99),
    shared_p99_ratio: round(quantile(day, 0.99) / quantile(sharedIdle, 0.99), 2),
  };
});
console.table(rows);
