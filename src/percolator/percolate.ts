import type { MemoryQuery } from './compiled.ts';
import { textReads } from './compiled.ts';
import { MemoryDoc, type FieldTable } from './document.ts';
import { chooseKeys, triggerPaths } from './triggers.ts';
import { yieldAfter } from '../internal/time-slices.ts';

/**
 * A query standing against every document that comes: its lexical side (`matched`), and for a
 * query with a vector its filters alone (`filtered`), which a document also matches when it lies
 * near the vector.
 */
export interface StandingQuery {
  id: string;
  matched: MemoryQuery;
  filtered: MemoryQuery | null;
  vector: ArrayLike<number> | null;
}

/** Standing queries with the keyword fields and words their documents must offer. */
export interface QuerySet {
  queries: readonly StandingQuery[];
  keywordPaths: ReadonlySet<string>;
  text: { paths: ReadonlySet<string>; words: ReadonlySet<string> };
}

/** One document to percolate: its indexed source, and its vectors (a head's, then passages'). */
export interface Candidate {
  id: string;
  source: Readonly<Record<string, unknown>>;
  vectors: ReadonlyArray<ArrayLike<number>>;
}

/** Whether a document with `vectors` lies near a query's `vector` (the caller's similarity rule). */
export type Nearness = (vector: ArrayLike<number>, vectors: ReadonlyArray<ArrayLike<number>>) => boolean;

/** Which documents each query matches: query id → document ids. */
export type Matches = Map<string, Set<string>>;

/** The set of `queries`: what documents must offer them, read once per set. */
export function querySet(queries: readonly StandingQuery[]): QuerySet {
  const keywordPaths = new Set<string>();
  for (const query of queries) {
    triggerPaths(query.matched.triggers, keywordPaths);
    if (query.filtered) triggerPaths(query.filtered.triggers, keywordPaths);
  }
  // Documents hold only the tokens some query looks up: a document's keys are then the few its
  // text shares with the queries, not every word it has (bench/alerts.md).
  const text = textReads(queries.flatMap((q) => (q.filtered ? [q.matched, q.filtered] : [q.matched])));
  return { queries, keywordPaths, text };
}

/** One document as a batch reads it. */
interface BatchDoc {
  id: string;
  doc: MemoryDoc;
  keys: Array<Iterable<string>>;
  vectors: ReadonlyArray<ArrayLike<number>>;
}

/**
 * Adds to `out` which of `candidates` each query of `set` matches, as the engine would once they
 * are indexed: each query is tried only on the documents carrying one of its necessary keys,
 * chosen as the ones fewest documents of this batch carry; a query with a vector and a `near`
 * rule also matches a document that satisfies its filters alone and lies near it. Yields to the
 * event loop every {@link SLICE_MS}.
 */
export async function percolate(
  candidates: readonly Candidate[],
  set: QuerySet,
  fields: FieldTable,
  out: Matches,
  near?: Nearness,
): Promise<void> {
  const docs: BatchDoc[] = [];
  let slice = performance.now();
  for (const candidate of candidates) {
    slice = await yieldAfter(slice, SLICE_MS);
    const doc = new MemoryDoc(candidate.source, fields, set.text.words);
    docs.push({
      id: candidate.id,
      doc,
      keys: doc.keySets(set.keywordPaths, set.text.paths),
      vectors: candidate.vectors,
    });
  }
  const counts = new Map<string, number>();
  for (const doc of docs)
    for (const keys of doc.keys) for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  const count = (key: string) => counts.get(key) ?? 0;
  // Queries by their index in `set.queries`.
  const { queries } = set;
  const byKey = new Map<string, number[]>();
  const everywhere: number[] = [];
  queries.forEach((query, index) => {
    const lexical = chooseKeys(query.matched.triggers, count);
    const semantic = query.filtered ? chooseKeys(query.filtered.triggers, count) : { keys: [], cost: 0 };
    if (!lexical || !semantic) {
      everywhere.push(index);
      return;
    }
    for (const key of new Set([...lexical.keys, ...semantic.keys])) {
      if (!counts.has(key)) continue;
      const list = byKey.get(key);
      if (list) list.push(index);
      else byKey.set(key, [index]);
    }
  });
  // A document's candidates, each once: marked with the document's ordinal rather than gathered
  // in a set per document.
  const marks = new Int32Array(queries.length);
  const tried: number[] = [];
  for (let ordinal = 1; ordinal <= docs.length; ordinal++) {
    const doc = docs[ordinal - 1]!;
    slice = await yieldAfter(slice, SLICE_MS);
    tried.length = 0;
    for (const index of everywhere) {
      marks[index] = ordinal;
      tried.push(index);
    }
    for (const keys of doc.keys)
      for (const key of keys) {
        const listed = byKey.get(key);
        if (listed)
          for (const index of listed)
            if (marks[index] !== ordinal) {
              marks[index] = ordinal;
              tried.push(index);
            }
      }
    for (const index of tried) {
      const query = queries[index]!;
      if (matches(query, doc, near)) {
        const ids = out.get(query.id);
        if (ids) ids.add(doc.id);
        else out.set(query.id, new Set([doc.id]));
      }
    }
  }
}

function matches(query: StandingQuery, doc: BatchDoc, near: Nearness | undefined): boolean {
  if (query.matched.matches(doc.doc)) return true;
  if (!query.filtered || !query.vector || !near || doc.vectors.length === 0) return false;
  return query.filtered.matches(doc.doc) && near(query.vector, doc.vectors);
}

/**
 * Longest synchronous stretch of a batch, in milliseconds: matching shares its process with the
 * intake's worker, whose Redis and engine calls time out behind a long synchronous stretch.
 */
const SLICE_MS = 20;
