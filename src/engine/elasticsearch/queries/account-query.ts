import type { Client, estypes } from '@elastic/elasticsearch';
import { LRUCache } from 'lru-cache';
import { ACCOUNT_ONLY_AUTHOR_FIELDS, VOLATILE_AUTHOR_FIELDS } from '../../../domain/volatile-facts.ts';
import { ValidationFailedError } from '../../../internal/errors.ts';
import { and, isMatchAll, type FilterNode } from '../../../query/ast.ts';
import { FILTER_FIELDS, foldCase } from '../../../query/fields.ts';
import { analyzeQuery } from '../../../text/languages.ts';
import type { AccountSearch, PostsScope } from '../../../query/search-codec.ts';
import { COMPLETE_RESULTS, isTooManyBuckets } from '../errors.ts';
import { compileFilter, compileSort } from './filter-compiler.ts';

/** Identity fields searched by `account.query`, with weights: names first, then descriptions. */
export const ACCOUNT_TEXT_FIELDS = [
  'handle.text^3',
  'display_name^3',
  'category_label^1.5',
  'biography',
  'publishing_summary',
];

/** The client-stemmed companions of the descriptions (names are matched as written), same weights. */
export const ACCOUNT_STEMMED_TEXT_FIELDS = [
  'category_label_stemmed^1.5',
  'biography_stemmed',
  'publishing_summary_stemmed',
];

/**
 * The text match of `account.query`: the better of two sides, the fields as written searched with
 * the query's words less its function words ("for", "who", "how do I"; every word when nothing else
 * is left), and the descriptions' client-stemmed companions with its stems (src/text/languages.ts),
 * so "workouts" finds a biography that says "workout" as a post's caption would be found.
 *
 * Each side scores word by word (`cross_fields`: each word's best field, summed over the words,
 * the fields' document frequencies blended), not field by field: an account is found by the
 * query's words wherever it states them, and one that states every word ranks above one whose
 * name or category repeats the commonest of them ("home workout": a trainer whose biography says
 * "home workout" before the home cooks whose category is "Home cooking"). A whole-field score
 * (`best_fields`, before 2026-12-03) let a three-times-weighted short name or a one-and-a-half-times
 * weighted category matching one generic word outrank a biography matching all of them. An account
 * document is short and the index holds a tenth as many as the posts', so scoring every matching
 * document (no top-k pruning, unlike the posts' `best_fields`) costs little.
 */
function accountTextMatch(query: string): estypes.QueryDslQueryContainer {
  const { content, stemmed } = analyzeQuery(query);
  const side = (words: string, fields: string[]): estypes.QueryDslQueryContainer => ({
    multi_match: { query: words, type: 'cross_fields', fields },
  });
  const exact = side(content.length > 0 ? content : query, ACCOUNT_TEXT_FIELDS);
  return stemmed.length > 0 ? { dis_max: { queries: [exact, side(stemmed, ACCOUNT_STEMMED_TEXT_FIELDS)] } } : exact;
}

/**
 * How many accounts one posts scope may qualify. The qualifying set is applied as a `terms` filter
 * (at most 65,536 terms: `index.max_terms_count`) and found by a `terms` aggregation asked for one
 * bucket more than this, to tell a set at the cap from one past it. That aggregation must stay
 * within the engine's 65,536 buckets (`search.max_buckets`), which it enforces with an error, not a
 * partial answer: asked for 65,537, a scope of more authors failed with a 500 instead of the 422
 * (found on the 3M-post index, bench/scaling.md).
 */
export const MAX_QUALIFYING_ACCOUNTS = 65_535;

/** The name of the exact-handle clause in a hit's `matched_queries`: a fused ranking keeps that account first. */
export const EXACT_HANDLE = 'exact_handle';

/** Only account documents (a point in time may span the posts index too). */
const ACCOUNTS_ONLY: estypes.QueryDslQueryContainer = { exists: { field: 'handle_observed_at' } };

function nonEmpty(query: estypes.QueryDslQueryContainer): estypes.QueryDslQueryContainer[] {
  return query && !('match_all' in query) ? [query] : [];
}

/** The filters every account search applies: account documents, servable, never private, the search's own. */
export function accountSearchFilter(search: Pick<AccountSearch, 'filter'>): estypes.QueryDslQueryContainer[] {
  return [
    ACCOUNTS_ONLY,
    { term: { servable: true } },
    { term: { is_private: false } },
    ...nonEmpty(compileFilter(search.filter, 'account')),
  ];
}

/**
 * The Elasticsearch query of an account search. Private accounts are excluded on every path.
 * `words`: the text its words are matched with, when a silent correction replaced misspelt words
 * (fused-account-search.ts); the exact handle is always the query as typed.
 */
export function accountSearchQuery(search: AccountSearch, words = search.query): estypes.QueryDslQueryContainer {
  const filter = accountSearchFilter(search);
  if (search.query === null || words === null) return { bool: { filter } };
  const handle = foldCase(search.query.replace(/^@/, ''));
  return {
    bool: {
      filter,
      should: [
        // An exact handle (or @handle) is what the caller means: it ranks first (fused too, by its name).
        { term: { handle: { value: handle, boost: 50, _name: EXACT_HANDLE } } },
        accountTextMatch(words),
        { term: { niches: { value: words.toLowerCase().replace(/\s+/g, '_'), boost: 2 } } },
      ],
      minimum_should_match: 1,
    },
  };
}

/** Relevance order with a query; else the requested sort, most followed first by default. */
export function accountSearchSort(search: AccountSearch): estypes.SortCombinations[] {
  if (search.query !== null) return [{ _score: { order: 'desc' } }, { id: 'asc' }];
  return compileSort(search.sort ?? { field: 'account.followers_count', order: 'desc' }, 'account');
}

/**
 * The search body that finds a posts scope's qualifying accounts: a `terms` aggregation on
 * `author.id` with `min_doc_count`, one bucket past {@link MAX_QUALIFYING_ACCOUNTS}. Shared with
 * the latency bench's raw side, so both ask the engine the same thing.
 */
export function qualifyingRequest(scope: PostsScope) {
  return {
    size: 0,
    track_total_hits: false,
    // Storing thousands of buckets in the shard request cache costs ~5 ms per new scope (a third
    // of the aggregation), and intake invalidates it at every refresh; the set is remembered per
    // point in time by createQualifyingAccounts instead.
    request_cache: false,
    query: {
      bool: {
        filter: [
          { exists: { field: 'author.id' } },
          { term: { servable: true } },
          ...nonEmpty(compileFilter(scope.filter, 'post')),
        ],
      },
    },
    aggs: {
      authors: { terms: { field: 'author.id', min_doc_count: scope.minimum, size: MAX_QUALIFYING_ACCOUNTS + 1 } },
    },
  } satisfies estypes.SearchRequest;
}

/**
 * The accounts that authored at least `minimum` distinct servable posts each satisfying the whole
 * post filter, as a filter on account IDs. Computed by a `terms` aggregation on `author.id` with
 * `min_doc_count` over the same point in time as the page, so every page of a search sees the
 * same set; exact on one shard per index, and over several as long as each shard lists every
 * author of the scope (else refused). Coauthored posts do not count (see docs).
 */
async function qualifyingAccounts(
  client: Client,
  pit: string,
  scope: PostsScope,
): Promise<estypes.QueryDslQueryContainer> {
  const tooBroad = () =>
    new ValidationFailedError(
      `/account/posts/filters: matches the posts of more than ${MAX_QUALIFYING_ACCOUNTS} accounts; narrow the posts filters`,
    );
  const response = await client
    .search<unknown, { authors?: estypes.AggregationsStringTermsAggregate }>({
      ...COMPLETE_RESULTS,
      pit: { id: pit },
      ...qualifyingRequest(scope),
    })
    // A cluster whose operator set `search.max_buckets` lower refuses sooner: the same 422.
    .catch((error: unknown) => {
      throw isTooManyBuckets(error) ? tooBroad() : error;
    });
  const authors = response.aggregations?.authors;
  const buckets = authors?.buckets;
  const ids = (Array.isArray(buckets) ? buckets : []).map((b) => String(b.key));
  // Over several shards (INDEX_SHARDS > 1) each lists its top authors only; past that, an author's
  // count may be short and the set wrong: refuse, as for too broad a scope, rather than guess.
  if (ids.length > MAX_QUALIFYING_ACCOUNTS || (authors?.doc_count_error_upper_bound ?? 0) > 0) throw tooBroad();
  return ids.length === 0 ? { match_none: {} } : { terms: { id: ids } };
}

/**
 * The account facts a post's author copy holds exactly (niches, languages, country codes, type,
 * verification, ID, handle): every author field but the coarse counters and the metrics posts do
 * not keep (src/domain/volatile-facts.ts). Fanned out to the posts with the account's change, in
 * place when a `?wait=true` intake answers (docs/api-decisions.md).
 */
const EXACT_AUTHOR_COPIES: ReadonlySet<string> = new Set(
  Object.keys(FILTER_FIELDS.author).filter((f) => !VOLATILE_AUTHOR_FIELDS.has(f) && !ACCOUNT_ONLY_AUTHOR_FIELDS.has(f)),
);

/** `node` over the posts' author copies (`account.x` → `author.x`), when every leaf of it has one; else null. */
function onAuthorCopies(node: FilterNode): FilterNode | null {
  switch (node.kind) {
    case 'and':
    case 'or': {
      const children = node.children.map(onAuthorCopies);
      return children.every((c) => c !== null) ? { kind: node.kind, children: children } : null;
    }
    case 'not': {
      const child = onAuthorCopies(node.child);
      return child ? { kind: 'not', child } : null;
    }
    default: {
      const name = node.field.slice('account.'.length);
      return node.field.startsWith('account.') && EXACT_AUTHOR_COPIES.has(name)
        ? { ...node, field: `author.${name}` as const }
        : null;
    }
  }
}

/**
 * A posts scope narrowed by what the account filter says of its authors: the conjuncts of the
 * account filter that the posts' author copies answer exactly, as post conditions (the accounts
 * index still applies the whole filter to the page). The same accounts qualify among those the
 * search can return, and far fewer posts are counted: at 3M posts, "accounts in a niche with a
 * post of the last 30 days past 100 views" found more authors than one `terms` filter holds
 * (MAX_QUALIFYING_ACCOUNTS) when the niche was asked of the accounts only.
 */
export function narrowedScope(scope: PostsScope, accountFilter: FilterNode): PostsScope {
  const conjuncts = accountFilter.kind === 'and' ? accountFilter.children : [accountFilter];
  const pushed = conjuncts.map(onAuthorCopies).filter((c): c is FilterNode => c !== null);
  return pushed.length === 0
    ? scope
    : { ...scope, filter: and([...(isMatchAll(scope.filter) ? [] : [scope.filter]), ...pushed]) };
}

/** {@link qualifyingAccounts}, remembered per point in time. */
export type QualifyingAccounts = (pit: string, scope: PostsScope) => Promise<estypes.QueryDslQueryContainer>;

/**
 * {@link qualifyingAccounts} with memory: a point in time is a fixed snapshot, so one posts scope
 * on it always qualifies the same accounts. The next pages of a search, and other searches with
 * the same scope on this node's shared snapshot, reuse the set instead of aggregating over the
 * posts again (the aggregation is most of a posts-scoped search: ~15–30 ms of ~25–35 ms at 1M posts).
 * Bounded by the account ids held (~64 bytes each, so ~3 MiB at the default), a key (its point in
 * time and scope: a few hundred characters) counting as an id per 64 characters, so that many small
 * sets of distinct scopes cannot escape the bound either. Concurrent identical requests share one aggregation.
 */
export function createQualifyingAccounts(
  client: Client,
  options: { maxIds?: number; ttlMs?: number } = {},
): QualifyingAccounts {
  type Filter = estypes.QueryDslQueryContainer & object;
  // lru-cache's fetch() also makes concurrent misses on one key share a single aggregation, and
  // keeps nothing when it fails (a 422 for too broad a scope is asked again, not remembered).
  const held = new LRUCache<string, Filter, { pit: string; scope: PostsScope }>({
    // A set is asked again on a miss (one aggregation), so the memory is better spent elsewhere.
    maxSize: options.maxIds ?? 50_000,
    sizeCalculation: (filter, key) =>
      (filter.terms?.id && Array.isArray(filter.terms.id) ? filter.terms.id.length : 0) + Math.ceil(key.length / 64),
    ttl: options.ttlMs ?? 5 * 60_000,
    fetchMethod: (_key, _stale, { context }) => qualifyingAccounts(client, context.pit, context.scope),
  });
  return async (pit, scope) => (await held.fetch(`${pit}\n${JSON.stringify(scope)}`, { context: { pit, scope } }))!;
}
