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
