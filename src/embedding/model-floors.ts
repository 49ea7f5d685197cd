import type { Config } from '../internal/config.ts';
import { planEmbedder, type EmbeddingConfig } from './model-plan.ts';

/**
 * The relevance floors follow the model: a cosine means something else to each (all-MiniLM-L6-v2's
 * relevant posts sit at 0.18–0.39 from their queries, bge-small-en-v1.5's at 0.54–0.66), so each
 * model known here has the floors its evaluation set for it, and the configuration overrides them.
 */

/** The floors a deployment searches under (null: none). */
export interface RelevanceFloors {
  /** A post only the vectors found needs this cosine (search, counts, facets, saved searches). */
  similarity: number | null;
  /** The same for a query no post has a content word of (hybrid-windows.ts); absent: `similarity`. */
  unmatched?: number | null;
  /**
   * The same for a question's vector, which its weighing run reads as a sentence (Prompts.sentence,
   * src/text/question-weights.ts); absent: `similarity` (the model reads a sentence as any query).
   */
  sentence?: number | null;
  /**
   * The least cosine between a post and the mean vector of a query's strong word matches for the
   * post to be related to them by its vector (related-posts.ts); absent: only the posts on their
   * topics are. The model's own, never configured: it measures posts against posts.
   */
  related?: number;
  /** Where they come from: the configuration, the model's calibration, or the default of a model not calibrated here. */
  source: 'configured' | `calibrated for ${string}` | 'the default: no calibration for this model';
}

interface Calibration {
  similarity: number;
  unmatched?: number;
  /** How much higher the floor of a vector read as a sentence sits (RelevanceFloors.sentence). */
  sentenceRaise?: number;
  /** RelevanceFloors.related. */
  related?: number;
}

/**
 * Floors per model, by the name its vectors are tagged with (the model folder's name):
 *
 * - all-MiniLM-L6-v2: 0.3, at SciFact's 2nd percentile of relevant cosines and above the
 *   social set's nonsense's nearest posts (bench/relevance.md, "The similarity floor: calibration").
 * - bge-small-en-v1.5: 0.55, at its 2nd percentile of relevant cosines on the social set (0.548),
 *   and 0.7 for a query no post has a word of, above every nonsense query's nearest post (0.666) by
 *   the fade band: no one floor tells its nonsense from its relevant posts (bench/relevance.md,
 *   "Other models"). A question read as a sentence, without the instruction for short queries, is
 *   nearer to every post, off topic more than on: 0.56 is the least floor at which the posts above
 *   it are as often on topic as a prompted question's above 0.55 (seed 5's tuning and development
 *   questions: 0.558; bench/relevance.md, "The floor of a question read as a sentence").
 * - `related`, posts against posts: the 98th percentile of the cosines between posts of different
 *   niches in the same language other than English (bge-small-en-v1.5 0.761–0.773 on three demo
 *   corpora, all-MiniLM-L6-v2 0.512; bench/relevance.md, "Posts near the words' best matches").
 */
const CALIBRATED: Readonly<Record<string, Calibration>> = {
  'all-MiniLM-L6-v2': { similarity: 0.3, related: 0.51 },
  'bge-small-en-v1.5': { similarity: 0.55, unmatched: 0.7, sentenceRaise: 0.01, related: 0.77 },
};

/** The floor of a model this table does not know: all-MiniLM-L6-v2's. */
export const DEFAULT_SIMILARITY_FLOOR = 0.3;

/** A configured floor: -1 (no cosine is lower) turns it off. */
const floorOf = (value: number): number | null => (value > -1 ? value : null);

/** The model's name as its vectors are tagged (`all-MiniLM-L6-v2@q8`, a hub id's last part), or null without one. */
export function modelName(config: EmbeddingConfig): string | null {
  const plan = planEmbedder(config);
  if (plan.kind === 'off' || plan.modelId === null) return null;
  return plan.modelId.split('@')[0]!.split('/').at(-1)!;
}

/**
 * The floors of a deployment: SEARCH_SIMILARITY_FLOOR and SEARCH_SIMILARITY_FLOOR_UNMATCHED when
 * set, else its model's calibration, else {@link DEFAULT_SIMILARITY_FLOOR}.
 */
export function relevanceFloors(
  config: Pick<Config, 'SEARCH_SIMILARITY_FLOOR' | 'SEARCH_SIMILARITY_FLOOR_UNMATCHED'> & EmbeddingConfig,
): RelevanceFloors {
  const name = modelName(config);
  const calibration = name === null ? undefined : CALIBRATED[name];
  const similarity = config.SEARCH_SIMILARITY_FLOOR ?? calibration?.similarity ?? DEFAULT_SIMILARITY_FLOOR;
  const unmatched = config.SEARCH_SIMILARITY_FLOOR_UNMATCHED ?? calibration?.unmatched;
  const configured =
    config.SEARCH_SIMILARITY_FLOOR !== undefined &&
    (config.SEARCH_SIMILARITY_FLOOR_UNMATCHED !== undefined || calibration?.unmatched === undefined);
  const raise = calibration?.sentenceRaise;
  const sentence =
    floorOf(similarity) === null || raise === undefined ? null : Math.round((similarity + raise) * 1000) / 1000;
  return {
    similarity: floorOf(similarity),
    ...(unmatched !== undefined && { unmatched: floorOf(unmatched) }),
    // A configured floor is raised as much: the raise is the reading's, not the floor's.
    ...(raise !== undefined && { sentence }),
    ...(calibration?.related !== undefined && { related: calibration.related }),
    source: configured
      ? 'configured'
      : calibration
        ? `calibrated for ${name}`
        : 'the default: no calibration for this model',
  };
}
