import type { estypes } from '@elastic/elasticsearch';
import type {
  AndNode,
  ContainsNode,
  ExistsNode,
  FilterNode,
  NotNode,
  OrNode,
  RangeNode,
  TermNode,
  TermsNode,
} from '../../../query/ast.ts';
import {
  FIELDS_BY_KEY,
  type FieldKey,
  type FieldType,
  type FilterScope,
  type SortScope,
} from '../../../query/fields.ts';
import type { SortSpec } from '../../../query/parse-sort.ts';
import { isKeyOf } from '../../../internal/typed-objects.ts';

/**
 * Compiles the engine-neutral filter AST (src/query/ast.ts) to Elasticsearch query DSL, one
 * function per node kind. Everything runs in filter context: no clause scores, so the result
 * composes with a relevance query without changing its ranking, and Elasticsearch may cache it.
 */

type Query = estypes.QueryDslQueryContainer;

/** The index a filter scope is searched in: author facts are denormalized into each post. */
const INDEX_OF_SCOPE: Record<FilterScope, 'posts' | 'accounts'> = {
  post: 'posts',
  author: 'posts',
  account: 'accounts',
};

/**
 * Where a logical field lives, when not at the conventional place (`post.x` → `x`,
 * `author.x` → `author.x`, `account.x` → `x`).
 */
const PATH_OVERRIDES: Partial<Record<FieldKey, string>> = {
  // `category_label` itself is analyzed text; its normalized keyword sub-field matches exact labels.
  'account.category_label': 'category_label.keyword',
  // The caption's mentions as lowercase handles (projection.ts).
  'post.caption_mentions': 'mentions',
};

/** The Elasticsearch field of a logical field key. */
export function esPath(key: FieldKey): string {
  const override = PATH_OVERRIDES[key];
  if (override) return override;
  const dot = key.indexOf('.');
  const scope = key.slice(0, dot);
  const name = key.slice(dot + 1);
  return scope === 'author' ? `author.${name}` : name;
}

function pathIn(key: FieldKey, scope: FilterScope): string {
  const prefix = key.slice(0, key.indexOf('.'));
  const index = isKeyOf(INDEX_OF_SCOPE, prefix) ? INDEX_OF_SCOPE[prefix] : undefined;
  // A parser bug, not a client error: a leaf of the other index would silently match nothing.
  if (index !== INDEX_OF_SCOPE[scope]) throw new Error(`field ${key} is not in the ${INDEX_OF_SCOPE[scope]} index`);
  return esPath(key);
}

/**
 * Compiles a filter tree of `scope` (post and author trees both target the posts index, and may
 * be combined) to a query in filter context: a `bool` with only `filter` and `must_not` clauses,
 * or `match_all` for a tree that constrains nothing. Nested ANDs are flattened into one `bool`.
 */
export function compileFilter(node: FilterNode, scope: FilterScope): Query {
  const clauses = node.kind === 'and' ? flatten(node) : [node];
  if (clauses.length === 0) return { match_all: {} };
  // Unlike an inner AND, the root stays a bool even with one clause: a bare leaf, or an OR's
  // `should`, would score if the caller placed it in query context.
  return boolOfAnd(clauses, scope);
}

function compile(node: FilterNode, scope: FilterScope): Query {
  switch (node.kind) {
    case 'and':
      return compileAnd(node, scope);
    case 'or':
      return compileOr(node, scope);
    case 'not':
      return compileNot(node, scope);
    case 'range':
      return compileRange(node, scope);
    case 'term':
      return compileTerm(node, scope);
    case 'terms':
      return compileTerms(node, scope);
    case 'contains':
      return compileContains(node, scope);
    case 'exists':
      return compileExists(node, scope);
  }
}

/** The children of an AND with nested ANDs inlined (AND is associative). */
function flatten(node: AndNode): FilterNode[] {
  return node.children.flatMap((child) => (child.kind === 'and' ? flatten(child) : [child]));
}

/** The children of an OR with nested ORs inlined. */
function flattenOr(node: OrNode): FilterNode[] {
  return node.children.flatMap((child) => (child.kind === 'or' ? flattenOr(child) : [child]));
}

/** AND of clauses: negations go to `must_not` unwrapped, the rest to `filter`; empty arrays are omitted. */
function boolOfAnd(clauses: FilterNode[], scope: FilterScope): Query {
  const filter: Query[] = [];
  const mustNot: Query[] = [];
  for (const clause of clauses) {
    if (clause.kind === 'not') mustNot.push(compile(clause.child, scope));
    else filter.push(compile(clause, scope));
  }
  return {
    bool: {
      ...(filter.length > 0 && { filter }),
      ...(mustNot.length > 0 && { must_not: mustNot }),
    },
  };
}

function compileAnd(node: AndNode, scope: FilterScope): Query {
  const clauses = flatten(node);
  if (clauses.length === 0) return { match_all: {} };
  if (clauses.length === 1) return compile(clauses[0]!, scope);
  return boolOfAnd(clauses, scope);
}

function compileOr(node: OrNode, scope: FilterScope): Query {
  const clauses = flattenOr(node);
  if (clauses.length === 1) return compile(clauses[0]!, scope);
  // Empty is unreachable from the parser; an OR of nothing matches nothing.
  if (clauses.length === 0) return { match_none: {} };
  return { bool: { should: clauses.map((c) => compile(c, scope)), minimum_should_match: 1 } };
}

/** A document without a value for the negated field matches: `must_not` of a clause it fails. */
function compileNot(node: NotNode, scope: FilterScope): Query {
  return { bool: { must_not: [compile(node.child, scope)] } };
}

function compileRange(node: RangeNode, scope: FilterScope): Query {
  // Fixed key order keeps the output stable for tests and query-cache keys.
  const bounds = {
    ...(node.gt !== undefined && { gt: node.gt }),
    ...(node.gte !== undefined && { gte: node.gte }),
    ...(node.lt !== undefined && { lt: node.lt }),
    ...(node.lte !== undefined && { lte: node.lte }),
  };
  return { range: { [pathIn(node.field, scope)]: bounds } };
}

function compileTerm(node: TermNode, scope: FilterScope): Query {
  return { term: { [pathIn(node.field, scope)]: node.value } };
}

function compileTerms(node: TermsNode, scope: FilterScope): Query {
  return { terms: { [pathIn(node.field, scope)]: node.values } };
}

function compileContains(node: ContainsNode, scope: FilterScope): Query {
  const path = pathIn(node.field, scope);
  if (node.mode === 'any') return { terms: { [path]: node.values } };
  return { bool: { filter: node.values.map((value) => ({ term: { [path]: value } })) } };
}

function compileExists(node: ExistsNode, scope: FilterScope): Query {
  return { exists: { field: pathIn(node.field, scope) } };
}

const UNMAPPED_TYPE: Partial<Record<FieldType, estypes.MappingFieldType>> = {
  integer: 'long',
  number: 'double',
  timestamp: 'date',
};

/**
 * Compiles a sort of `scope`: the field with documents lacking a value last in either direction,
 * then the ID ascending, so that pages are deterministic and `search_after` never skips or repeats.
 */
export function compileSort(sort: SortSpec, scope: SortScope): estypes.SortCombinations[] {
  const field = FIELDS_BY_KEY.get(sort.field);
  if (!field?.sortable) throw new Error(`field ${sort.field} is not sortable`);
  const unmappedType = UNMAPPED_TYPE[field.type];
  return [
    {
      [pathIn(sort.field, scope)]: {
        order: sort.order,
        missing: '_last',
        // Lets a search over an index with no document holding the field yet sort instead of fail.
        ...(unmappedType && { unmapped_type: unmappedType }),
      },
    },
    { id: 'asc' },
  ];
}
