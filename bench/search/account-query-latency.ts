/**
 * What word-by-word account scoring costs the engine (bench/relevance.md, "Account search by
 * words"): the service's account query (`cross_fields` on two sides) against the field-by-field
 * shape it replaced (`best_fields`, tie-breaker 0.3, the words as typed), on one accounts index,
 * the 90 topics of the generator's catalog as queries, interleaved (the order alternating by
 * round), first pages of 20, no request cache; the first round warms up and is left out. Wall time
 * at the client, engine only.
 *
 *   npx tsx bench/search/account-query-latency.ts --index <prefix>-accounts [--rounds 6]
 */
import { Client } from '@elastic/elasticsearch';
import type { estypes } from '@elastic/elasticsearch';
import { accountSearchQuery } from '../../src/engine/elasticsearch/queries/account-query.ts';
import { and } from '../../src/query/ast.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    index: { type: 'string', default: 'social-accounts' },
    rounds: { type: 'int', default: 6, min: 2 },
  },
});
const es = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' });
const FIELD_BY_FIELD = ['handle.text^3', 'display_name^3', 'category_label^1.5', 'biography', 'publishing_summary'];
const queries = NICHES.flatMap((n) => n.topics.map((t) => t[1]));
const service = (query: string) => accountSearchQuery({ query, filter: and([]), posts: null, sort: null });

/** The service's query with its text match as before 2026-12-03. */
function fieldByField(query: string): estypes.QueryDslQueryContainer {
  const now = service(query) as { bool: estypes.QueryDslBoolQuery & { should: estypes.QueryDslQueryContainer[] } };
  const should = [...now.bool.should];
  should[1] = { multi_match: { query, type: 'best_fields', tie_breaker: 0.3, fields: FIELD_BY_FIELD } };
  return { bool: { ...now.bool, should } };
}

const shapes = { word_by_word: service, field_by_field: fieldByField } as const;
const times: Record<keyof typeof shapes, number[]> = { word_by_word: [], field_by_field: [] };
const sort: estypes.SortCombinations[] = [{ _score: { order: 'desc' } }, { id: 'asc' }];
for (let round = 0; round < args.rounds; round++) {
  const names = Object.keys(shapes) as Array<keyof typeof shapes>;
  const order = round % 2 ? names.reverse() : names;
  for (const query of queries) {
    for (const name of order) {
      const started = performance.now();
      await es.search({
        index: args.index,
        size: 20,
        query: shapes[name](query),
        sort,
        _source: false,
        track_total_hits: false,
        request_cache: false,
      });
      if (round > 0) times[name].push(performance.now() - started);
    }
  }
}
const at = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const { count } = await es.count({ index: args.index });
console.table(
  Object.fromEntries(
    Object.entries(times).map(([name, xs]) => [
      name,
      {
        accounts: count,
        p50_ms: at(xs, 0.5).toFixed(2),
        p90_ms: at(xs, 0.9).toFixed(2),
        p99_ms: at(xs, 0.99).toFixed(2),
        n: xs.length,
      },
    ]),
  ),
);
