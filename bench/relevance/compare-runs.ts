/**
 * Paired comparison of two runs of the same relevance bench on the same index: the JSON files
 * bench/relevance/social.ts or bench/relevance/harness.ts wrote (copy the first aside before the
 * second run overwrites it). Per set: the mean nDCG@10 of each run, the difference and the two-sided
 * paired sign-flip randomization p (stats.ts); for the social set's questions and noun phrases also
 * the off-niche results per query (of its top 10) and their p.
 *
 *   npx tsx bench/relevance/compare-runs.ts <before.json> <after.json> [--mode hybrid]
 */
import { readFileSync } from 'node:fs';
import { cli } from '../lib/args.ts';
import { pairedRandomizationP } from './stats.ts';

const args = cli({
  positionals: [
    { name: 'before', type: 'string' },
    { name: 'after', type: 'string' },
  ],
  options: { mode: { type: 'string', default: 'hybrid' } },
});

type Scores = Record<string, number>;
/** Per-query nDCG@10 (and off-niche counts, social only) of one mode of a run. */
function perQuery(file: string): { ndcg: Scores; offNiche: Scores | null } {
  const report = JSON.parse(readFileSync(file, 'utf8')) as {
    per_query_ndcg_at_10?: Record<string, Scores>;
    results: Array<{ mode: string; per_query_ndcg_at_10?: Scores; per_query_off_niche?: Scores }>;
  };
  // The SciFact harness keeps them per mode beside the results; the social bench inside each result.
  if (report.per_query_ndcg_at_10) return { ndcg: report.per_query_ndcg_at_10[args.mode]!, offNiche: null };
  const result = report.results.find((r) => r.mode === args.mode);
  if (!result?.per_query_ndcg_at_10) throw new Error(`${file}: no per-query figures for mode ${args.mode}`);
  return { ndcg: result.per_query_ndcg_at_10, offNiche: result.per_query_off_niche ?? null };
}

const before = perQuery(args.before!);
const after = perQuery(args.after!);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The social bench's query ids start with their kind (`question:…`, `lang:es:…`); SciFact's are numbers. */
const SETS: Array<[string, (id: string) => boolean]> = before.offNiche
  ? [
      ['social (hashtag, handle, intent, language)', (id) => /^(tag|#tag|@|intent|lang):/.test(id)],
      ['intent', (id) => id.startsWith('intent:')],
      ['language', (id) => id.startsWith('lang:')],
      ['question (English)', (id) => id.startsWith('question:')],
      ['topic as noun phrase', (id) => id.startsWith('topic:')],
      ['question (other languages)', (id) => id.startsWith('lang-question:')],
      ['held-out question (paraphrase-set.ts)', (id) => id.startsWith('paraphrase:')],
      ['held-out noun phrase', (id) => id.startsWith('paraphrase-topic:')],
      ['dev question (dev-question-set.ts)', (id) => id.startsWith('dev:')],
    ]
  : [['all', () => true]];

const rows: Array<Record<string, string | number>> = [];
for (const [name, member] of SETS) {
  const ids = Object.keys(before.ndcg).filter(member);
  const a = new Map(ids.map((id) => [id, after.ndcg[id] ?? 0]));
  const b = new Map(ids.map((id) => [id, before.ndcg[id] ?? 0]));
  const row: Record<string, string | number> = {
    set: name,
    queries: ids.length,
    before: +mean([...b.values()]).toFixed(4),
    after: +mean([...a.values()]).toFixed(4),
    p: +pairedRandomizationP(a, b).toFixed(4),
  };
  const offBefore = before.offNiche;
  const offAfter = after.offNiche;
  if (offBefore && offAfter && ids.every((id) => id in offBefore)) {
    // Off-niche results per query (of its top 10); the bench's own share divides by the results shown.
    row['off-niche before'] = +mean(ids.map((id) => offBefore[id]!)).toFixed(3);
    row['off-niche after'] = +mean(ids.map((id) => offAfter[id] ?? 0)).toFixed(3);
    row['off-niche p'] = +pairedRandomizationP(
      new Map(ids.map((id) => [id, offAfter[id] ?? 0])),
      new Map(ids.map((id) => [id, offBefore[id]!])),
    ).toFixed(4);
  }
  rows.push(row);
}
console.table(rows);
