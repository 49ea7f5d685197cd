import type { Client, estypes } from '@elastic/elasticsearch';
import type { Suggestion, SuggestionKind } from '../../../contract/names.ts';
import { labelOf } from '../../../query/taxonomies.ts';
import type { NameSuggester } from '../../suggest.ts';
import { COMPLETE_RESULTS, engineCall, translateEngineError } from '../errors.ts';
import { NAME_SEPARATOR } from '../documents/projection.ts';

type Query = estypes.QueryDslQueryContainer;
type Search = estypes.SearchSearchRequestBody;

/** Lucene's regular-expression operators, escaped where a prefix must match literally. */
const REGEX_OPERATORS = /[.?+*|{}[\]()"\\#@&<>~^$-]/g;
const literal = (text: string) => text.replace(REGEX_OPERATORS, (ch) => `\\${ch}`);

/** Only account documents, servable and public: what account search may return (account-query.ts). */
const SEARCHABLE_ACCOUNTS: Query[] = [
  { exists: { field: 'handle_observed_at' } },
  { term: { servable: true } },
  { term: { is_private: false } },
];
const SERVABLE_POSTS: Query[] = [{ term: { servable: true } }];

/**
 * A classification ID whose label (its words, src/query/taxonomies.ts) has a word starting with
 * the prefix: `skin b` finds `skin_barrier_repair` and `dry_skin_basics`. The prefix's spaces are
 * the ID's separators.
 */
function idPattern(prefix: string): string {
  return `(.*[_\\-])?${prefix.split(' ').map(literal).join('[_\\-]+')}.*`;
}

/** The most counted values of one keyword field among `filter`'s records, whose values match `include`. */
function valueCounts(filter: Query[], field: string, match: Query, include: string, limit: number): Search {
  return {
    query: { bool: { filter: [...filter, match] } },
    size: 0,
    track_total_hits: false,
    aggs: {
      names: {
        terms: { field, include, size: limit, order: [{ _count: 'desc' }, { _key: 'asc' }] },
      },
    },
  };
}

/**
 * Typeahead on Elasticsearch, one multi-search per request, each kind a search of its own:
 *
 * - accounts: a `prefix` query on `name_keys` (the folded handle, display name and its later
 *   words, written by the worker), most followed first;
 * - hashtags and caption mentions: a `terms` aggregation over the servable posts carrying a name
 *   with the prefix, restricted to those names by an `include` pattern on the same field
 *   (`hashtag_names`: the folded name, U+001F, the name as the filters take it), most carried
 *   first: exact counts, as fresh as the index, with no dictionary to keep;
 * - topics and niches: the same over the classification IDs, matched by label words.
 *
 * Why this shape and what it costs at 1M posts: bench/suggest.md.
 */
export function createNameSuggester(deps: {
  client: Client;
  postsIndex: string;
  accountsIndex: string;
}): NameSuggester {
  const { client, postsIndex, accountsIndex } = deps;

  function searchOf(kind: SuggestionKind, prefix: string, limit: number): { index: string; body: Search } {
    switch (kind) {
      case 'account':
        return {
          index: accountsIndex,
          body: {
            query: { bool: { filter: [...SEARCHABLE_ACCOUNTS, { prefix: { name_keys: prefix } }] } },
            sort: [{ followers_count: { order: 'desc' } }, { id: 'asc' }],
            size: limit,
            _source: ['record.profile.v.handle', 'record.profile.v.display_name', 'record.profile.v.followers_count'],
            track_total_hits: false,
          },
        };
      case 'hashtag':
      case 'mention': {
        const field = kind === 'hashtag' ? 'hashtag_names' : 'mention_names';
        return {
          index: postsIndex,
          body: valueCounts(SERVABLE_POSTS, field, { prefix: { [field]: prefix } }, `${literal(prefix)}.*`, limit),
        };
      }
      case 'topic':
        return {
          index: postsIndex,
          body: valueCounts(
            SERVABLE_POSTS,
            'topics',
            { regexp: { topics: idPattern(prefix) } },
            idPattern(prefix),
            limit,
          ),
        };
      case 'niche':
        return {
          index: accountsIndex,
          body: valueCounts(
            SEARCHABLE_ACCOUNTS,
            'niches',
            { regexp: { niches: idPattern(prefix) } },
            idPattern(prefix),
            limit,
          ),
        };
    }
  }

  function suggestionsOf(kind: SuggestionKind, response: estypes.MsearchResponseItem<AccountSource>): Suggestion[] {
    if ('error' in response) throw translateEngineError(response.error);
    if (kind === 'account') {
      return response.hits.hits.flatMap((hit) => {
        const profile = hit._source?.record?.profile?.v;
        return profile
          ? [{ kind, value: `@${profile.handle}`, label: profile.display_name, count: profile.followers_count }]
          : [];
      });
    }
    // The client cannot type a multi-search's aggregations: `names` is the terms aggregation valueCounts asks.
    const buckets = (response.aggregations?.names as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
    return (Array.isArray(buckets) ? buckets : []).map((bucket) => {
      const key = String(bucket.key);
      switch (kind) {
        case 'hashtag':
        case 'mention': {
          const name = `${kind === 'hashtag' ? '#' : '@'}${key.slice(key.indexOf(NAME_SEPARATOR) + 1)}`;
          return { kind, value: name, label: name, count: bucket.doc_count };
        }
        default:
          return { kind, value: key, label: labelOf('classification', key), count: bucket.doc_count };
      }
    });
  }

  return {
    async suggest(prefix, kinds, limit) {
      if (prefix === '' || kinds.length === 0) return [];
      const searches = kinds.flatMap((kind): estypes.MsearchRequestItem[] => {
        const { index, body } = searchOf(kind, prefix, limit);
        return [{ index, ...COMPLETE_RESULTS }, body];
      });
      const response = await engineCall(() => client.msearch<AccountSource>({ searches }));
      return kinds.flatMap((kind, i) => suggestionsOf(kind, response.responses[i]!));
    },
  };
}

/** What an account suggestion reads of its record (`_source` filtering leaves the rest out). */
interface AccountSource {
  record?: { profile?: { v?: AccountFacts } };
}

interface AccountFacts {
  handle: string;
  display_name: string;
  followers_count: number;
}
