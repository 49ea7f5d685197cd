import type { CtaAction } from './vocabulary.ts';

/**
 * The shape of a language pack of the demo dataset (languages.ts): English captions are built from
 * the richer templates of vocabulary.ts; the other languages use small packs, which keep the niche
 * vocabulary so that a post's language and topic stay coherent.
 */

/** A declared location, as in spec 2.2. */
export interface Place {
  country_code: string;
  region_code: string;
  locality: string;
}

/** Every line a caption, bio or transcript needs in one language. */
export interface LanguagePack {
  code: string;
  name: string;
  /** Share of accounts publishing primarily in this language. */
  weight: number;
  firstNames: readonly string[];
  lastNames: readonly string[];
  places: readonly Place[];
  /** Niche id → a short noun phrase for that niche. */
  niches: Readonly<Record<string, string>>;
  /** Hooks in four fixed slots: direct, curiosity gap, listicle, time promise. */
  hooks: readonly [(t: string) => string, (t: string) => string, (t: string) => string, (t: string) => string];
  bodies: readonly ((t: string, item: string) => string)[];
  spoken: readonly ((t: string, item: string) => string)[];
  ctas: Readonly<Record<CtaAction, (handle: string) => string>>;
  offer: (pct: number, code: string, brand: string) => string;
  partnership: (brand: string) => string;
  mention: (handle: string) => string;
  bio: (t: string, city: string) => string;
  tags: readonly string[];
}

/** Devices and English descriptions of the four hook slots of {@link LanguagePack.hooks}. */
export const HOOK_SLOTS: readonly { devices: readonly string[]; construction: (label: string) => string }[] = [
  { devices: ['direct_address'], construction: (l) => `Introduces the creator's own ${l} routine in the first line.` },
  { devices: ['curiosity_gap'], construction: (l) => `Promises an overlooked truth about ${l}.` },
  { devices: ['listicle_promise'], construction: (l) => `Promises three common ${l} mistakes to avoid.` },
  { devices: ['time_promise'], construction: (l) => `Promises to explain ${l} in sixty seconds.` },
];
