/**
 * What a query the model cannot read is about, from what its best word matches are about.
 *
 * A query surely in another language ranks by its words alone (bench/relevance.md, "Queries the
 * model cannot read"): the English model's neighbours of "Meine Hautpflege-Routine" share word
 * pieces with it, not its subject. On a small corpus its words then find the few posts that say
 * "Hautpflege" and fill the page with posts on the generic "Routine". What the service knows of
 * every post in every language is what the pipeline classified it as (its `topics`): the posts
 * that carry most of the query's words are evidence of what it asks, and the posts classified as
 * they are, in the query's language first, follow them, above the hits on a minor word of it. The
 * classifications are the same IDs in every language, so the evidence crosses languages where the
 * model's vectors do not (bench/relevance.md, "Posts related to the words' best matches").
 */
import { byScoreThenId, type LexicalHit, type ScoredId, type TieredFusedId } from './fusion.ts';

/** A lexical hit with the classifications it carries: its topics, and its author's niches. */
export interface ClassifiedHit extends LexicalHit {
  topics: readonly string[];
  niches: readonly string[];
}

/** Each topic's share of the evidence, in (0, 1], the strong hits' authors' niches, and the hits it came from. */
export interface RelatedEvidence {
  topics: ReadonlyMap<string, number>;
  /** The niches of the strong hits' authors: a post related by its vector alone has an author in one (related-posts.ts). */
  niches: ReadonlySet<string>;
  /** The strong hits ({@link strongHits}): they rank above every related post. */
  sources: readonly string[];
}

/**
 * The share of the best hit's text score (above the lexical floor, as the fusion normalizes it) a
 * hit needs to be evidence of what the query asks: the midpoint between the best match and a
 * document BM25 did not retrieve, so a strong hit is nearer the best than to no match at all.
 */
export const STRONG_SHARE = 0.5;

/**
 * The hits that carry what the query asks: those whose text score reaches {@link STRONG_SHARE} of
 * the best's above the lexical floor (hits on exact entities always). BM25's own judgement, so
 * the strong hits are a prefix of its order: "Mi rutina de viajes" matched on "viajes" alone ranks
 * above "Mi rutina de entrenamiento" as BM25 ranks it (the words' information, 3.30 and 3.57 in a
 * small corpus, would have called the second the stronger).
 */
export function strongHits(hits: readonly LexicalHit[], lexicalFloor: number): Set<string> {
  const max = hits.reduce((m, h) => Math.max(m, h.score), -Infinity);
  const normalized = (h: LexicalHit) => (max > lexicalFloor ? (h.score - lexicalFloor) / (max - lexicalFloor) : 1);
  return new Set(hits.filter((h) => h.tier > 0 || normalized(h) >= STRONG_SHARE).map((h) => h.id));
}

/**
 * The topics of the strong hits ({@link strongHits}), each hit counting as much as its text score
 * stands above the lexical floor (the first unretrieved score, as the fusion normalizes it; all
 * alike when they tie): a topic every strong hit carries has share 1. The post's own topics, not
 * its author's niches: an author of two niches would bring the posts of the other (measured:
 * "Meine Ernährung-Routine" filled its page with German skincare posts). Strong hits whose
 * enrichment is pending carry no topic but are evidence still, by their vectors
 * (related-posts.ts). Null without a strong hit: nothing to relate to.
 */
export function relatedEvidence(hits: readonly ClassifiedHit[], lexicalFloor: number): RelatedEvidence | null {
  const sources = strongHits(hits, lexicalFloor);
  const strong = hits.filter((h) => sources.has(h.id));
  if (strong.length === 0) return null;
  const max = Math.max(...strong.map((h) => h.score));
  const weightOf = (h: ClassifiedHit) =>
    max > lexicalFloor ? Math.max(0, h.score - lexicalFloor) / (max - lexicalFloor) : 1;
  const total = strong.reduce((sum, h) => sum + weightOf(h), 0);
  if (total === 0) return null;
  const topics = new Map<string, number>();
  for (const h of strong) {
    const share = weightOf(h) / total;
    if (share > 0) for (const t of new Set(h.topics)) topics.set(t, (topics.get(t) ?? 0) + share);
  }
  return { topics, niches: new Set(strong.flatMap((h) => h.niches)), sources: [...sources] };
}

/**
 * The ranking of a query the model cannot read, with the posts related to its strong hits
 * ({@link relatedEvidence}; `related` in the order the engine ranked them: the query's language
 * first, then by the evidence they share): the strong hits in BM25 order, then the related posts,
 * then the hits on a minor part of the query in BM25 order. A weak hit that is also related ranks
 * with the related posts. Without related posts this is BM25's order.
 */
export function fuseRelated(
  lexical: readonly LexicalHit[],
  related: readonly ScoredId[],
  lexicalFloor: number,
): TieredFusedId[] {
  const strong = strongHits(lexical, lexicalFloor);
  const relatedScore = new Map(related.map((r, i) => [r.id, (related.length - i) / related.length] as const));
  const out = new Map<string, TieredFusedId & { band: number }>();
  for (const h of lexical) {
    const r = relatedScore.get(h.id) ?? null;
    const band = strong.has(h.id) ? 2 : r !== null ? 1 : 0;
    out.set(h.id, { id: h.id, score: band === 1 ? r! : h.score, lexical: h.score, semantic: r, tier: h.tier, band });
  }
  for (const r of related) {
    if (out.has(r.id)) continue;
    const score = relatedScore.get(r.id)!;
    out.set(r.id, { id: r.id, score, lexical: null, semantic: score, tier: 0, band: 1 });
  }
  return [...out.values()]
    .sort((a, b) => b.tier - a.tier || b.band - a.band || byScoreThenId(a, b))
    .map(({ band: _band, ...fused }) => fused);
}
