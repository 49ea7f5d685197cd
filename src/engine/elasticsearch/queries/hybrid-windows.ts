import type { estypes } from '@elastic/elasticsearch';
import { fuseHybrid, type HybridOptions, type TieredFusedId } from '../../../query/fusion.ts';
import { fuseRelated, relatedEvidence, type RelatedEvidence } from '../../../query/related-evidence.ts';
import { hitClassifications } from './related-query.ts';
import { ENTITY_TIER, entityTier } from './entity-query.ts';
import { hitWords, hitWordScores } from './query-terms.ts';
import { coverageOf, specificInformation, specificScore } from '../../../query/term-information.ts';

type Hit = Pick<estypes.SearchHit, '_id' | '_score' | 'matched_queries' | 'fields'>;

/**
 * Weight of the lexical side: equal trust (bench/relevance.md, "Fusion: why min–max convex
 * combination at equal weights").
 */
const LEXICAL_WEIGHT = 0.5;
/**
 * When the model cannot read the query (src/text/languages.ts: a language other than English,
 * surely detected), its similarities measure surface overlap of word pieces, which BM25 measures
 * better: they are no evidence (`semanticEvidence: false`, so neighbours alone are not returned)
 * and do not re-order what BM25 matched; the page is BM25's (with the entity tiers). 1 follows
 * from the argument; other weights measured within noise (bench/relevance.md, "Queries the model cannot read").
 */
const UNREADABLE_LEXICAL_WEIGHT = 1;

/** Elasticsearch's kNN score for `cosine` similarity is (1 + cos) / 2: the cosine of a score. */
export const cosineOf = (score: number) => 2 * score - 1;

/**
 * The floor a query's neighbours answer under: the sentence floor when its vector was read as a
 * sentence, and the unmatched floor when no post carries a word of it.
 */
function floorOf(settings: {
  similarityFloor: number | null;
  unmatchedFloor?: number | null;
  unmatched?: boolean;
  sentenceFloor?: number | null;
  sentence?: boolean;
}): number | null {
  const { unmatchedFloor } = settings;
  const similarityFloor =
    settings.sentence === true && settings.sentenceFloor !== undefined
      ? settings.sentenceFloor
      : settings.similarityFloor;
  if (settings.unmatched !== true || unmatchedFloor === undefined || unmatchedFloor === null) return similarityFloor;
  return similarityFloor === null ? unmatchedFloor : Math.max(similarityFloor, unmatchedFloor);
}

/**
 * Turns the engine's two windows into the fusion's inputs (src/query/fusion.ts, fuseHybrid):
 * entity tiers from the hits' `matched_queries` (entity-query.ts) with the text score as the
 * rest, the share of the query's information each lexical hit carries (its named word probes,
 * query-terms.ts; each word weighed by how specific the subjects of the hits carrying it are, their
 * authors' niches), the lexical floor from the hit just past the window, cosine similarities from
 * the kNN scores, and the relevance floor.
 */
export function hybridWindows(settings: {
  mode: 'hybrid' | 'semantic';
  /** Hits per side; the lexical list may hold one more (the floor). */
  window: number;
  similarityFloor: number | null;
  /**
   * The floor instead, for a query none of whose words any post carries (`unmatched`, query-terms.ts):
   * neighbours are then all the evidence there is, and a model whose cosines sit in a narrow band
   * gives nonsense neighbours as near as a real query's weaker ones (bench/relevance.md, "Other
   * models"). Never below `similarityFloor`; absent: `similarityFloor`.
   */
  unmatchedFloor?: number | null;
  /** Whether no post carries a word of the query (LexicalPlan.unmatched). */
  unmatched?: boolean;
  /**
   * The floor instead for a query vector read as a sentence (a question: src/text/question-weights.ts),
   * whose cosines sit a little higher (src/embedding/model-floors.ts); absent: `similarityFloor`.
   */
  sentenceFloor?: number | null;
  /** Whether the query vector was read as a sentence (FusedRanking.sentence). */
  sentence?: boolean;
  /** Whether the model reads the query's language (src/text/languages.ts, analyzeQuery). */
  semanticReadable: boolean;
  /** Each content word's information (query-terms.ts), when the lexical hits carry word probes; absent: none. */
  information?: readonly number[] | null;
  /**
   * Whether the semantic hits are the posts related to the strong word matches of a query the
   * model cannot read (src/query/related-evidence.ts), not its neighbours: the lexical hits then
   * carry their classifications (related-posts.ts), and the related posts are all shown.
   */
  related?: boolean;
}) {
  const information = settings.information ?? null;
  const hybrid = settings.mode === 'hybrid';
  // Semantic-only ranking was asked for: its neighbours are the evidence, under the floor.
  const semanticEvidence = hybrid ? settings.semanticReadable : true;
  const similarityFloor = floorOf(settings);
  const passes = (hit: Hit) => similarityFloor === null || cosineOf(hit._score ?? 0) >= similarityFloor;
  const textScore = (hit: Hit) => (hit._score ?? 0) - ENTITY_TIER * entityTier(hit);
  // Only for a query the model cannot read: one it reads has its neighbours.
  const related = settings.related === true && !settings.semanticReadable;

  /** The lexical window as the fusion reads it, and its floor. */
  const lexicalSide = (lexicalHits: readonly Hit[]) => {
    const lexical = hybrid ? lexicalHits.slice(0, settings.window) : [];
    const past = hybrid ? lexicalHits[settings.window] : undefined;
    const words = lexical.map(hitWords);
    // The words' information as specific as the subjects of the hits carrying them (term-information.ts).
    const weighed = information
      ? specificInformation(
          information,
          lexical.map((h, i) => ({ words: words[i]!, classes: hitClassifications(h).niches })),
        )
      : null;
    // A query the model cannot read ranks by its words alone (its window's order is the page's):
    // each hit keeps the share of its text score its words keep once weighed by their subjects.
    const specific = (h: Hit) =>
      related && weighed && information
        ? specificScore(textScore(h), hitWordScores(h), information, weighed)
        : textScore(h);
    const scored = lexical.map((h, i) => ({
      id: h._id!,
      score: specific(h),
      tier: entityTier(h),
      ...(weighed ? { coverage: coverageOf(weighed, words[i]!) } : {}),
    }));
    // Entity tiers order by total score, so the hit past the window may out-score (by text) a
    // hit of a higher tier in it: the floor never rises above the window's own lowest text score.
    const lowest = scored.reduce((min, h) => Math.min(min, h.score), Infinity);
    // The best unretrieved document's text score, or BM25's floor when none matched past the window.
    return { lexical, scored, floor: past ? Math.max(0, Math.min(specific(past), lowest)) : 0 };
  };

  return {
    /** What the related posts are related to: the strong lexical hits' classifications (null: none). */
    evidence(lexicalHits: readonly Hit[]): RelatedEvidence | null {
      const { lexical, scored, floor } = lexicalSide(lexicalHits);
      return relatedEvidence(
        scored.map((h, i) => ({ ...h, ...hitClassifications(lexical[i]!) })),
        floor,
      );
    },
    fuse(lexicalHits: readonly Hit[], semanticHits: readonly Hit[]): TieredFusedId[] {
      const { scored, floor } = lexicalSide(lexicalHits);
      if (hybrid && related)
        return fuseRelated(
          scored,
          semanticHits.map((h) => ({ id: h._id!, score: h._score ?? 0 })),
          floor,
        );
      const options: HybridOptions = {
        lexicalWeight: !hybrid ? 0 : semanticEvidence ? LEXICAL_WEIGHT : UNREADABLE_LEXICAL_WEIGHT,
        similarityFloor,
        semanticEvidence,
        lexicalFloor: floor,
      };
      return fuseHybrid(
        scored,
        semanticHits.map((h) => ({ id: h._id!, score: h._score ?? 0, cosine: cosineOf(h._score ?? 0) })),
        options,
      );
    },
    /** The neighbours a fused window can show: those above the floor, when they count as evidence. */
    shownNeighbours(semanticHits: readonly Hit[]): string[] {
      if (hybrid && related) return semanticHits.map((h) => h._id!);
      return semanticEvidence ? semanticHits.filter(passes).map((h) => h._id!) : [];
    },
  };
}
