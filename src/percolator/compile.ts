import { fieldOf } from '../internal/typed-objects.ts';
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
  // The client's type (exactly one of its kinds) admits `undefined`: no kind at all.
  if (query === undefined) return unsupported('a query with 0 kinds');
  const kinds = Object.keys(query).filter((kind) => fieldOf(query, kind) !== undefined);
  if (kinds.length !== 1) unsupported(`a query with ${kinds.length} kinds`);
  if (query.bool !== undefined) return compileBool(query.bool, fields, compileQuery);
  if (query.dis_max !== undefined) return compileDisMax(query.dis_max, fields, compileQuery);
  if (query.constant_score !== undefined) return compileConstantScore(query.constant_score, fields, compileQuery);
  if (query.match_all !== undefined) return compileMatchAll();
  if (query.match_none !== undefined) return compileMatchNone();
  if (query.term !== undefined) return compileTerm(query.term, fields);
  if (query.terms !== undefined) return compileTerms(query.terms, fields);
  if (query.range !== undefined) return compileRange(query.range, fields);
  if (query.exists !== undefined) return compileExists(query.exists, fields);
  if (query.multi_match !== undefined) return compileMultiMatch(query.multi_match, fields);
  return unsupported(`the query kind ${kinds[0]}`);
}
