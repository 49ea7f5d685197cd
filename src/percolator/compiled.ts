import type { estypes } from '@elastic/elasticsearch';
import { InternalError } from '../internal/errors.ts';
import type { FieldKind, FieldTable, MemoryDoc } from './document.ts';
import type { Trigger } from './triggers.ts';

/** An Elasticsearch query, as the service's query builders produce them. */
export type Query = estypes.QueryDslQueryContainer;

/** A compiled query: whether a document matches it, and what a matching document must carry. */
export interface MemoryQuery {
  matches(doc: MemoryDoc): boolean;
  triggers: Trigger;
  /** What `matches` reads of a document's text. */
  text: TextReads;
}

/** Compiles one query (compile.ts); passed to the compound kinds, which compile their children with it. */
export type Compile = (query: Query, fields: FieldTable) => MemoryQuery;

/**
 * The text fields a query reads and every token it looks up in their token sets: a document built
 * with a union of these `words` answers the query as one built without (only the fields' token
 * lists, which phrases read, are whole either way).
 */
export interface TextReads {
  paths: ReadonlySet<string>;
  words: ReadonlySet<string>;
}

export const NO_TEXT: TextReads = { paths: new Set(), words: new Set() };

/** The union of what `queries` read, added to `out`. */
export function textReads(
  queries: Iterable<MemoryQuery>,
  out = { paths: new Set<string>(), words: new Set<string>() },
): { paths: Set<string>; words: Set<string> } {
  for (const { text } of queries) {
    for (const path of text.paths) out.paths.add(path);
    for (const word of text.words) out.words.add(word);
  }
  return out;
}

/** Refuses what the percolator does not reproduce: an error, never a different answer. */
export function unsupported(what: string): never {
  throw new InternalError(`In-memory matching does not know ${what}`);
}

/** How `path` is mapped; refused when the table does not know it. */
export function fieldOf(fields: FieldTable, path: string): FieldKind {
  const field = fields.get(path);
  if (!field) unsupported(`the field ${path}`);
  return field;
}

/** The single `field: value` (or `field: {value}`) pair of a term-level query body. */
export function single(body: Record<string, unknown>, kind: string): [string, unknown] {
  const pairs = Object.entries(body).filter(([k]) => k !== 'boost' && k !== '_name');
  if (pairs.length !== 1) unsupported(`a ${kind} query over ${pairs.length} fields`);
  return pairs[0]!;
}

export const NEVER: MemoryQuery = { matches: () => false, triggers: { keys: [] }, text: NO_TEXT };
export const ALWAYS: MemoryQuery = { matches: () => true, triggers: null, text: NO_TEXT };

/** Any of `children` (none: nothing matches). */
export function anyOf(children: MemoryQuery[]): MemoryQuery {
  if (children.length === 0) return NEVER;
  if (children.length === 1) return children[0]!;
  return {
    matches: (doc) => children.some((c) => c.matches(doc)),
    triggers: children.some((c) => c.triggers === null) ? null : { any: children.map((c) => c.triggers) },
    text: textReads(children),
  };
}
