import { HOBBY_NICHES } from './niches-hobbies.ts';
import { LIFESTYLE_NICHES } from './niches-lifestyle.ts';
import type { NicheDef } from './niche.ts';

export type { NicheDef, TopicTuple } from './niche.ts';

/**
 * Shared vocabulary of the demo dataset: the niche catalog and the English building blocks of
 * captions and enrichments. Classification IDs follow the spec's examples (`visit_profile_link`,
 * `opening`, `discount`, …) and extend them additively, as spec §9 allows.
 */

/** Every niche, lifestyle first. */
export const NICHES: readonly NicheDef[] = [...LIFESTYLE_NICHES, ...HOBBY_NICHES];
/** Niche weights aligned with {@link NICHES}, for weighted picks. */
export const NICHE_WEIGHTS: readonly number[] = NICHES.map((n) => n.weight);
/** Niche by id. */
export const NICHE_BY_ID: ReadonlyMap<string, NicheDef> = new Map(NICHES.map((n) => [n.id, n]));

/** Arguments every English template receives. */
export interface TemplateArgs {
  phrase: string;
  item: string;
  pain: string;
  n: number;
}

/** A caption hook with the enrichment that describes it. */
export interface HookTemplate {
  render: (a: TemplateArgs) => string;
  construction: (a: TemplateArgs) => string;
  devices: readonly string[];
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** English hooks; the first line of a caption and the first spoken line of a reel. */
export const EN_HOOKS: readonly HookTemplate[] = [
  {
    render: (a) => `My ${a.phrase} ✨`,
    devices: ['direct_address'],
    construction: (a) => `Names the ${a.phrase} up front over the first shot.`,
  },
  {
    render: (a) => `${a.n} things I wish I knew about ${a.phrase}`,
    devices: ['listicle_promise', 'curiosity_gap'],
    construction: (a) => `Promises ${a.n} lessons about the ${a.phrase} the viewer has not learned yet.`,
  },
  {
    render: (a) => `Stop scrolling if you deal with ${a.pain}`,
    devices: ['pattern_interrupt', 'relatable_pain_point'],
    construction: (a) => `Interrupts the scroll by calling out ${a.pain}.`,
  },
  {
    render: (a) => `The ${a.phrase} that finally worked for me`,
    devices: ['personal_testimony', 'bold_claim'],
    construction: (a) => `Claims a personal breakthrough with ${a.phrase}.`,
  },
  {
    render: (a) => `Are you making these mistakes with ${a.phrase}?`,
    devices: ['question', 'curiosity_gap'],
    construction: (a) => `Asks whether the viewer makes common mistakes with ${a.phrase}.`,
  },
  {
    render: (a) => `POV: you finally fixed ${a.pain}`,
    devices: ['pov_framing', 'relatable_pain_point'],
    construction: (a) => `Frames the video as the moment the viewer solves ${a.pain}.`,
  },
  {
    render: (a) => `Trying the viral ${a.item} so you don't have to`,
    devices: ['trend_reference', 'curiosity_gap'],
    construction: (a) => `Tests a viral ${a.item} and withholds the verdict.`,
  },
  {
    render: (a) => `${cap(a.phrase)} in under 60 seconds ⏱️`,
    devices: ['time_promise'],
    construction: (a) => `Promises to cover ${a.phrase} in under a minute.`,
  },
  {
    render: (a) => `Is the ${a.item} hype actually worth it?`,
    devices: ['question'],
    construction: (a) => `Opens with a direct question about whether the ${a.item} is worth buying.`,
  },
  {
    render: (a) => `Nobody talks about this part of ${a.phrase}`,
    devices: ['curiosity_gap', 'contrarian_take'],
    construction: (a) => `Teases an overlooked detail of ${a.phrase}.`,
  },
];

/** English body sentences that follow the hook; `detail` is the topic's detail fragment. */
export const EN_BODIES: readonly ((detail: string, a: TemplateArgs) => string)[] = [
  (d) => `It comes down to ${d}.`,
  (d, a) => `Here's my ${a.phrase}: ${d}.`,
  (d, a) => `After months of trial and error: ${d}. The ${a.item} made the biggest difference.`,
  (d) => `What works for me is ${d}.`,
  (d, a) => `If you struggle with ${a.pain}, try ${d}.`,
];

/** Optional personal asides that make captions less templated. */
export const EN_ASIDES: readonly string[] = [
  "I've been doing this for 3 months and the difference is real.",
  'This took me years to figure out.',
  'Tell me yours in the comments 👇',
  'Not sponsored, just obsessed.',
  'Part 2 coming this week!',
  'Honestly wish someone told me sooner.',
  'Which one are you trying first?',
];

/** Calls-to-action: platform action IDs. `use_promo_code` only accompanies an offer. */
export type CtaAction = 'save_post' | 'visit_profile_link' | 'follow_account' | 'comment_keyword' | 'share_post';
/** The call-to-action IDs a caption may end with. */
export const CTA_ACTIONS: readonly CtaAction[] = [
  'save_post',
  'visit_profile_link',
  'follow_account',
  'comment_keyword',
  'share_post',
];

/** English call-to-action lines and their enrichment summaries. */
export const EN_CTAS: Readonly<
  Record<CtaAction, { line: (handle: string, label: string) => string; summary: (label: string) => string }>
> = {
  save_post: { line: () => 'Save this for later 📌', summary: () => 'Asks viewers to save the post for later' },
  visit_profile_link: {
    line: () => 'Full details at the link in bio 🔗',
    summary: (l) => `Points viewers to the profile link for the full ${l} guide`,
  },
  follow_account: {
    line: (h, l) => `Follow @${h} for more ${l} tips`,
    summary: (l) => `Asks viewers to follow the account for more ${l} content`,
  },
  comment_keyword: {
    line: () => 'Comment "LIST" and I\'ll send you everything I used',
    summary: () => 'Invites viewers to comment a keyword to receive the full list',
  },
  share_post: {
    line: () => 'Send this to a friend who needs it',
    summary: () => 'Asks viewers to share the post with a friend',
  },
};

/** Creative formats by post format; a niche may add its own (see {@link NICHE_FORMATS}). */
export const CREATIVE_FORMATS: Readonly<Record<string, readonly string[]>> = {
  reel: [
    'talking_head',
    'tutorial',
    'voiceover_broll',
    'get_ready_with_me',
    'day_in_the_life',
    'product_review',
    'green_screen',
    'before_after',
  ],
  carousel: ['infographic_slides', 'photo_dump', 'step_by_step_slides', 'before_after', 'listicle', 'product_roundup'],
  image: ['single_photo', 'quote_graphic', 'product_shot'],
};

/** Format IDs characteristic of a niche. */
export const NICHE_FORMATS: Readonly<Record<string, string>> = {
  home_cooking: 'recipe_walkthrough',
  tech_reviews: 'unboxing',
  gaming: 'gameplay_clip',
  fitness: 'workout_demo',
  travel: 'travel_vlog',
  diy_crafts: 'time_lapse',
  fashion: 'outfit_lookbook',
  music_production: 'screen_recording',
  beauty: 'makeup_tutorial',
  pets: 'pet_clip',
};

/** Narrative patterns with a description template. */
export const NARRATIVES: readonly { patterns: readonly string[]; describe: (a: TemplateArgs) => string }[] = [
  {
    patterns: ['problem_solution'],
    describe: (a) => `Names the problem (${a.pain}), then presents the ${a.phrase} as the fix.`,
  },
  { patterns: ['step_by_step'], describe: (a) => `Walks through the ${a.phrase} one step at a time.` },
  { patterns: ['before_after'], describe: (a) => `Contrasts the situation before and after adopting the ${a.phrase}.` },
  { patterns: ['listicle'], describe: (a) => `Lists ${a.n} tips about ${a.phrase} in quick succession.` },
  {
    patterns: ['story_arc', 'personal_story'],
    describe: (a) => `Tells a personal story of struggling with ${a.pain} and what changed.`,
  },
  { patterns: ['myth_busting'], describe: (a) => `Debunks common myths about ${a.phrase} one by one.` },
  {
    patterns: ['comparison'],
    describe: (a) => `Compares options side by side, ending with a verdict on the ${a.item}.`,
  },
];

/** Proof templates: summary, mechanisms and cited source types. */
export const PROOFS: readonly {
  summary: (a: TemplateArgs, creator: string) => string;
  mechanisms: readonly string[];
  cited: readonly string[];
}[] = [
  {
    summary: (a) => `Shows results after ${a.n} weeks of following the ${a.phrase}`,
    mechanisms: ['before_after_comparison', 'demonstration'],
    cited: ['personal_results'],
  },
  {
    summary: (_a, c) => `Speaker introduces themselves as a ${c}`,
    mechanisms: ['expert_credential'],
    cited: ['expert'],
  },
  { summary: (a) => `Cites a study on the ${a.item}`, mechanisms: ['statistic'], cited: ['scientific_study'] },
  { summary: (a) => `Shares personal experience using the ${a.item}`, mechanisms: ['personal_experience'], cited: [] },
  {
    summary: (a) => `Quotes follower reviews of the ${a.item}`,
    mechanisms: ['testimonial'],
    cited: ['customer_review'],
  },
  { summary: (a) => `Demonstrates the ${a.item} on camera`, mechanisms: ['demonstration'], cited: [] },
];

/** Discount percentages seen in offers. */
export const DISCOUNTS: readonly number[] = [10, 15, 15, 20, 20, 20, 25, 30, 40];

/** Extra stated terms appended to some offers. */
export const OFFER_TERMS: readonly string[] = [
  'first order only',
  'ends Sunday',
  'while supplies last',
  'free shipping over $50',
  'US and Canada only',
  'new customers only',
];

/** Pieces of the music catalog; tracks are combinations, so a small list yields many titles. */
export const MUSIC_WORDS = {
  first: [
    'Golden',
    'Midnight',
    'Neon',
    'Summer',
    'Velvet',
    'Paper',
    'Electric',
    'Slow',
    'Ocean',
    'Wild',
    'Sugar',
    'Silver',
  ],
  second: [
    'Hour',
    'Drive',
    'Hearts',
    'Skies',
    'Motion',
    'Dreams',
    'Lights',
    'Waves',
    'Days',
    'Fever',
    'Bloom',
    'Echoes',
  ],
  artists: [
    'Luna Vale',
    'The Parkers',
    'DJ Koa',
    'Mira Sol',
    'Northbound',
    'Juno Rae',
    'Kai & The Tides',
    'Sable',
    'Orla Fenn',
    'Los Brillantes',
    'Nova Kid',
    'Hana Mori',
  ],
} as const;

/** Generic hashtags added next to niche tags, by language. */
export const GENERIC_TAGS: readonly string[] = ['fyp', 'explore', 'tips', 'howto', 'reels', 'viral', 'inspo'];
