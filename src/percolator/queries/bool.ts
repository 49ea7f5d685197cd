import type { estypes } from '@elastic/elasticsearch';
import { anyOf, textReads, unsupported, type Compile, type MemoryQuery, type Query } from '../compiled.ts';
import type { FieldTable } from '../document.ts';
import type { Trigger } from '../triggers.ts';

function clauses(value: Query | Query[] | undefined, fields: FieldTable, compile: Compile): MemoryQuery[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((q) => compile(q, fields));
}

/**
 * `bool`: every `must` and `filter`, no `must_not`, and `minimum_should_match` of `should`, as the
 * engine reads it: by default 1 when nothing is required, else 0; with nothing required at least
 * one `should` whatever it says (Lucene's rule); a clause-less bool matches everything, and one of
 * `must_not` only ignores it. Only a count is reproduced (a percentage is refused).
 */
export function compileBool(body: estypes.QueryDslBoolQuery, fields: FieldTable, compile: Compile): MemoryQuery {
  const required = [...clauses(body.must, fields, compile), ...clauses(body.filter, fields, compile)];
  const excluded = clauses(body.must_not, fields, compile);
  const should = clauses(body.should, fields, compile);
  const declared = body.minimum_should_match;
  if (declared !== undefined && !/^\d+$/.test(String(declared)))
    unsupported(`minimum_should_match ${String(declared)}`);
  let atLeast = 0;
  if (required.length > 0 || should.length > 0) {
    atLeast = declared !== undefined ? Number(declared) : required.length === 0 ? 1 : 0;
    if (required.length === 0) atLeast = Math.max(1, atLeast);
  }
  // More than there are should clauses: nothing matches.
  atLeast = Math.min(atLeast, should.length + 1);
  const needed: Trigger[] = required.map((c) => c.triggers);
  if (atLeast > 0) needed.push(anyOf(should).triggers);
  return {
    matches(doc) {
      for (const c of required) if (!c.matches(doc)) return false;
      for (const c of excluded) if (c.matches(doc)) return false;
      if (atLeast === 0) return true;
      let count = 0;
      for (const c of should) if (c.matches(doc) && ++count >= atLeast) return true;
      return false;
    },
    triggers: needed.some((t) => t !== null) ? { all: needed } : null,
    text: textReads([...required, ...excluded, ...should]),
  };
}
