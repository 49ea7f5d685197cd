import type { estypes } from '@elastic/elasticsearch';
import { anyOf, type Compile, type MemoryQuery } from '../compiled.ts';
import type { FieldTable } from '../document.ts';

/** `dis_max`: any of its queries (the tie breaker weighs scores, never whether a document matches). */
export function compileDisMax(body: estypes.QueryDslDisMaxQuery, fields: FieldTable, compile: Compile): MemoryQuery {
  return anyOf(body.queries.map((q) => compile(q, fields)));
}
