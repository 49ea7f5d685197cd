/** Observation builders with realistic defaults; tests override what they assert on. */

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export const T0 = '2026-06-01T10:00:00Z';
/** `T0` plus `minutes`, as an ISO UTC timestamp. */
export function at(minutes: number, base = T0): string {
  return new Date(Date.parse(base) + minutes * 60_000).toISOString();
}

export function accountObs(overrides: Record<string, unknown> = {}) {
  const platformId = (overrides.platform_id as string) ?? `acc${unique()}`;
  const handle = (overrides.handle as string) ?? `handle_${platformId}`;
  return {
    kind: 'account',
    platform_id: platformId,
    status: 'active',
    observed_at: T0,
    handle,
    display_name: `Display ${handle}`,
    web_url: `https://social.example/${handle}`,
    avatar_source_url: `https://cdn.social.example/avatars/${platformId}.jpg`,
    biography: 'Skincare routines and honest reviews.',
    bio_links: [{ url: 'https://shop.example/maya', title: 'Shop' }],
    account_type: 'creator',
    category_label: 'Beauty',
    declared_locations: [{ country_code: 'US', region_code: 'US-CA', locality: 'Los Angeles' }],
    is_verified: false,
    is_private: false,
    followers_count: 12_000,
    following_count: 300,
    posts_count: 420,
    ...overrides,
  };
}

export function postObs(authorPlatformId: string, overrides: Record<string, unknown> = {}) {
  const platformId = (overrides.platform_id as string) ?? `post${unique()}`;
  const shortcode = (overrides.shortcode as string) ?? `SC${platformId}`;
  return {
    kind: 'post',
    platform_id: platformId,
    status: 'available',
    observed_at: T0,
    shortcode,
    web_url: `https://social.example/p/${shortcode}`,
    author_platform_id: authorPlatformId,
    coauthor_platform_ids: [],
    posted_at: '2026-05-30T18:00:00Z',
    format: 'reel',
    caption: 'My night-time skincare routine #skincare #NightRoutine',
    caption_mentions: [],
    comments_enabled: true,
    views: 10_000,
    likes: 900,
    comments: 100,
    audio: null,
    media: [
      {
        platform_id: `${platformId}-m1`,
        type: 'video',
        width: 1080,
        height: 1920,
        source_url: `https://cdn.social.example/media/${platformId}-m1.mp4`,
        duration_seconds: 31.5,
        thumbnail_source_url: `https://cdn.social.example/media/${platformId}-m1.jpg`,
      },
    ],
    ...overrides,
  };
}

export function postEnrichmentObs(postPlatformId: string, overrides: Record<string, unknown> = {}) {
  return {
    kind: 'post_enrichment',
    post_platform_id: postPlatformId,
    produced_at: T0,
    primary_language: 'en',
    content_summary: 'A creator walks through a night-time skincare routine and shares a discount code.',
    topics: ['night_skincare_routine'],
    creative_formats: ['tutorial'],
    hook: { construction: 'Opens on the finished look', devices: ['reveal'], modalities: ['visual', 'spoken'] },
    key_messages: [{ summary: 'Double cleanse first', roles: ['instruction'], presentation: 'asserted' }],
    proofs: [],
    offers: [{ summary: '20% off with code MAYA20', types: ['discount', 'promo_code'], stated_terms: ['20% off'] }],
    calls_to_action: [
      { summary: 'Tap the link in bio', actions: ['visit_profile_link'], stages: ['closing'], modalities: ['spoken'] },
    ],
    narrative_structure: { description: 'Step-by-step tutorial', patterns: ['tutorial'] },
    has_paid_partnership_label: false,
    paid_partners: [],
    commercial_contexts: ['affiliate'],
    ...overrides,
  };
}

/**
 * A post's enrichment that classifies it (its language, its topics) and says nothing else a
 * search could match: no summary, messages, offers, calls to action, hook or narrative.
 */
export function classificationObs(postPlatformId: string, overrides: Record<string, unknown> = {}) {
  return postEnrichmentObs(postPlatformId, {
    content_summary: null,
    offers: [],
    key_messages: [],
    calls_to_action: [],
    hook: null,
    narrative_structure: null,
    ...overrides,
  });
}

export function accountEnrichmentObs(accountPlatformId: string, overrides: Record<string, unknown> = {}) {
  return {
    kind: 'account_enrichment',
    account_platform_id: accountPlatformId,
    produced_at: T0,
    publishing_summary: 'Publishes night-time skincare tutorials, mostly reels.',
    publishing_languages: ['en'],
    niches: ['skincare', 'future_registry_id'],
    ...overrides,
  };
}

const HIKE = [
  'We left the car park before sunrise and followed the ridge path north towards the old stone shelter.',
  'The first hour climbs steadily through pine forest, with roots and loose gravel underfoot.',
  'Mist hung in the valley below us and the only sound was a woodpecker somewhere in the trees.',
  'Above the treeline the wind picked up, so we stopped to add layers, drink water and eat some trail mix.',
  'The summit cairn came into view around nine, and the views across the lakes were worth every step.',
  'On the way down we took the longer loop past the waterfall, which was loud after last week of rain.',
  'My boots held up well, though my knees complained on the steep switchbacks near the bottom.',
  'We saw two deer, a buzzard circling overhead and far too many sheep blocking the narrow stiles.',
].join(' ');
const MEND = [
  'Back at the van my mountain bike had gone soft at the back, so out came the patch kit.',
  'Levers under the bead, pull the inner tube, pump a little air in and listen for the hiss.',
  'Found a tiny thorn hole, roughed the rubber with sandpaper, spread the glue, waited a minute,',
  'pressed the patch down hard, then checked inside the casing for the thorn so it would not happen again.',
  'Tube back in, bead seated all the way round, inflated to pressure and the wheel spun true.',
  'Ten minutes start to finish, and the ride home along the canal towpath was smooth and quiet.',
].join(' ');

/**
 * A long caption (a title line, then ~290 words on a hike), with `mend` ~110 more words on
 * mending a bike tube after them: past the 256 word pieces the model reads of the head, so only
 * the post's passages carry them. No word of "how to fix a flat bicycle tire" but function words.
 */
export function longCaption(options: { mend: boolean }): string {
  return `Trail diary, day three\n${HIKE} ${HIKE}${options.mend ? ` ${MEND}` : ''}`;
}
