/** The shape of the demo dataset's niche catalog (src/seed/niches-*.ts). */

/** `[classification id, English phrase, detail fragment]` of one topic. */
export type TopicTuple = readonly [id: string, phrase: string, detail: string];

/** One niche: what its creators talk about, in words reused across captions and enrichments. */
export interface NicheDef {
  id: string;
  /** Relative popularity among accounts. */
  weight: number;
  label: string;
  category: string;
  creators: readonly string[];
  handleWords: readonly string[];
  /** Niches that plausibly co-occur on one account. */
  related: readonly string[];
  topics: readonly TopicTuple[];
  items: readonly string[];
  pains: readonly string[];
  brands: readonly string[];
  hashtags: readonly string[];
  visuals: readonly string[];
  onScreen: readonly string[];
}
