import type { estypes } from '@elastic/elasticsearch';
import type { PostSearch } from '../../../query/search-codec.ts';
import { isBareWord, queryEntities } from '../../../query/entities.ts';
import { withoutStopWords } from '../../../text/analysis.ts';
import { weightableTerms } from '../../../text/question-weights.ts';
import { analyzeIn, analyzeQuery, unspacedWords, withoutUnspaced } from '../../../text/languages.ts';
import { withEntities } from './entity-query.ts';
import { compileFilter, compileSort } from './filter-compiler.ts';

/**
 * Text fields searched by `post.query`, with their weights: the caption is what the creator wrote
 * and the enrichment text summarizes the whole post, so they weigh most; transcripts and on-screen
 * text are long and noisy; visual descriptions are machine-written, so they weigh least.
 */
export const POST_TEXT_FIELDS = ['caption^2', 'content_text^1.5', 'transcript_text', 'visible_text', 'visual_text^0.5'];

/** `caption^2` → `caption_stemmed^2`. */
function stemmedField(weighted: string): string {
  const [field, weight] = weighted.split('^');
  return weight ? `${field}_stemmed^${weight}` : `${field}_stemmed`;
}

/** The stemmed companions of {@link POST_TEXT_FIELDS}, with the same weights. */
export const POST_STEMMED_FIELDS = POST_TEXT_FIELDS.map(stemmedField);

/** What a post must satisfy to be a result, whatever the ranking: servable, and the filters. */
export function postSearchFilter(search: Pick<PostSearch, 'filter'>): estypes.QueryDslQueryContainer[] {
  const filter: estypes.QueryDslQueryContainer[] = [{ term: { servable: true } }];
  const compiled = compileFilter(search.filter, 'post');
  if (compiled && !('match_all' in compiled)) filter.push(compiled);
  return filter;
}

/**
 * What search responses read of each hit: the record without what summaries never render (the
 * vector, 2 KB; the per-media enrichment, often most of the record) — see SearchedPost. Excludes
 * only: `_source` holds nothing but `record` already, and an `includes` list is slower to filter
 * (bench/search.md, "Where the API's own time goes").
 */
export const SEARCH_SOURCE_EXCLUDES = ['record.embedding', 'record.media_enrichment'] as const;
export const SEARCH_SOURCE: estypes.SearchSourceConfig = { excludes: [...SEARCH_SOURCE_EXCLUDES] };

/** One side of the text match: the best field's score, so one long field cannot add up many weak matches. */
function bestField(query: string, fields: string[]): estypes.QueryDslQueryContainer {
  return { multi_match: { query, type: 'best_fields', fields } };
}

/**
 * The exact-wording side(s): the query's words minus stop words on the unstemmed fields, and the
 * words of its Japanese, Chinese or Thai runs (segmented by `Intl.Segmenter`), each as a phrase
 * there: the `standard` tokenizer indexes those scripts character by character, so only adjacency
 * keeps "自炊" from matching every post with 自 and 炊 apart (src/text/languages.ts).
 */
function exactSides(query: string): estypes.QueryDslQueryContainer[] {
  // Distinct words, at most 32: a 2,000-character Japanese query must not become 1,000 clauses.
  const cjk = [...new Set(unspacedWords(query))].slice(0, 32);
  const words = cjk.length > 0 ? withoutStopWords(withoutUnspaced(query)) : withoutStopWords(query);
  const sides: estypes.QueryDslQueryContainer[] = [];
  if (words.length > 0) sides.push(bestField(words, POST_TEXT_FIELDS));
  const phrase = (word: string) => ({
    multi_match: { query: word, type: 'phrase' as const, fields: POST_TEXT_FIELDS },
  });
  if (cjk.length > 0) sides.push(cjk.length === 1 ? phrase(cjk[0]!) : { bool: { should: cjk.map(phrase) } });
  return sides.length > 0 ? sides : [bestField(query, POST_TEXT_FIELDS)];
}

/**
 * One side of the text match with a weight per word: per field, each word's `match` at the field's
 * weight times the word's, the best field's score kept: the shape `best_fields` compiles to (a
 * `dis_max` of per-field disjunctions of the words), with a weight per word instead of one for all.
 */
function weightedBestField(
  words: readonly string[],
  weights: readonly number[],
  fields: readonly string[],
): estypes.QueryDslQueryContainer {
  return {
    dis_max: {
      queries: fields.map((weighted) => {
        const [field, fieldWeight] = weighted.split('^');
        return {
          bool: {
            should: words.map((word, i) => ({
              match: { [field!]: { query: word, boost: Number(fieldWeight ?? 1) * weights[i]! } },
            })),
          },
        };
      }),
    },
  };
}

/**
 * The text match of a question with weights per content word (src/text/question-weights.ts):
 * the exact and the stemmed side as for any query, each word at its weight. Null when the weights
 * do not fit the query's words (the query is then searched as any other).
 */
function weightedMatch(query: string, weights: readonly number[]): estypes.QueryDslQueryContainer | null {
  const words = weightableTerms(query);
  if (!words || words.length !== weights.length) return null;
  const stems = words.map((w) => analyzeIn(w, 'en'));
  const stemmed = words.flatMap((_, i) => (stems[i] ? [i] : []));
  return {
    dis_max: {
      queries: [
        weightedBestField(words, weights, POST_TEXT_FIELDS),
        weightedBestField(
          stemmed.map((i) => stems[i]!),
          stemmed.map((i) => weights[i]!),
          POST_STEMMED_FIELDS,
        ),
      ],
    },
  };
}

/**
 * The Elasticsearch query of a post search. User text only ever goes into `multi_match`, `match`
 * and, as exact entities, `term` queries (never query-string syntax). For a fused search,
 * `termWeights` (a question's: src/text/question-weights.ts) weigh its content words one by one.
 * The word probes a fused search reads back from its hits go in a post filter beside it
 * ({@link postSearchProbes}).
 *
 * The text match is the better of two sides: the unstemmed fields (exact wording) searched with
 * the query's words minus stop words, and their client-stemmed companions (other inflections).
 * Both choices keep Lucene's top-k pruning (block-max WAND) working, which is what makes long
 * natural-language queries affordable at a million posts: a stop word matches nearly every post,
 * and a sum or a tie-breaker anywhere in the tree makes the engine score every matching document
 * (bench/search.md, "Lexical query shape": ~5x faster at 1M with equal SciFact nDCG@10).
 */
export function postSearchQuery(
  search: PostSearch,
  options: { termWeights?: readonly number[] | null } = {},
): estypes.QueryDslQueryContainer {
  const filter = postSearchFilter(search);
  if (search.query === null) return { bool: { filter } };
  const entities = queryEntities(search.query);
  const weighted = options.termWeights ? weightedMatch(search.query, options.termWeights) : null;
  if (weighted) return withEntities(weighted, filter, entities);
  // Its words without function words ("how do I", "what", "get"), unless that is all it has
  // (src/text/function-words.ts); a query of stop words only ("to be or not to be") still
  // searches for its words, unstemmed.
  const { content, stemmed } = analyzeQuery(search.query);
  const sides = exactSides(content);
  // Stemmed for the query's language (src/text/languages.ts), as the documents were.
  if (stemmed.length > 0) sides.push(bestField(stemmed, POST_STEMMED_FIELDS));
  const match = sides.length === 1 ? sides[0]! : { dis_max: { queries: sides } };
  return withEntities(match, filter, entities);
}

/**
 * The post filter that carries a search's word probes (query-terms.ts: clauses of no weight whose
 * names the hits' `matched_queries` report), or none: a query with entities ranks by them instead.
 * It matches every document, so the hits are the query's own. Why a post filter and not clauses of
 * the query: any clause beside the text match, even of no weight, makes the engine score every
 * document that matches (no top-k pruning); at 1M posts that made a hybrid search's lexical window
 * 283 ms instead of ~40 (2026-11-30, bench/scaling.md). The engine evaluates the post filter for
 * the documents the query collects, and names the probes for the hits it returns.
 */
export function postSearchProbes(
  search: PostSearch,
  probes: readonly estypes.QueryDslQueryContainer[],
): estypes.QueryDslQueryContainer | undefined {
  if (search.query === null || probes.length === 0) return undefined;
  if (queryEntities(search.query).length > 0 && !isBareWord(search.query)) return undefined;
  return { bool: { should: [{ match_all: {} }, ...probes] } };
}

/** Relevance order with a query; else the requested sort, newest first by default. Both end with `id`. */
export function postSearchSort(search: PostSearch): estypes.SortCombinations[] {
  if (search.query !== null) return [{ _score: { order: 'desc' } }, { id: 'asc' }];
  return compileSort(search.sort ?? { field: 'post.posted_at', order: 'desc' }, 'post');
}
