import type { estypes } from '@elastic/elasticsearch';
import type { Compile, MemoryQuery } from '../compiled.ts';
import type { FieldTable } from '../document.ts';

/** `constant_score`: its filter (a score is never asked for). */
export function compileConstantScore(
  body: estypes.QueryDslConstantScoreQuery,
  fields: FieldTable,
  compile: Compile,
): MemoryQuery {
  return compile(body.filter, fields);
}
