/**
 * What entity parsing and per-language client-side analysis add to a search (bench/relevance.md,
 * "Query analysis latency": ≤ 1 ms at p50). Times, per query, everything a post search now does to
 * the query text before it reaches the engine — building the lexical query (`postSearchQuery`:
 * entities, language detection, stems of the query's languages, CJK segmentation) plus the
 * fusion's own `analyzeQuery` — against what it did before (Porter2 + stop words), each on text
 * never seen before (stem caches cold for that query), and the raw engine's lexical search of the
 * same queries in the same run for scale.
 *
 *   npx tsx bench/search/query-analysis.ts [--index relevance-social-5-1500-posts]
 */
import { Client } from '@elastic/elasticsearch';
import { postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { and } from '../../src/query/ast.ts';
import { analyze, memo, withoutStopWords } from '../../src/text/analysis.ts';
import { analyzeQuery } from '../../src/text/languages.ts';
import porter2 from 'wink-porter2-stemmer';
import { generateObservations } from '../../src/seed/generator.ts';
import { NONSENSE_QUERIES, socialQuerySet } from '../relevance/social-set.ts';
import { mintId } from '../../src/contract/ids.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: { index: { type: 'string', default: 'relevance-social-5-1500-posts' } },
});
const observations = [...generateObservations({ posts: 1500, accounts: 150, seed: 5 })];
const all = new Set(
  observations.filter((o) => o['kind'] === 'post').map((o) => mintId('post', o['platform_id'] as string)),
);
const texts = [...socialQuerySet(observations, all).map((q) => q.text), ...NONSENSE_QUERIES];
// Variants so every measured query is new text (no stem cache hit from an earlier round).
const queries = Array.from({ length: 20 }, (_, round) => texts.map((t) => `${t} r${round}x`)).flat();

const before = memo(porter2);
const oldAnalysis = (q: string) => [withoutStopWords(q), analyze(q, before, true)];
const search = (q: string) => ({ query: q, filter: and([]), sort: null });
const newAnalysis = (q: string) => [postSearchQuery(search(q)), analyzeQuery(q)];

function timings(fn: (q: string) => unknown): number[] {
  for (const q of texts) fn(q); // warm the code paths (JIT), not the per-query caches
  return queries.map((q) => {
    const started = performance.now();
    fn(q);
    return performance.now() - started;
  });
}
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;

const oldMs = timings(oldAnalysis);
const newMs = timings(newAnalysis);

const es = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' });
const engineMs: number[] = [];
for (const q of texts) {
  const started = performance.now();
  await es.search({
    index: args.index,
    query: postSearchQuery(search(q)),
    size: 51,
    _source: false,
    track_total_hits: false,
  });
  engineMs.push(performance.now() - started);
}
await es.close();

const row = (name: string, xs: number[]) => ({ name, p50_ms: +p(xs, 0.5).toFixed(3), p99_ms: +p(xs, 0.99).toFixed(3) });
console.table([
  row('query text analysis before (Porter2 + stop words)', oldMs),
  row('entities + languages + CJK + lexical query (now)', newMs),
  row(`raw engine: the lexical search itself (${args.index})`, engineMs),
]);
const added = p(newMs, 0.5) - p(oldMs, 0.5);
console.log(
  `added at p50: ${added.toFixed(3)} ms (${((100 * added) / p(engineMs, 0.5)).toFixed(1)}% of the engine's lexical search p50); ${queries.length} queries`,
);
