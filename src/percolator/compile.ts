import type { estypes } from '@elastic/elasticsearch';
import { unsupported, type MemoryQuery, type Query } from './compiled.ts';
import type { FieldTable } from './document.ts';
import { compileBool } from './queries/bool.ts';
import { compileConstantScore } from './queries/constant-score.ts';
import { compileDisMax } from './queries/dis-max.ts';
import { compileExists } from './queries/exists.ts';
import { compileMatchAll, compileMatchNone } from './queries/match-all.ts';
import { compileMultiMatch } from './queries/multi-match.ts';
import { compileRange } from './queries/range.ts';
import { compileTerm } from './queries/term.ts';
import { compileTerms } from './queries/terms.ts';

/**
 * Compiles an Elasticsearch query against an index's fields (document.ts) for in-memory matching,
 * one file per query kind under queries/, each checked against the engine's own answers
 * (test/integration/percolator/). Only the kinds and field types the service's query builders
 * produce are known; any other is refused here (an error, never a different answer).
 */
export function compileQuery(query: Query, fields: FieldTable): MemoryQuery {
  const entries = Object.entries(query as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length !== 1) unsupported(`a query with ${entries.length} kinds`);
  const [kind, body] = entries[0]!;
  switch (kind) {
    case 'bool':
      return compileBool(body as estypes.QueryDslBoolQuery, fields, compileQuery);
    case 'dis_max':
      return compileDisMax(body as estypes.QueryDslDisMaxQuery, fields, compileQuery);
    case 'constant_score':
      return compileConstantScore(body as estypes.QueryDslConstantScoreQuery, fields, compileQuery);
    case 'match_all':
      return compileMatchAll();
    case 'match_none':
      return compileMatchNone();
    case 'term':
      return compileTerm(body as Record<string, unknown>, fields);
    case 'terms':
      return compileTerms(body as Record<string, unknown>, fields);
    case 'range':
      return compileRange(body as Record<string, estypes.QueryDslRangeQuery>, fields);
    case 'exists':
      return compileExists(body as estypes.QueryDslExistsQuery, fields);
    case 'multi_match':
      return compileMultiMatch(body as estypes.QueryDslMultiMatchQuery, fields);
    default:
      return unsupported(`the query kind ${kind}`);
  }
}
