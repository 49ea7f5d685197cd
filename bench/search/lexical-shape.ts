/**
 * Which shape of the post text query keeps Lucene's top-k pruning (block-max WAND) working at 1M
 * posts: the same natural-language queries as hybrid-latency.ts, Elasticsearch directly, one
 * variant of the query tree each, interleaved per query.
 *
 *   INDEX_PREFIX=bench npx tsx bench/search/lexical-shape.ts [N]
 *
 * Prints `took` p50/p90 per variant; writes bench/results/lexical-shape.json. Relevance of the
 * adopted shape is measured separately through the API (bench/relevance/harness.ts).
 */
import type { estypes } from '@elastic/elasticsearch';
import { POST_TEXT_FIELDS, postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { and } from '../../src/query/ast.ts';
import { stemmedText, withoutStopWords } from '../../src/text/analysis.ts';
import { cli } from '../lib/args.ts';
import { quantile, writeResult } from '../lib/measure.ts';
import { rawEngine } from '../lib/sides.ts';
import { distinctQueryText as queryText } from '../lib/query-texts.ts';

const { queries: N } = cli({ positionals: [{ name: 'queries', type: 'int', default: 60, min: 1 }] });
const { es, posts: index } = rawEngine();

type Q = estypes.QueryDslQueryContainer;
const stemmedFields = POST_TEXT_FIELDS.map((f) => f.replace(/^([^^]+)/, '$1_stemmed'));
const side = (query: string, fields: string[], tie?: number): Q => ({
  multi_match: { query, type: 'best_fields', fields, ...(tie === undefined ? {} : { tie_breaker: tie }) },
});
const wrap = (match: Q): Q => ({ bool: { filter: [{ term: { servable: true } }], must: [match] } });
const sum = (a: Q, b: Q): Q => ({ bool: { should: [a, b] } });

const variants: Record<string, (text: string) => Q> = {
  // The shape before 841cbfd: both sides summed, tie-breaker 0.3, stop words kept on the unstemmed side.
  'sum, tie 0.3, stop words kept (before)': (t) =>
    wrap(sum(side(t, POST_TEXT_FIELDS, 0.3), side(stemmedText(t), stemmedFields, 0.3))),
  'sum, tie 0.3, stop words dropped': (t) =>
    wrap(sum(side(withoutStopWords(t), POST_TEXT_FIELDS, 0.3), side(stemmedText(t), stemmedFields, 0.3))),
  'sum, tie 0, stop words dropped': (t) =>
    wrap(sum(side(withoutStopWords(t), POST_TEXT_FIELDS, 0), side(stemmedText(t), stemmedFields, 0))),
  'dis_max tie 0.3 of sides with tie 0.3': (t) =>
    wrap({
      dis_max: {
        tie_breaker: 0.3,
        queries: [side(withoutStopWords(t), POST_TEXT_FIELDS, 0.3), side(stemmedText(t), stemmedFields, 0.3)],
      },
    }),
  'dis_max, no tie-breakers (adopted)': (t) => postSearchQuery({ query: t, filter: and([]), sort: null }),
  'stemmed side alone, tie 0.3': (t) => wrap(side(stemmedText(t), stemmedFields, 0.3)),
  'stemmed side alone, no tie-breaker': (t) => wrap(side(stemmedText(t), stemmedFields)),
};

const took: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((n) => [n, []]));
const WARMUP = 5;
for (let i = 0; i < N + WARMUP; i++) {
  const names = Object.keys(variants);
  if (i % 2) names.reverse();
  for (const name of names) {
    const response = await es.search({
      index,
      query: variants[name]!(queryText(i)),
      size: 21,
      _source: false,
      track_total_hits: false,
      sort: [{ _score: { order: 'desc' } }, { id: { order: 'asc' } }],
    });
    if (i >= WARMUP) took[name]!.push(response.took);
  }
}
const rows = Object.entries(took).map(([variant, xs]) => ({
  variant,
  took_p50_ms: quantile(xs, 0.5),
  took_p90_ms: quantile(xs, 0.9),
}));
console.table(rows);
const posts = (await es.count({ index })).count;
writeResult('lexical-shape.json', { date: new Date().toISOString(), posts, queries: N, rows });
await es.close();
