import type { estypes } from '@elastic/elasticsearch';
import { InternalError } from '../../internal/errors.ts';
import { vocabularyOf } from './known-tokens.ts';
import {
  keywordNormalizer,
  textAnalyzer,
  tokensOf,
  type AnalyzerDefinition,
  type TextAnalyzer,
} from './text-analyzers.ts';

/**
 * Elasticsearch queries evaluated against one document in the process, as the engine's percolator
 * does with its one-document memory index: the saved searches' matching pass (alert-matching.ts)
 * asks the very query a post search would send (post-query.ts), so the two cannot drift apart,
 * without sending every batch of posts to the engine. It answers "does this document match", never
 * a score. Only the query kinds and field types the service's query builders produce are known;
 * any other is refused when the query is compiled (an error, never a different answer).
 *
 * Why (bench/alerts.md): asking the engine cost a pass 1.1–1.5 CPU-s per 1,000 posts and 1,000
 * saved searches, more than the intake itself; the same question in memory costs a few ms.
 */

type Query = estypes.QueryDslQueryContainer;

/** How the index maps one field, as far as matching needs. */
export type FieldKind =
  | { kind: 'text'; analyze: TextAnalyzer; search: TextAnalyzer }
  | { kind: 'keyword'; normalize: (value: string) => string }
  | { kind: 'boolean' }
  | { kind: 'number' }
  | { kind: 'date' };

/** Field path → how it is mapped: read from the live index (`indices.get`). */
export type FieldTable = ReadonlyMap<string, FieldKind>;

interface MappingProperty {
  type?: string;
  analyzer?: string;
  search_analyzer?: string;
  normalizer?: string;
  properties?: Record<string, MappingProperty>;
}

/** The index's analysis settings, as far as matching reads them. */
export interface AnalysisSettings {
  analyzer?: Record<string, unknown>;
  normalizer?: Record<string, unknown>;
}

const NUMBER_TYPES = new Set(['long', 'integer', 'short', 'byte', 'double', 'unsigned_long']);

/**
 * The field table of an index's mappings and analysis settings. Fields this module cannot
 * reproduce (an analyzer other than `standard` + `lowercase`, a float type, vectors, objects kept
 * whole) are left out: a query naming one is refused.
 */
export function fieldTable(properties: Record<string, MappingProperty>, analysis: AnalysisSettings = {}): FieldTable {
  const out = new Map<string, FieldKind>();
  const analyzer = (name: string | undefined) =>
    textAnalyzer(analysis.analyzer?.[name ?? 'standard'] as AnalyzerDefinition | undefined, name ?? 'standard');
  const normalizer = (name: string) => analysis.normalizer?.[name] as AnalyzerDefinition | undefined;
  const walk = (props: Record<string, MappingProperty>, prefix: string) => {
    for (const [name, prop] of Object.entries(props)) {
      const path = `${prefix}${name}`;
      if (prop.properties) walk(prop.properties, `${path}.`);
      if (prop.type === 'text') {
        const analyze = analyzer(prop.analyzer);
        const search = prop.search_analyzer ? analyzer(prop.search_analyzer) : analyze;
        if (analyze && search) out.set(path, { kind: 'text', analyze, search });
      } else if (prop.type === 'keyword') {
        // A normalizer the settings do not define (a built-in) is not reproduced: the field is left out.
        const definition = prop.normalizer ? normalizer(prop.normalizer) : undefined;
        const normalize = prop.normalizer && !definition ? null : keywordNormalizer(definition);
        if (normalize) out.set(path, { kind: 'keyword', normalize });
      } else if (prop.type === 'boolean') out.set(path, { kind: 'boolean' });
      else if (prop.type === 'date') out.set(path, { kind: 'date' });
      else if (prop.type && NUMBER_TYPES.has(prop.type)) out.set(path, { kind: 'number' });
    }
  };
  walk(properties, '');
  return out;
}

/**
 * One indexed document as matching reads it: values by path, text fields analyzed once, on demand.
 * Given `words` (the tokens the queries it is matched against look up: {@link TextReads}), its token
 * sets hold only those: a document's sets are then a few tokens rather than all of its text, and
 * its keys ({@link keySets}) only what some trigger can name.
 */
export class MemoryDoc {
  private readonly tokenLists = new Map<string, string[][]>();
  private readonly tokenSets = new Map<string, Set<string>>();
  private readonly keywordSets = new Map<string, Set<string>>();

  constructor(
    readonly source: Readonly<Record<string, unknown>>,
    private readonly fields: FieldTable,
    private readonly words?: ReadonlySet<string>,
  ) {}

  /** Every value at `path` (arrays flattened; none when absent or null). */
  values(path: string): unknown[] {
    if (!path.includes('.')) {
      const value = this.source[path];
      if (value === undefined || value === null) return [];
      return Array.isArray(value) ? value.filter((v) => v !== null && v !== undefined) : [value];
    }
    let current: unknown[] = [this.source];
    for (const part of path.split('.')) {
      const next: unknown[] = [];
      for (const value of current) {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
        const child = (value as Record<string, unknown>)[part];
        if (Array.isArray(child)) next.push(...(child as unknown[]));
        else if (child !== undefined && child !== null) next.push(child);
      }
      current = next;
    }
    return current.filter((v) => v !== null && v !== undefined);
  }

  /** The tokens of a text field, one list per value (a phrase never spans two values). */
  tokens(path: string): string[][] {
    let lists = this.tokenLists.get(path);
    if (!lists) {
      lists = this.analyze(path);
      this.tokenLists.set(path, lists);
    }
    return lists;
  }

  private textField(path: string): Extract<FieldKind, { kind: 'text' }> {
    const field = this.fields.get(path);
    if (field?.kind !== 'text') throw new InternalError(`${path} is not a text field`);
    return field;
  }

  private analyze(path: string): string[][] {
    const field = this.textField(path);
    return this.values(path).map((v) => tokensOf(field.analyze, String(v)));
  }

  /** The distinct tokens of a text field (with `words`, only those among them). */
  tokenSet(path: string): Set<string> {
    let set = this.tokenSets.get(path);
    if (!set) {
      const out = new Set<string>();
      const { words } = this;
      const lists = this.tokenLists.get(path);
      if (words && !lists) {
        // With `words`, no token list is made (only phrases read them, on a few documents): a batch's
        // whole text would otherwise outlive the young generation (bench/alerts.md).
        const { analyze } = this.textField(path);
        const vocabulary = vocabularyOf(words);
        // An unnamed visitor: run through tsx (keepNames), a named one costs a defineProperty per call.
        for (const value of this.values(path)) analyze.known(String(value), vocabulary, (token) => out.add(token));
      } else
        for (const list of lists ?? this.tokens(path))
          for (const token of list) if (!words || words.has(token)) out.add(token);
      this.tokenSets.set(path, out);
      set = out;
    }
    return set;
  }

  /** The normalized values of a keyword field. */
  keywords(path: string): Set<string> {
    let set = this.keywordSets.get(path);
    if (!set) {
      const field = this.fields.get(path);
      if (field?.kind !== 'keyword') throw new InternalError(`${path} is not a keyword field`);
      set = new Set(this.values(path).map((v) => field.normalize(String(v))));
      this.keywordSets.set(path, set);
    }
    return set;
  }

  /**
   * The keys a query's triggers are made of (see {@link MemoryQuery.triggers}), one collection per
   * field: each text field's distinct tokens (a token is its own key; only for `textPaths` when
   * given, the fields some query reads), and each keyword field's normalized values under
   * {@link keywordKey} (only for `keywordPaths`, the fields some trigger names). A token found in
   * two fields is listed twice.
   */
  keySets(keywordPaths: ReadonlySet<string>, textPaths?: ReadonlySet<string>): Array<Iterable<string>> {
    const out: Array<Iterable<string>> = [];
    for (const [path, field] of this.fields) {
      if (field.kind === 'text') {
        if (!textPaths || textPaths.has(path)) out.push(this.tokenSet(path));
      } else if (field.kind === 'keyword' && keywordPaths.has(path))
        out.push([...this.keywords(path)].map((value) => keywordKey(path, value)));
    }
    return out;
  }
}

/** A text token is its own key (no token starts with a control character); keyword values are keyed by field. */
const textKey = (token: string) => token;
const keywordKey = (path: string, value: string) => `\u0000${path}\u0000${value}`;

/**
 * What a document must carry for a query to match it: `keys` (any one of them), `all` (each child
 * is necessary, so any one child alone is a sound test), `any` (one child or another: their union).
 * `null`: nothing is necessary (a range, a negation, match-all).
 */
export type Trigger = { keys: string[] } | { all: Trigger[] } | { any: Trigger[] } | null;

/** A compiled query: whether a document matches it, and what a matching document must carry. */
export interface MemoryQuery {
  matches(doc: MemoryDoc): boolean;
  triggers: Trigger;
  /** What `matches` reads of a document's text. */
  text: TextReads;
}

/**
 * The text fields a query reads and every token it looks up in their token sets: a document built
 * with a union of these `words` answers the query as one built without (only the fields' token
 * lists, which phrases read, are whole either way).
 */
export interface TextReads {
  paths: ReadonlySet<string>;
  words: ReadonlySet<string>;
}

const NO_TEXT: TextReads = { paths: new Set(), words: new Set() };

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

function unsupported(what: string): never {
  throw new InternalError(`In-memory matching does not know ${what}`);
}

function fieldOf(fields: FieldTable, path: string): FieldKind {
  const field = fields.get(path);
  if (!field) unsupported(`the field ${path}`);
  return field;
}

/** `caption^2` → `caption`. */
function fieldName(weighted: string): string {
  if (weighted.includes('*')) unsupported(`the field pattern ${weighted}`);
  return weighted.split('^')[0]!;
}

/** Whether `needle` occurs in `list` at consecutive positions. */
function containsRun(list: readonly string[], needle: readonly string[]): boolean {
  outer: for (let i = 0; i + needle.length <= list.length; i++) {
    for (let j = 0; j < needle.length; j++) if (list[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

const NEVER: MemoryQuery = { matches: () => false, triggers: { keys: [] }, text: NO_TEXT };
const ALWAYS: MemoryQuery = { matches: () => true, triggers: null, text: NO_TEXT };

/** Compiles `query` against the index's fields. */
export function compileMemoryQuery(query: Query, fields: FieldTable): MemoryQuery {
  const entries = Object.entries(query as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length !== 1) unsupported(`a query with ${entries.length} kinds`);
  const [kind, body] = entries[0]!;
  switch (kind) {
    case 'bool':
      return compileBool(body as estypes.QueryDslBoolQuery, fields);
    case 'match_all':
      return ALWAYS;
    case 'match_none':
      return NEVER;
    case 'constant_score':
      return compileMemoryQuery((body as estypes.QueryDslConstantScoreQuery).filter, fields);
    case 'dis_max':
      return anyOf((body as estypes.QueryDslDisMaxQuery).queries.map((q) => compileMemoryQuery(q, fields)));
    case 'term':
      return compileTerm(body as Record<string, unknown>, fields);
    case 'terms':
      return compileTerms(body as Record<string, unknown>, fields);
    case 'range':
      return compileRange(body as Record<string, estypes.QueryDslRangeQuery>, fields);
    case 'exists': {
      const path = (body as estypes.QueryDslExistsQuery).field;
      fieldOf(fields, path);
      return { matches: (doc) => doc.values(path).length > 0, triggers: null, text: NO_TEXT };
    }
    case 'multi_match':
      return compileMultiMatch(body as estypes.QueryDslMultiMatchQuery, fields);
    default:
      return unsupported(`the query kind ${kind}`);
  }
}

function anyOf(children: MemoryQuery[]): MemoryQuery {
  if (children.length === 0) return NEVER;
  if (children.length === 1) return children[0]!;
  return {
    matches: (doc) => children.some((c) => c.matches(doc)),
    triggers: children.some((c) => c.triggers === null) ? null : { any: children.map((c) => c.triggers) },
    text: textReads(children),
  };
}

function clauses(value: Query | Query[] | undefined, fields: FieldTable): MemoryQuery[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((q) => compileMemoryQuery(q, fields));
}

/** `bool`: every `must` and `filter`, no `must_not`, and `minimum_should_match` of `should` (1 when alone). */
function compileBool(body: estypes.QueryDslBoolQuery, fields: FieldTable): MemoryQuery {
  const required = [...clauses(body.must, fields), ...clauses(body.filter, fields)];
  const excluded = clauses(body.must_not, fields);
  const should = clauses(body.should, fields);
  const declared = body.minimum_should_match;
  if (declared !== undefined && !/^\d+$/.test(String(declared)))
    unsupported(`minimum_should_match ${String(declared)}`);
  const minimum = declared !== undefined ? Number(declared) : should.length > 0 && required.length === 0 ? 1 : 0;
  const atLeast = Math.min(minimum, should.length + 1);
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

/** The single `field: value` (or `field: {value}`) pair of a term-level query body. */
function single(body: Record<string, unknown>, kind: string): [string, unknown] {
  const pairs = Object.entries(body).filter(([k]) => k !== 'boost' && k !== '_name');
  if (pairs.length !== 1) unsupported(`a ${kind} query over ${pairs.length} fields`);
  return pairs[0]!;
}

/** The test of one term-level value against a field, and its trigger key (keyword fields only). */
function valueTest(
  path: string,
  field: FieldKind,
  value: unknown,
): { test: (doc: MemoryDoc) => boolean; key?: string } {
  switch (field.kind) {
    case 'keyword': {
      const normalized = field.normalize(String(value));
      return { test: (doc) => doc.keywords(path).has(normalized), key: keywordKey(path, normalized) };
    }
    case 'boolean': {
      const wanted = value === true || value === 'true';
      return { test: (doc) => doc.values(path).some((v) => v === wanted || v === String(wanted)) };
    }
    case 'number': {
      const wanted = Number(value);
      return { test: (doc) => doc.values(path).some((v) => Number(v) === wanted) };
    }
    default:
      return unsupported(`a term on the ${field.kind} field ${path}`);
  }
}

function compileTerm(body: Record<string, unknown>, fields: FieldTable): MemoryQuery {
  const [path, spec] = single(body, 'term');
  const value = spec !== null && typeof spec === 'object' ? (spec as { value: unknown }).value : spec;
  const { test, key } = valueTest(path, fieldOf(fields, path), value);
  return { matches: test, triggers: key ? { keys: [key] } : null, text: NO_TEXT };
}

function compileTerms(body: Record<string, unknown>, fields: FieldTable): MemoryQuery {
  const [path, values] = single(body, 'terms');
  if (!Array.isArray(values)) unsupported('a terms lookup');
  const field = fieldOf(fields, path);
  const tests = values.map((v) => valueTest(path, field, v));
  return {
    matches: (doc) => tests.some((t) => t.test(doc)),
    triggers: tests.every((t) => t.key) ? { keys: tests.map((t) => t.key!) } : null,
    text: NO_TEXT,
  };
}

function compileRange(body: Record<string, estypes.QueryDslRangeQuery>, fields: FieldTable): MemoryQuery {
  const [path, spec] = single(body, 'range') as [string, Record<string, unknown>];
  const field = fieldOf(fields, path);
  if (field.kind !== 'number' && field.kind !== 'date') unsupported(`a range on the ${field.kind} field ${path}`);
  const known = new Set(['gt', 'gte', 'lt', 'lte', 'boost', '_name']);
  for (const key of Object.keys(spec)) if (!known.has(key)) unsupported(`the range option ${key}`);
  const asNumber = (v: unknown): number => {
    if (field.kind === 'number') return Number(v);
    if (typeof v === 'number') return v;
    // Date math (`now-7d`, `||/d`) is not what the filter grammar sends: refused rather than misread.
    const ms = Date.parse(String(v));
    if (Number.isNaN(ms) || /now|\|\|/.test(String(v))) unsupported(`the date ${String(v)}`);
    return ms;
  };
  const bound = (op: string) => (spec[op] === undefined || spec[op] === null ? undefined : asNumber(spec[op]));
  const [gt, gte, lt, lte] = [bound('gt'), bound('gte'), bound('lt'), bound('lte')];
  return {
    matches: (doc) =>
      doc.values(path).some((raw) => {
        const v = field.kind === 'number' ? Number(raw) : typeof raw === 'number' ? raw : Date.parse(String(raw));
        if (Number.isNaN(v)) return false;
        return (
          (gt === undefined || v > gt) &&
          (gte === undefined || v >= gte) &&
          (lt === undefined || v < lt) &&
          (lte === undefined || v <= lte)
        );
      }),
    triggers: null,
    text: NO_TEXT,
  };
}

/**
 * `multi_match`, `best_fields` (any field holding any of the query's tokens, as the default `or`
 * operator has it) or `phrase` (any field holding all of them at consecutive positions). The query
 * is analyzed with each field's search analyzer; a field it leaves no token for matches nothing.
 */
function compileMultiMatch(body: estypes.QueryDslMultiMatchQuery, fields: FieldTable): MemoryQuery {
  const type = body.type ?? 'best_fields';
  if (type !== 'best_fields' && type !== 'phrase') unsupported(`multi_match of type ${type}`);
  for (const option of ['operator', 'minimum_should_match', 'slop', 'fuzziness', 'zero_terms_query'] as const)
    if (body[option] !== undefined && !(option === 'operator' && String(body[option]).toLowerCase() === 'or'))
      unsupported(`the multi_match option ${option}`);
  const paths = (Array.isArray(body.fields) ? body.fields : body.fields ? [body.fields] : []).map(fieldName);
  if (paths.length === 0) unsupported('multi_match over the default fields');
  const perField = paths.map((path) => {
    const field = fieldOf(fields, path);
    if (field.kind !== 'text') unsupported(`multi_match over the ${field.kind} field ${path}`);
    return { path, tokens: tokensOf(field.search, body.query) };
  });
  const keys = new Set<string>();
  for (const { tokens } of perField) {
    if (tokens.length === 0) continue;
    // A phrase needs every token: its longest alone is a sound trigger, and likely the rarest.
    if (type === 'phrase') keys.add(textKey(tokens.reduce((a, b) => (b.length > a.length ? b : a))));
    else for (const token of tokens) keys.add(textKey(token));
  }
  const live = perField.filter((f) => f.tokens.length > 0);
  return {
    matches:
      type === 'phrase'
        ? (doc) =>
            live.some(({ path, tokens }) =>
              tokens.length === 1
                ? doc.tokenSet(path).has(tokens[0]!)
                : doc.tokens(path).some((list) => containsRun(list, tokens)),
            )
        : (doc) =>
            live.some(({ path, tokens }) => {
              const set = doc.tokenSet(path);
              return tokens.some((t) => set.has(t));
            }),
    triggers: { keys: [...keys] },
    text: { paths: new Set(live.map((f) => f.path)), words: new Set(live.flatMap((f) => f.tokens)) },
  };
}

/** The keyword fields a trigger names (documents offer their values as keys only for these). */
export function triggerPaths(trigger: Trigger, out = new Set<string>()): Set<string> {
  if (trigger === null) return out;
  if ('keys' in trigger) {
    for (const key of trigger.keys) if (key.startsWith('\u0000')) out.add(key.slice(1, key.indexOf('\u0000', 1)));
  } else for (const child of 'all' in trigger ? trigger.all : trigger.any) triggerPaths(child, out);
  return out;
}

/**
 * The keys to look a query up by in one batch: of the alternatives its trigger offers, the one
 * carried by the fewest documents of the batch (`count`), so that a query is tried on as few
 * documents as its necessary conditions allow. Null: try it on every document.
 */
export function chooseKeys(trigger: Trigger, count: (key: string) => number): { keys: string[]; cost: number } | null {
  if (trigger === null) return null;
  if ('keys' in trigger) return { keys: trigger.keys, cost: trigger.keys.reduce((sum, k) => sum + count(k), 0) };
  if ('all' in trigger) {
    let best: { keys: string[]; cost: number } | null = null;
    for (const child of trigger.all) {
      const chosen = chooseKeys(child, count);
      if (chosen && (!best || chosen.cost < best.cost)) best = chosen;
    }
    return best;
  }
  const parts: string[] = [];
  let cost = 0;
  for (const child of trigger.any) {
    const chosen = chooseKeys(child, count);
    if (!chosen) return null;
    parts.push(...chosen.keys);
    cost += chosen.cost;
  }
  return { keys: parts, cost };
}
