/**
 * Registry of filterable and sortable fields, per filter scope. It is the single source of the
 * grammar: the parser takes the field names, types and operators from here, `docs/filters.md`
 * documents exactly this table, and each engine adapter maps the logical keys to its own layout.
 */

/** Where a filters object sits: `post.filters` (and `account.posts.filters`), `post.author.filters`, `account.filters`. */
export type FilterScope = 'post' | 'author' | 'account';

/** Scopes that have a sort (filters-only searches of posts and of accounts). */
export type SortScope = 'post' | 'account';

/**
 * Value types. `keywords` (free strings) and `ids` (classification or resource IDs) are both
 * multi-valued; they differ only in what the documentation promises about their values.
 */
export type FieldType = 'number' | 'integer' | 'timestamp' | 'keyword' | 'keywords' | 'ids' | 'boolean';

/** Logical, engine-neutral field key: `<scope>.<api name>`. */
export type FieldKey = `${FilterScope}.${string}`;

/**
 * How string values are made canonical before they reach the AST, mirroring the index-side
 * normalization so that a filter means the same whichever spelling the client sends.
 * `lowercase`: case-insensitive; `hashtag`: also drops one leading `#`; `handle`: also drops one leading `@`.
 */
export type Normalization = 'lowercase' | 'hashtag' | 'handle';

/** A filterable field. */
export interface FieldDef {
  /** API name: the key inside a filters object. */
  name: string;
  type: FieldType;
  /** The value can be null or absent (then `exists` applies, and see the null semantics in the docs). */
  nullable: boolean;
  field: FieldKey;
  normalize?: Normalization;
  /** A closed set of allowed values, when the contract fixes one. */
  values?: readonly string[];
  /** Allowed as `sort.by` of a filters-only search. */
  sortable?: boolean;
}

type Spec = Omit<FieldDef, 'name' | 'field'>;

function scoped(scope: FilterScope, specs: Record<string, Spec>): Readonly<Record<string, FieldDef>> {
  // A prototype-less table (no inherited `constructor` to look up); Object.create answers any.
  const out = Object.create(null) as Record<string, FieldDef>;
  for (const [name, spec] of Object.entries(specs)) {
    out[name] = Object.freeze({ name, field: `${scope}.${name}`, ...spec });
  }
  return Object.freeze(out);
}

const integer = (nullable = false, sortable = false): Spec => ({
  type: 'integer',
  nullable,
  ...(sortable && { sortable }),
});
const number = (nullable: boolean, sortable = false): Spec => ({
  type: 'number',
  nullable,
  ...(sortable && { sortable }),
});
const keyword = (nullable = false, normalize?: Normalization): Spec => ({
  type: 'keyword',
  nullable,
  ...(normalize && { normalize }),
});
const ids = (nullable = false): Spec => ({ type: 'ids', nullable });

/**
 * Facts of the account that both the author scope (the publishing account of a post) and the
 * account scope filter on.
 */
const accountFacts: Record<string, Spec> = {
  id: keyword(),
  handle: keyword(false, 'handle'),
  followers_count: integer(false, true),
  following_count: integer(false, true),
  posts_count: integer(false, true),
  is_verified: { type: 'boolean', nullable: false },
  account_type: keyword(),
  // Null for private accounts and until the account's posts have been interpreted.
  niches: ids(true),
  publishing_languages: ids(true),
  country_codes: ids(),
  // Derived by the service (docs/api-decisions.md, "Account metrics"): null when it cannot be
  // computed, and for private accounts.
  followers_growth_7d: number(true, true),
  followers_growth_30d: number(true, true),
  median_views_90d: number(true, true),
  engagement_rate_90d: number(true, true),
  posts_per_week_90d: number(true, true),
};

const POST_FIELDS = scoped('post', {
  id: keyword(),
  shortcode: keyword(),
  posted_at: { type: 'timestamp', nullable: false, sortable: true },
  observed_at: { type: 'timestamp', nullable: false },
  format: keyword(),
  primary_language: keyword(true),
  hashtags: { type: 'keywords', nullable: false, normalize: 'hashtag' },
  // The handles the caption mentions, `@` optional, case-insensitive.
  caption_mentions: { type: 'keywords', nullable: false, normalize: 'handle' },
  // Enrichment: every one of these is null while enrichment is pending (spec §3), including the
  // arrays flattened out of the nullable `hook`, `key_messages`, `proofs`, `offers`,
  // `calls_to_action` and `narrative_structure` objects.
  topics: ids(true),
  creative_formats: ids(true),
  commercial_contexts: ids(true),
  hook_devices: ids(true),
  hook_modalities: ids(true),
  key_message_roles: ids(true),
  proof_mechanisms: ids(true),
  offer_types: ids(true),
  cta_actions: ids(true),
  cta_stages: ids(true),
  narrative_patterns: ids(true),
  has_paid_partnership_label: { type: 'boolean', nullable: true },
  comments_enabled: { type: 'boolean', nullable: false },
  views: integer(true, true),
  likes: integer(false, true),
  comments: integer(false, true),
  media_count: integer(),
  engagement_rate_by_views: number(true, true),
  view_ratio_to_account_baseline: number(true, true),
  audio_type: keyword(true),
  audio_id: keyword(true),
  media_types: { type: 'ids', nullable: false, values: ['image', 'video'] },
  coauthor_ids: ids(),
});

const AUTHOR_FIELDS = scoped('author', accountFacts);

const ACCOUNT_FIELDS = scoped('account', {
  ...accountFacts,
  category_label: keyword(false, 'lowercase'),
  observed_at: { type: 'timestamp', nullable: false },
});

/** Filterable fields by scope, keyed by API name. */
export const FILTER_FIELDS: Readonly<Record<FilterScope, Readonly<Record<string, FieldDef>>>> = Object.freeze({
  post: POST_FIELDS,
  author: AUTHOR_FIELDS,
  account: ACCOUNT_FIELDS,
});

/** Every field of every scope, by logical key. */
export const FIELDS_BY_KEY: ReadonlyMap<FieldKey, FieldDef> = new Map(
  Object.values(FILTER_FIELDS).flatMap((fields) => Object.values(fields).map((f) => [f.field, f] as const)),
);

/** Fields allowed as `sort.by` in a scope, in documentation order. */
export function sortFields(scope: SortScope): FieldDef[] {
  return Object.values(FILTER_FIELDS[scope]).filter((f) => f.sortable === true);
}

/** Operator names of the grammar. */
export type Operator =
  'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'in' | 'not_in' | 'contains_any' | 'contains_all' | 'contains_none' | 'exists';

/** Every operator of the grammar, in documentation order. */
export const OPERATORS: readonly Operator[] = [
  'gt',
  'gte',
  'lt',
  'lte',
  'eq',
  'in',
  'not_in',
  'contains_any',
  'contains_all',
  'contains_none',
  'exists',
];

const OPERATORS_BY_TYPE: Record<FieldType, readonly Operator[]> = {
  number: ['gt', 'gte', 'lt', 'lte'],
  integer: ['gt', 'gte', 'lt', 'lte'],
  timestamp: ['gt', 'gte', 'lt', 'lte'],
  keyword: ['eq', 'in', 'not_in'],
  // `exists` on an array means "at least one element", useful even where the array is never null.
  keywords: ['contains_any', 'contains_all', 'contains_none', 'exists'],
  ids: ['contains_any', 'contains_all', 'contains_none', 'exists'],
  boolean: ['eq'],
};

/** Operators a field accepts: those of its type, plus `exists` when it is nullable. */
export function operatorsOf(field: FieldDef): readonly Operator[] {
  const ops = OPERATORS_BY_TYPE[field.type];
  return field.nullable && !ops.includes('exists') ? [...ops, 'exists'] : ops;
}

/** Human name of a type, for error details and docs. */
export function typeLabel(type: FieldType): string {
  switch (type) {
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'timestamp':
      return 'timestamp';
    case 'keyword':
      return 'keyword';
    case 'keywords':
      return 'array of strings';
    case 'ids':
      return 'array of IDs';
    case 'boolean':
      return 'boolean';
  }
}

/**
 * Lower-cases one code point at a time. The index normalizer lower-cases per code point as well
 * (Lucene's simple case mapping), whereas `String.prototype.toLowerCase` applies context rules
 * (Greek final sigma) and multi-character mappings (`İ` → `i̇`) that would never match the index.
 */
export function foldCase(value: string): string {
  // ASCII has no multi-character mappings: the plain lower case is the same, without a string per character.
  if (ASCII_ONLY.test(value)) return value.toLowerCase();
  let out = '';
  // The first code point of a multi-character mapping is the simple mapping (`İ` → `i`).
  for (const ch of value) out += [...ch.toLowerCase()][0]!;
  return out;
}

const ASCII_ONLY = /^\p{ASCII}*$/u;

/** The canonical form of a string value of `field`. */
export function normalizeValue(field: FieldDef, value: string): string {
  switch (field.normalize) {
    case undefined:
      return value;
    case 'lowercase':
      return foldCase(value);
    case 'hashtag':
      return foldCase(value.replace(/^#/, ''));
    case 'handle':
      return foldCase(value.replace(/^@/, ''));
  }
}
