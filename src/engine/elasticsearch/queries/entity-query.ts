import type { estypes } from '@elastic/elasticsearch';
import type { QueryEntity } from '../../../query/entities.ts';

/**
 * The exact-entity clauses of a post search (src/query/entities.ts): each entity matches on its
 * own field and adds {@link ENTITY_TIER} to the score, so a post carrying more of the query's
 * entities ranks above every post carrying fewer, whatever their text scores (a BM25 text score
 * stays far below 10,000). Each clause is named, so fused search reads the tier from the hit's
 * `matched_queries` and the text score as the rest.
 */

/** What one exact entity adds to a lexical score. */
export const ENTITY_TIER = 10_000;
const NAME_PREFIX = 'entity:';
/** The unstemmed text fields a quoted phrase is looked for in. */
const PHRASE_FIELDS = ['caption', 'content_text', 'transcript_text', 'visible_text', 'visual_text'];

function clause(entity: QueryEntity): estypes.QueryDslQueryContainer {
  switch (entity.kind) {
    case 'hashtag':
      return { term: { hashtags: entity.value } };
    case 'handle':
      // Mentioned in the caption, or the author.
      return { bool: { should: [{ term: { mentions: entity.value } }, { term: { 'author.handle': entity.value } }] } };
    case 'phrase':
      return { multi_match: { query: entity.value, type: 'phrase', fields: PHRASE_FIELDS } };
  }
}

/**
 * The text match widened by the entities: a post matches by its text or by carrying an entity
 * (a post tagged `#debtpayoff` by its `hashtags` field alone is still found), and each entity it
 * carries lifts it by one tier. Without entities the text match is returned unchanged.
 */
export function withEntities(
  match: estypes.QueryDslQueryContainer,
  filter: estypes.QueryDslQueryContainer[],
  entities: readonly QueryEntity[],
): estypes.QueryDslQueryContainer {
  if (entities.length === 0) return { bool: { filter, must: [match] } };
  const tiers = entities.map((e, i) => ({
    constant_score: { filter: clause(e), boost: ENTITY_TIER, _name: `${NAME_PREFIX}${i}` },
  }));
  return { bool: { filter, should: [match, ...tiers], minimum_should_match: 1 } };
}

/** How many of the query's entities a hit carries, from its `matched_queries`. */
export function entityTier(hit: { matched_queries?: string[] | Record<string, number> }): number {
  const matched = hit.matched_queries;
  if (!matched) return 0;
  const names = Array.isArray(matched) ? matched : Object.keys(matched);
  return names.filter((n) => n.startsWith(NAME_PREFIX)).length;
}
