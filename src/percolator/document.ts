import { InternalError } from '../internal/errors.ts';
import {
  keywordNormalizer,
  textAnalyzer,
  tokensOf,
  type AnalyzerDefinition,
  type TextAnalyzer,
} from './analysis/analyzers.ts';
import { keywordKey } from './triggers.ts';

/** How the index maps one field, as far as matching needs. */
export type FieldKind =
  | { kind: 'text'; analyze: TextAnalyzer; search: TextAnalyzer }
  | { kind: 'keyword'; normalize: (value: string) => string }
  | { kind: 'boolean' }
  | { kind: 'number' }
  | { kind: 'date' };

/** Field path → how it is mapped: read from the live index (`indices.get`). */
export type FieldTable = ReadonlyMap<string, FieldKind>;

/** One property of an index's mappings, as far as matching reads it. */
export interface MappingProperty {
  type?: string;
  analyzer?: string;
  search_analyzer?: string;
  normalizer?: string;
  properties?: Record<string, MappingProperty>;
}

/** The index's analysis settings, as far as matching reads them. */
export interface AnalysisSettings {
  analyzer?: Record<string, AnalyzerDefinition>;
  normalizer?: Record<string, AnalyzerDefinition>;
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
    textAnalyzer(analysis.analyzer?.[name ?? 'standard'], name ?? 'standard');
  const normalizer = (name: string) => analysis.normalizer?.[name];
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
 * Given `words` (the tokens the queries it is matched against look up: compiled.ts, `TextReads`), its
 * token sets hold only those: a document's sets are then a few tokens rather than all of its text,
 * and its keys ({@link keySets}) only what some trigger can name.
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
        const child: unknown = Reflect.get(value, part);
        if (Array.isArray(child)) for (const item of child) next.push(item);
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
      const field = this.textField(path);
      lists = this.values(path).map((v) => tokensOf(field.analyze, String(v)));
      this.tokenLists.set(path, lists);
    }
    return lists;
  }

  private textField(path: string): Extract<FieldKind, { kind: 'text' }> {
    const field = this.fields.get(path);
    if (field?.kind !== 'text') throw new InternalError(`${path} is not a text field`);
    return field;
  }

  /** The distinct tokens of a text field (with `words`, only those among them). */
  tokenSet(path: string): Set<string> {
    let set = this.tokenSets.get(path);
    if (!set) {
      const out = new Set<string>();
      const { words } = this;
      const lists = this.tokenLists.get(path);
      if (words && !lists) {
        // With `words`, no token list is kept (only phrases read them, on a few documents): a
        // batch's whole text would otherwise outlive the young generation (bench/alerts.md).
        const { analyze } = this.textField(path);
        // An unnamed visitor: run through tsx (keepNames), a named one costs a defineProperty per call.
        for (const value of this.values(path))
          analyze.tokens(String(value), (token) => {
            if (words.has(token)) out.add(token);
          });
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
   * The keys a query's triggers are made of (triggers.ts), one collection per field: each text
   * field's distinct tokens (a token is its own key; only for `textPaths` when given, the fields
   * some query reads), and each keyword field's normalized values under {@link keywordKey} (only
   * for `keywordPaths`, the fields some trigger names). A token found in two fields is listed twice.
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
