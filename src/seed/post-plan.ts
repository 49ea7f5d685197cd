import type { SeedAccount } from './accounts.ts';
import type { LanguagePack } from './language-pack.ts';
import type { CtaAction, NicheDef, TemplateArgs, TopicTuple } from './vocabulary.ts';

/**
 * What the post builder (posts.ts) decides for a post, kept so that its enrichment
 * (enrichment.ts) describes the same choices.
 */

/** A post format of the dataset. */
export type PostFormat = 'reel' | 'carousel' | 'image';

/** One media item as planned. */
export interface MediaPlan {
  id: string;
  type: 'image' | 'video';
  width: number;
  height: number;
  duration: number | null;
}

/** A commercial offer made in the post. */
export interface OfferPlan {
  kind: 'code' | 'sale' | 'giveaway' | 'freebie';
  pct: number;
  code: string;
  brand: string;
  extraTerm: string | null;
}

/** The choices behind one post, shared with its enrichment. */
export interface PostPlan {
  id: string;
  acc: SeedAccount;
  lang: LanguagePack;
  niche: NicheDef;
  topic: TopicTuple;
  args: TemplateArgs;
  format: PostFormat;
  hookIndex: number;
  hookText: string;
  narrativeIndex: number;
  ctas: CtaAction[];
  followFirst: boolean;
  offer: OfferPlan | null;
  sponsor: string | null;
  labelled: boolean;
  media: MediaPlan[];
  observedAt: number;
}
