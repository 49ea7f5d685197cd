import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Every operator of every filter field type (docs/filters.md), through the HTTP API on the real
// Elasticsearch. Each expected set is read off the hand-built dataset below.

let stack: Stack;
const call = (url: string) => async (body: unknown) => stack.post(url, body);
const searchPosts = call('/v1/social/posts/search');
const searchAccounts = call('/v1/social/accounts/search');

// ── Accounts ────────────────────────────────────────────────────────────────────────────────────
// anna: 250k followers, verified creator, US, fitness+nutrition, en          (posts a1–a6)
// bruno: 40k, business, IT+FR, cooking, it+en                                  (posts b1–b4)
// lu: 10k, creator, no declared location, never enriched (niches/languages null) (posts l1–l3)
// glow: 1.5M, verified business, FR, skincare, fr                             (posts g1–g3)
// guest: 5k, personal, GB, music, en (coauthor only); priv: private, never returned
const ACCOUNTS = {
  anna: {
    handle: 'Fit.Anna',
    followers_count: 250_000,
    following_count: 500,
    posts_count: 1200,
    is_verified: true,
    account_type: 'creator',
    category_label: 'Fitness Coach',
    countries: ['US'],
    niches: ['fitness', 'nutrition'],
    languages: ['en'],
  },
  bruno: {
    handle: 'chef.bruno',
    followers_count: 40_000,
    following_count: 1500,
    posts_count: 300,
    is_verified: false,
    account_type: 'business',
    category_label: 'Restaurant',
    countries: ['IT', 'FR'],
    niches: ['cooking'],
    languages: ['it', 'en'],
  },
  lu: {
    handle: 'wander.lu',
    followers_count: 10_000,
    following_count: 100,
    posts_count: 80,
    is_verified: false,
    account_type: 'creator',
    category_label: 'Travel Blogger',
    countries: [],
    niches: null,
    languages: null,
  },
  glow: {
    handle: 'glow.brand',
    followers_count: 1_500_000,
    following_count: 20,
    posts_count: 2000,
    is_verified: true,
    account_type: 'business',
    category_label: 'Beauty',
    countries: ['FR'],
    niches: ['skincare'],
    languages: ['fr'],
  },
  guest: {
    handle: 'guest.star',
    followers_count: 5000,
    following_count: 800,
    posts_count: 50,
    is_verified: false,
    account_type: 'personal',
    category_label: 'Artist',
    countries: ['GB'],
    niches: ['music'],
    languages: ['en'],
    observed_at: '2026-06-03T00:00:00Z',
  },
  priv: {
    handle: 'secret.cook',
    followers_count: 30_000,
    following_count: 10,
    posts_count: 5,
    is_verified: false,
    account_type: 'creator',
    category_label: 'Restaurant',
    countries: ['IT'],
    niches: ['cooking'],
    languages: ['it'],
    is_private: true,
  },
} as const;
type AccountName = keyof typeof ACCOUNTS;
const accountPid = (name: AccountName) => `sf-${name}`;
const accountId = (name: AccountName) => mintId('account', accountPid(name));

// ── Posts ───────────────────────────────────────────────────────────────────────────────────────
interface Enrichment {
  lang: string | null;
  topics?: string[];
  formats?: string[];
  hook?: { devices: string[]; modalities: string[] } | null;
  roles?: string[];
  proofs?: string[];
  offers?: string[][] | null;
  ctas?: Array<{ actions: string[]; stages: string[] }> | null;
  patterns?: string[];
  paid: boolean | null;
  commercial?: string[];
}
interface PostSpec {
  by: AccountName;
  day: number; // posted 2026-05-<day>T08:00:00Z
  format: string;
  views: number | null;
  likes: number;
  comments: number;
  tags: string; // hashtags written in the caption
  media?: Array<'image' | 'video'>;
  audio?: [type: string, platformId: string | null];
  coauthors?: AccountName[];
  commentsOff?: true;
  observedAt?: string;
  e?: Enrichment; // absent: enrichment pending
}
// Engagement rates: a1 .1, a3 .1, a4 .2, a5 .05, a6 .1, b1 .1, b2 .05, b3 .01, b4 0, l3 .1, g1 .1,
// g3 .05; null for a2, l2, g2 (views null) and l1 (views 0). View ratios to the author's baseline
// (median views of at least 3 earlier posts): a5 4000/2000 = 2, a6 10000/2500 = 4, b4 250/500 = 0.5.
const POSTS: Record<string, PostSpec> = {
  a1: {
    by: 'anna',
    day: 1,
    format: 'reel',
    views: 1000,
    likes: 90,
    comments: 10,
    tags: '#MealPrep #Fitness',
    audio: ['music', 'track-1'],
    e: {
      lang: 'en',
      topics: ['meal_prep', 'nutrition'],
      formats: ['tutorial'],
      hook: { devices: ['question'], modalities: ['visual', 'spoken'] },
      roles: ['instruction'],
      proofs: ['demonstration'],
      offers: [],
      ctas: [{ actions: ['follow_account'], stages: ['closing'] }],
      patterns: ['tutorial'],
      paid: false,
      commercial: ['organic'],
    },
  },
  a2: {
    by: 'anna',
    day: 2,
    format: 'carousel',
    views: null,
    likes: 500,
    comments: 50,
    tags: '#mealprep #budget',
    media: ['image', 'video'],
    e: {
      lang: 'en',
      topics: ['meal_prep'],
      formats: ['listicle'],
      hook: { devices: ['bold_claim'], modalities: ['on_screen_text'] },
      offers: [['discount', 'promo_code']],
      ctas: [{ actions: ['save_post', 'visit_profile_link'], stages: ['opening', 'closing'] }],
      patterns: ['listicle'],
      paid: true,
      commercial: ['affiliate', 'sponsored'],
    },
  },
  a3: {
    by: 'anna',
    day: 3,
    format: 'reel',
    views: 2000,
    likes: 150,
    comments: 50,
    tags: '#Fitness #gym',
    audio: ['original_sound', null],
    coauthors: ['guest'],
  },
  a4: {
    by: 'anna',
    day: 4,
    format: 'reel',
    views: 3000,
    likes: 580,
    comments: 20,
    tags: '#gym',
    audio: ['music', 'track-1'],
    e: {
      lang: 'es',
      topics: ['strength_training'],
      hook: { devices: ['question'], modalities: ['spoken', 'caption'] },
      roles: ['instruction', 'claim'],
      offers: [['free_trial']],
      ctas: [{ actions: ['visit_profile_link'], stages: ['closing'] }],
      paid: null,
      commercial: ['sponsored'],
    },
  },
  a5: {
    by: 'anna',
    day: 5,
    format: 'reel',
    views: 4000,
    likes: 100,
    comments: 100,
    tags: '',
    commentsOff: true,
    e: { lang: null, topics: ['nutrition'], hook: null, offers: null, ctas: [], paid: false, commercial: [] },
  },
  a6: {
    by: 'anna',
    day: 6,
    format: 'reel',
    views: 10_000,
    likes: 900,
    comments: 100,
    tags: '#MEALPREP',
    audio: ['music', 'track-2'],
  },
  b1: {
    by: 'bruno',
    day: 7,
    format: 'reel',
    views: 500,
    likes: 40,
    comments: 10,
    tags: '#pasta #MealPrep',
    audio: ['music', 'track-2'],
    e: {
      lang: 'it',
      topics: ['cooking', 'meal_prep'],
      formats: ['tutorial', 'recipe'],
      hook: { devices: ['reveal'], modalities: ['visual'] },
      offers: [['discount']],
      ctas: [{ actions: ['follow_account'], stages: ['opening'] }],
      paid: false,
      commercial: ['organic'],
    },
  },
  b2: {
    by: 'bruno',
    day: 8,
    format: 'carousel',
    views: 500,
    likes: 20,
    comments: 5,
    tags: '#pasta',
    media: ['image', 'image'],
    coauthors: ['guest', 'anna'],
    e: {
      lang: 'it',
      topics: ['cooking'],
      hook: { devices: [], modalities: ['on_screen_text', 'caption'] },
      offers: [],
      ctas: [],
      paid: true,
      commercial: ['sponsored'],
    },
  },
  b3: { by: 'bruno', day: 9, format: 'image', views: 1000, likes: 10, comments: 0, tags: '', media: ['image'] },
  b4: {
    by: 'bruno',
    day: 10,
    format: 'reel',
    views: 250,
    likes: 0,
    comments: 0,
    tags: '#Pasta',
    audio: ['original_sound', 'orig-b4'],
    e: {
      lang: 'en',
      topics: ['cooking'],
      hook: { devices: ['question'], modalities: ['spoken'] },
      offers: [['promo_code']],
      ctas: [{ actions: ['save_post'], stages: ['closing'] }],
      paid: null,
      commercial: ['organic'],
    },
  },
  l1: {
    by: 'lu',
    day: 11,
    format: 'reel',
    views: 0,
    likes: 5,
    comments: 1,
    tags: '#travel #Budget',
    audio: ['music', 'track-1'],
  },
  l2: {
    by: 'lu',
    day: 12,
    format: 'carousel',
    views: null,
    likes: 300,
    comments: 30,
    tags: '#travel',
    media: ['image', 'video', 'image'],
    e: {
      lang: 'fr',
      topics: ['travel'],
      hook: { devices: ['reveal'], modalities: ['visual'] },
      offers: [],
      ctas: [],
      paid: false,
      commercial: [],
    },
  },
  l3: {
    by: 'lu',
    day: 13,
    format: 'reel',
    views: 8000,
    likes: 700,
    comments: 100,
    tags: '#travel #mealprep',
    commentsOff: true,
  },
  g1: {
    by: 'glow',
    day: 14,
    format: 'reel',
    views: 50_000,
    likes: 4000,
    comments: 1000,
    tags: '#skincare #GlowUp',
    audio: ['music', 'track-3'],
    coauthors: ['anna'],
    observedAt: '2026-06-02T00:00:00Z',
    e: {
      lang: 'fr',
      topics: ['skincare'],
      hook: { devices: ['reveal', 'bold_claim'], modalities: ['visual', 'on_screen_text'] },
      roles: ['claim'],
      proofs: ['testimonial', 'demonstration'],
      offers: [['discount']],
      ctas: [{ actions: ['visit_profile_link'], stages: ['closing'] }],
      paid: true,
      commercial: ['brand_owned'],
    },
  },
  g2: {
    by: 'glow',
    day: 15,
    format: 'carousel',
    views: null,
    likes: 2000,
    comments: 100,
    tags: '#skincare',
    media: ['image', 'image', 'image'],
    observedAt: '2026-06-02T00:00:00Z',
    e: {
      lang: 'fr',
      topics: ['skincare'],
      hook: null,
      offers: null,
      ctas: null,
      paid: false,
      commercial: ['brand_owned'],
    },
  },
  g3: {
    by: 'glow',
    day: 16,
    format: 'reel',
    views: 20_000,
    likes: 1000,
    comments: 0,
    tags: '#GlowUp',
    audio: ['original_sound', 'orig-g3'],
    observedAt: '2026-06-02T00:00:00Z',
  },
};
const ALL = Object.keys(POSTS);
const postPid = (name: string) => `sf-${name}`;
const NAME_OF_ID = new Map(ALL.map((name) => [mintId('post', postPid(name)), name]));
const except = (...names: string[]) => ALL.filter((n) => !names.includes(n));
const postedAt = (day: number) => `2026-05-${String(day).padStart(2, '0')}T08:00:00Z`;

function mediaItem(pid: string, type: 'image' | 'video', i: number) {
  const common = { platform_id: `${pid}-m${i}`, type, width: 1080, height: 1350 };
  return type === 'image'
    ? { ...common, source_url: `https://cdn.social.example/media/${pid}-m${i}.jpg` }
    : { ...common, source_url: `https://cdn.social.example/media/${pid}-m${i}.mp4`, duration_seconds: 12 };
}

function observationsOf(name: string, p: PostSpec): unknown[] {
  const pid = postPid(name);
  const post = postObs(accountPid(p.by), {
    platform_id: pid,
    shortcode: `Sc${name.toUpperCase()}x`,
    observed_at: p.observedAt ?? '2026-06-01T10:00:00Z',
    posted_at: postedAt(p.day),
    format: p.format,
    caption: `Post ${name} ${p.tags}`,
    views: p.views,
    likes: p.likes,
    comments: p.comments,
    comments_enabled: !p.commentsOff,
    coauthor_platform_ids: (p.coauthors ?? []).map(accountPid),
    media: (p.media ?? ['video']).map((type, i) => mediaItem(pid, type, i)),
    audio: p.audio
      ? {
          platform_id: p.audio[1],
          type: p.audio[0],
          title: 'Sound',
          attribution_display_name: 'Someone',
          attribution_account_platform_id: null,
          duration_seconds: 30,
          web_url: null,
        }
      : null,
  });
  if (!p.e) return [post];
  const e = p.e;
  return [
    post,
    postEnrichmentObs(pid, {
      primary_language: e.lang,
      topics: e.topics ?? [],
      creative_formats: e.formats ?? [],
      hook: e.hook === undefined || e.hook === null ? null : { construction: 'Opens strong', ...e.hook },
      key_messages:
        (e.roles ?? []).length > 0 ? [{ summary: 'Message', roles: e.roles, presentation: 'asserted' }] : [],
      proofs: (e.proofs ?? []).length > 0 ? [{ summary: 'Proof', mechanisms: e.proofs, cited_source_types: [] }] : [],
      offers:
        e.offers === null ? null : (e.offers ?? []).map((types) => ({ summary: 'Offer', types, stated_terms: [] })),
      calls_to_action:
        e.ctas === null ? null : (e.ctas ?? []).map((c) => ({ summary: 'CTA', ...c, modalities: ['spoken'] })),
      narrative_structure: e.patterns ? { description: 'Structure', patterns: e.patterns } : null,
      has_paid_partnership_label: e.paid,
      commercial_contexts: e.commercial ?? [],
    }),
  ];
}

beforeAll(async () => {
  stack = await startStack('search-filters');
  const accounts = Object.entries(ACCOUNTS).flatMap(([name, a]) => {
    const { countries, niches, languages, ...profile } = a as (typeof ACCOUNTS)[AccountName] & {
      observed_at?: string;
      is_private?: boolean;
    };
    const obs = accountObs({
      platform_id: accountPid(name as AccountName),
      ...profile,
      declared_locations: countries.map((c) => ({ country_code: c, region_code: '', locality: '' })),
    });
    return niches === null
      ? [obs]
      : [obs, accountEnrichmentObs(accountPid(name as AccountName), { niches, publishing_languages: languages })];
  });
  const response = await stack.ingest([
    ...accounts,
    ...Object.entries(POSTS).flatMap(([name, p]) => observationsOf(name, p)),
  ]);
  expect(response.statusCode).toBe(200);
  expect(response.body.rejected).toEqual([]);
});
afterAll(async () => stack?.close());

async function postNames(filters: Record<string, unknown>, author?: Record<string, unknown>): Promise<string[]> {
  const response = await searchPosts({ post: { filters, ...(author && { author: { filters: author } }) }, limit: 100 });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  expect(response.body.has_more).toBe(false);
  return response.body.data.map((p: { id: string }) => NAME_OF_ID.get(p.id) ?? p.id).sort();
}

async function accountNames(body: Record<string, unknown>): Promise<string[]> {
  const response = await searchAccounts({ ...body, limit: 100 });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  const names = new Map(Object.keys(ACCOUNTS).map((n) => [accountId(n as AccountName), n]));
  return response.body.data.map((a: { id: string }) => names.get(a.id) ?? a.id).sort();
}

type Case = [label: string, filters: Record<string, unknown>, expected: string[]];
const check = (cases: Case[]) =>
  it.each(cases)('%s', async (_label, filters, expected) => {
    expect(await postNames(filters)).toEqual([...expected].sort());
  });

describe('post filters: numbers and integers (range bounds inclusive/exclusive, nulls never match)', () => {
  check([
    ['views gt 1000', { views: { gt: 1000 } }, ['a3', 'a4', 'a5', 'a6', 'l3', 'g1', 'g3']],
    ['views gte 1000', { views: { gte: 1000 } }, ['a1', 'a3', 'a4', 'a5', 'a6', 'b3', 'l3', 'g1', 'g3']],
    ['views lt 1000 (null views excluded, 0 included)', { views: { lt: 1000 } }, ['b1', 'b2', 'b4', 'l1']],
    ['views lte 1000', { views: { lte: 1000 } }, ['a1', 'b1', 'b2', 'b3', 'b4', 'l1']],
    ['views gte 500 lte 500', { views: { gte: 500, lte: 500 } }, ['b1', 'b2']],
    ['views contradictory bounds', { views: { gt: 500, lt: 500 } }, []],
    ['views exists false', { views: { exists: false } }, ['a2', 'l2', 'g2']],
    ['likes gte 900', { likes: { gte: 900 } }, ['a6', 'g1', 'g2', 'g3']],
    ['likes gt 900', { likes: { gt: 900 } }, ['g1', 'g2', 'g3']],
    ['likes lt 10', { likes: { lt: 10 } }, ['b4', 'l1']],
    ['likes lte 10', { likes: { lte: 10 } }, ['b3', 'b4', 'l1']],
    ['comments gt 100', { comments: { gt: 100 } }, ['g1']],
    ['comments gte 100', { comments: { gte: 100 } }, ['a5', 'a6', 'l3', 'g1', 'g2']],
    ['comments lt 1', { comments: { lt: 1 } }, ['b3', 'b4', 'g3']],
    ['comments lte 1', { comments: { lte: 1 } }, ['b3', 'b4', 'g3', 'l1']],
    ['media_count gt 2', { media_count: { gt: 2 } }, ['l2', 'g2']],
    ['media_count gte 2', { media_count: { gte: 2 } }, ['a2', 'b2', 'l2', 'g2']],
    ['media_count lt 2', { media_count: { lt: 2 } }, except('a2', 'b2', 'l2', 'g2')],
    ['media_count lte 2', { media_count: { lte: 2 } }, except('l2', 'g2')],
    ['engagement_rate_by_views gt 0.1', { engagement_rate_by_views: { gt: 0.1 } }, ['a4']],
    [
      'engagement_rate_by_views gte 0.1',
      { engagement_rate_by_views: { gte: 0.1 } },
      ['a1', 'a3', 'a4', 'a6', 'b1', 'l3', 'g1'],
    ],
    ['engagement_rate_by_views lt 0.05', { engagement_rate_by_views: { lt: 0.05 } }, ['b3', 'b4']],
    ['engagement_rate_by_views lte 0.05', { engagement_rate_by_views: { lte: 0.05 } }, ['a5', 'b2', 'b3', 'b4', 'g3']],
    [
      'engagement_rate_by_views gte 0 (a rate of 0 is a value; views 0 or null is not)',
      { engagement_rate_by_views: { gte: 0 } },
      except('a2', 'l1', 'l2', 'g2'),
    ],
    [
      'engagement_rate_by_views exists false',
      { engagement_rate_by_views: { exists: false } },
      ['a2', 'l1', 'l2', 'g2'],
    ],
    ['view_ratio_to_account_baseline gt 2', { view_ratio_to_account_baseline: { gt: 2 } }, ['a6']],
    ['view_ratio_to_account_baseline gte 2', { view_ratio_to_account_baseline: { gte: 2 } }, ['a5', 'a6']],
    ['view_ratio_to_account_baseline lt 2', { view_ratio_to_account_baseline: { lt: 2 } }, ['b4']],
    ['view_ratio_to_account_baseline lte 0.5', { view_ratio_to_account_baseline: { lte: 0.5 } }, ['b4']],
    [
      'view_ratio_to_account_baseline exists true',
      { view_ratio_to_account_baseline: { exists: true } },
      ['a5', 'a6', 'b4'],
    ],
  ]);
});

describe('post filters: timestamps (UTC strings, Z or +00:00, fractions)', () => {
  check([
    ['posted_at gte/lt window', { posted_at: { gte: postedAt(5), lt: postedAt(8) } }, ['a5', 'a6', 'b1']],
    ['posted_at gt / lte boundaries', { posted_at: { gt: postedAt(5), lte: postedAt(7) } }, ['a6', 'b1']],
    [
      'posted_at lte with +00:00 and fractions',
      { posted_at: { lte: '2026-05-03T08:00:00.000+00:00' } },
      ['a1', 'a2', 'a3'],
    ],
    ['posted_at gt, minute precision', { posted_at: { gt: '2026-05-15T08:00Z' } }, ['g3']],
    [
      'posted_at gte/lt inside a millisecond',
      { posted_at: { gte: '2026-05-03T08:00:00.0001Z', lt: '2026-05-05T08:00:00.0001Z' } },
      ['a4', 'a5'],
    ],
    [
      'posted_at gt/lte inside a millisecond',
      { posted_at: { gt: '2026-05-03T07:59:59.9999Z', lte: '2026-05-04T08:00:00.0009Z' } },
      ['a3', 'a4'],
    ],
    ['observed_at gte', { observed_at: { gte: '2026-06-02T00:00:00Z' } }, ['g1', 'g2', 'g3']],
    ['observed_at lt', { observed_at: { lt: '2026-06-02T00:00:00Z' } }, except('g1', 'g2', 'g3')],
  ]);
});

describe('post filters: keywords (eq / in / not_in; not_in keeps missing values)', () => {
  const id = (n: string) => mintId('post', postPid(n));
  check([
    ['id eq', { id: { eq: id('a1') } }, ['a1']],
    ['id in', { id: { in: [id('a1'), id('g3')] } }, ['a1', 'g3']],
    [
      'id not_in',
      { id: { not_in: ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map(id) } },
      except('a1', 'a2', 'a3', 'a4', 'a5', 'a6'),
    ],
    ['shortcode eq (case-sensitive)', { shortcode: { eq: 'ScA1x' } }, ['a1']],
    ['shortcode eq other case matches nothing', { shortcode: { eq: 'scA1x' } }, []],
    ['shortcode in / not_in', { shortcode: { in: ['ScB1x', 'ScB2x'], not_in: ['ScB2x'] } }, ['b1']],
    ['format eq', { format: { eq: 'carousel' } }, ['a2', 'b2', 'l2', 'g2']],
    ['format in', { format: { in: ['image', 'carousel'] } }, ['a2', 'b2', 'b3', 'l2', 'g2']],
    ['format not_in', { format: { not_in: ['reel'] } }, ['a2', 'b2', 'b3', 'l2', 'g2']],
    ['primary_language eq', { primary_language: { eq: 'en' } }, ['a1', 'a2', 'b4']],
    ['primary_language in', { primary_language: { in: ['it', 'es'] } }, ['a4', 'b1', 'b2']],
    [
      'primary_language not_in keeps null languages',
      { primary_language: { not_in: ['en', 'fr'] } },
      except('a1', 'a2', 'b4', 'l2', 'g1', 'g2'),
    ],
    [
      'primary_language not_in + exists true',
      { primary_language: { not_in: ['en', 'fr'], exists: true } },
      ['a4', 'b1', 'b2'],
    ],
    [
      'primary_language exists false (pending and explicit null)',
      { primary_language: { exists: false } },
      ['a3', 'a5', 'a6', 'b3', 'l1', 'l3', 'g3'],
    ],
    ['audio_type eq', { audio_type: { eq: 'original_sound' } }, ['a3', 'b4', 'g3']],
    ['audio_type in', { audio_type: { in: ['music'] } }, ['a1', 'a4', 'a6', 'b1', 'l1', 'g1']],
    [
      'audio_type not_in keeps posts without audio',
      { audio_type: { not_in: ['music'] } },
      except('a1', 'a4', 'a6', 'b1', 'l1', 'g1'),
    ],
    ['audio_type exists false', { audio_type: { exists: false } }, ['a2', 'a5', 'b2', 'b3', 'l2', 'l3', 'g2']],
    ['audio_id eq (shared track)', { audio_id: { eq: mintId('audio', 'track-1') } }, ['a1', 'a4', 'l1']],
    [
      'audio_id in (audio without platform id is per post)',
      { audio_id: { in: [mintId('audio', 'post:sf-a3'), mintId('audio', 'track-3')] } },
      ['a3', 'g1'],
    ],
    [
      'audio_id not_in',
      { audio_id: { not_in: [mintId('audio', 'track-1'), mintId('audio', 'track-2')] } },
      except('a1', 'a4', 'l1', 'a6', 'b1'),
    ],
    ['audio_id exists true', { audio_id: { exists: true } }, ['a1', 'a3', 'a4', 'a6', 'b1', 'b4', 'l1', 'g1', 'g3']],
  ]);
});

describe('post filters: arrays (contains_*; contains_none keeps missing values; exists)', () => {
  check([
    [
      'hashtags contains_any #MealPrep (case-insensitive)',
      { hashtags: { contains_any: ['#MealPrep'] } },
      ['a1', 'a2', 'a6', 'b1', 'l3'],
    ],
    ['hashtags contains_any mealprep', { hashtags: { contains_any: ['mealprep'] } }, ['a1', 'a2', 'a6', 'b1', 'l3']],
    ['hashtags contains_all', { hashtags: { contains_all: ['mealprep', '#PASTA'] } }, ['b1']],
    [
      'hashtags contains_none keeps posts without hashtags',
      { hashtags: { contains_none: ['MEALPREP', 'travel'] } },
      ['a3', 'a4', 'a5', 'b2', 'b3', 'b4', 'g1', 'g2', 'g3'],
    ],
    ['hashtags exists false', { hashtags: { exists: false } }, ['a5', 'b3']],
    ['topics contains_any', { topics: { contains_any: ['meal_prep', 'travel'] } }, ['a1', 'a2', 'b1', 'l2']],
    ['topics contains_all', { topics: { contains_all: ['meal_prep', 'nutrition'] } }, ['a1']],
    ['topics are case-sensitive IDs', { topics: { contains_any: ['Meal_Prep'] } }, []],
    ['topics contains_none keeps pending posts', { topics: { contains_none: ['cooking'] } }, except('b1', 'b2', 'b4')],
    [
      'topics contains_none + exists true',
      { topics: { contains_none: ['cooking'], exists: true } },
      ['a1', 'a2', 'a4', 'a5', 'l2', 'g1', 'g2'],
    ],
    ['creative_formats contains_all', { creative_formats: { contains_all: ['tutorial', 'recipe'] } }, ['b1']],
    ['hook_devices contains_any', { hook_devices: { contains_any: ['bold_claim'] } }, ['a2', 'g1']],
    ['hook_modalities contains_any', { hook_modalities: { contains_any: ['caption'] } }, ['a4', 'b2']],
    ['hook_modalities contains_all', { hook_modalities: { contains_all: ['visual', 'spoken'] } }, ['a1']],
    [
      'hook_modalities contains_none',
      { hook_modalities: { contains_none: ['visual'] } },
      except('a1', 'b1', 'l2', 'g1'),
    ],
    [
      'hook_modalities exists false (pending or hook null)',
      { hook_modalities: { exists: false } },
      ['a3', 'a5', 'a6', 'b3', 'l1', 'l3', 'g2', 'g3'],
    ],
    ['key_message_roles contains_all', { key_message_roles: { contains_all: ['instruction', 'claim'] } }, ['a4']],
    ['proof_mechanisms contains_any', { proof_mechanisms: { contains_any: ['testimonial'] } }, ['g1']],
    ['offer_types contains_any', { offer_types: { contains_any: ['discount'] } }, ['a2', 'b1', 'g1']],
    ['offer_types contains_all', { offer_types: { contains_all: ['discount', 'promo_code'] } }, ['a2']],
    ['offer_types contains_none', { offer_types: { contains_none: ['discount'] } }, except('a2', 'b1', 'g1')],
    ['offer_types exists true', { offer_types: { exists: true } }, ['a2', 'a4', 'b1', 'b4', 'g1']],
    [
      'offer_types exists false (no offers, offers null, pending)',
      { offer_types: { exists: false } },
      except('a2', 'a4', 'b1', 'b4', 'g1'),
    ],
    ['cta_actions contains_any', { cta_actions: { contains_any: ['visit_profile_link'] } }, ['a2', 'a4', 'g1']],
    ['cta_actions contains_all', { cta_actions: { contains_all: ['save_post', 'visit_profile_link'] } }, ['a2']],
    [
      'cta_actions contains_none',
      { cta_actions: { contains_none: ['follow_account', 'save_post'] } },
      except('a1', 'a2', 'b1', 'b4'),
    ],
    ['cta_stages contains_any', { cta_stages: { contains_any: ['opening'] } }, ['a2', 'b1']],
    ['narrative_patterns contains_any', { narrative_patterns: { contains_any: ['listicle'] } }, ['a2']],
    ['commercial_contexts contains_any', { commercial_contexts: { contains_any: ['sponsored'] } }, ['a2', 'a4', 'b2']],
    ['commercial_contexts contains_all', { commercial_contexts: { contains_all: ['affiliate', 'sponsored'] } }, ['a2']],
    [
      'commercial_contexts contains_none',
      { commercial_contexts: { contains_none: ['organic'] } },
      except('a1', 'b1', 'b4'),
    ],
    [
      'media_types contains_all finds mixed carousels',
      { media_types: { contains_all: ['image', 'video'] } },
      ['a2', 'l2'],
    ],
    ['media_types contains_any', { media_types: { contains_any: ['image'] } }, ['a2', 'b2', 'b3', 'l2', 'g2']],
    ['media_types contains_none', { media_types: { contains_none: ['video'] } }, ['b2', 'b3', 'g2']],
    ['coauthor_ids contains_any', { coauthor_ids: { contains_any: [accountId('anna')] } }, ['b2', 'g1']],
    ['coauthor_ids contains_all', { coauthor_ids: { contains_all: [accountId('guest'), accountId('anna')] } }, ['b2']],
    ['coauthor_ids contains_none', { coauthor_ids: { contains_none: [accountId('guest')] } }, except('a3', 'b2')],
    ['coauthor_ids exists true', { coauthor_ids: { exists: true } }, ['a3', 'b2', 'g1']],
  ]);
});

describe('post filters: booleans', () => {
  check([
    ['has_paid_partnership_label eq true', { has_paid_partnership_label: { eq: true } }, ['a2', 'b2', 'g1']],
    [
      'has_paid_partnership_label eq false (pending and absent excluded)',
      { has_paid_partnership_label: { eq: false } },
      ['a1', 'a5', 'b1', 'l2', 'g2'],
    ],
    [
      'has_paid_partnership_label exists false',
      { has_paid_partnership_label: { exists: false } },
      ['a3', 'a4', 'a6', 'b3', 'b4', 'l1', 'l3', 'g3'],
    ],
    [
      'not has_paid_partnership_label eq true keeps unknown labels',
      { not: { has_paid_partnership_label: { eq: true } } },
      except('a2', 'b2', 'g1'),
    ],
    ['comments_enabled eq false', { comments_enabled: { eq: false } }, ['a5', 'l3']],
    ['comments_enabled eq true', { comments_enabled: { eq: true } }, except('a5', 'l3')],
  ]);
});

describe('post filters: composition', () => {
  check([
    [
      'any_of',
      { any_of: [{ format: { eq: 'carousel' } }, { views: { gte: 20_000 } }] },
      ['a2', 'b2', 'l2', 'g2', 'g1', 'g3'],
    ],
    [
      'all_of of two any_of groups',
      {
        all_of: [
          { any_of: [{ format: { eq: 'reel' } }, { format: { eq: 'image' } }] },
          { any_of: [{ hashtags: { contains_any: ['mealprep'] } }, { hashtags: { contains_any: ['pasta'] } }] },
        ],
      },
      ['a1', 'a6', 'b1', 'b4', 'l3'],
    ],
    ['not keeps null views', { not: { views: { gte: 1000 } } }, ['a2', 'b1', 'b2', 'b4', 'l1', 'l2', 'g2']],
    [
      'not + exists true drops them',
      { views: { exists: true }, not: { views: { gte: 1000 } } },
      ['b1', 'b2', 'b4', 'l1'],
    ],
    [
      'documented example: viral or engaging #fitness, not labelled paid',
      {
        any_of: [
          { view_ratio_to_account_baseline: { gte: 2 } },
          { engagement_rate_by_views: { gte: 0.1 }, hashtags: { contains_any: ['#fitness'] } },
        ],
        not: { has_paid_partnership_label: { eq: true } },
      },
      ['a1', 'a3', 'a5', 'a6'],
    ],
    [
      'nested to the depth limit: not › any_of › all_of › not',
      {
        not: {
          any_of: [
            { all_of: [{ format: { eq: 'reel' } }, { not: { views: { gte: 2000 } } }] },
            { format: { eq: 'image' } },
          ],
        },
      },
      except('a1', 'b1', 'b4', 'l1', 'b3'),
    ],
  ]);

  it('rejects one level deeper with the pointer of the offending key', async () => {
    const response = await searchPosts({
      post: { filters: { not: { any_of: [{ all_of: [{ not: { not: { format: { eq: 'reel' } } } }] }] } } },
    });
    expect(response.statusCode).toBe(422);
    expect(response.body.detail).toMatch(/^\/post\/filters\/not\/any_of\/0\/all_of\/0\/not\/not: nesting too deep/);
  });
});

describe('author filters (post.author.filters), ANDed with post filters', () => {
  const cases: Array<[string, Record<string, unknown>, AccountName[]]> = [
    ['id eq', { id: { eq: accountId('bruno') } }, ['bruno']],
    ['id in', { id: { in: [accountId('lu'), accountId('glow')] } }, ['lu', 'glow']],
    ['id not_in', { id: { not_in: [accountId('anna')] } }, ['bruno', 'lu', 'glow']],
    ['handle eq with @ and other case', { handle: { eq: '@FIT.anna' } }, ['anna']],
    [
      'handle in / not_in',
      { handle: { in: ['CHEF.BRUNO', 'wander.lu', '@Fit.Anna'], not_in: ['@fit.anna'] } },
      ['bruno', 'lu'],
    ],
    ['followers_count gte/lte', { followers_count: { gte: 40_000, lte: 250_000 } }, ['anna', 'bruno']],
    ['followers_count gt / lt', { followers_count: { gt: 10_000, lt: 1_500_000 } }, ['anna', 'bruno']],
    ['following_count gte', { following_count: { gte: 1500 } }, ['bruno']],
    ['following_count lt', { following_count: { lt: 100 } }, ['glow']],
    ['posts_count gt / lte', { any_of: [{ posts_count: { gt: 1200 } }, { posts_count: { lte: 80 } }] }, ['lu', 'glow']],
    ['is_verified eq true', { is_verified: { eq: true } }, ['anna', 'glow']],
    ['is_verified eq false', { is_verified: { eq: false } }, ['bruno', 'lu']],
    [
      'account_type eq / in / not_in',
      { account_type: { in: ['business', 'creator'], not_in: ['creator'] } },
      ['bruno', 'glow'],
    ],
    ['niches contains_any', { niches: { contains_any: ['nutrition', 'skincare'] } }, ['anna', 'glow']],
    ['niches contains_all', { niches: { contains_all: ['fitness', 'nutrition'] } }, ['anna']],
    [
      'niches contains_none keeps unenriched authors',
      { niches: { contains_none: ['cooking'] } },
      ['anna', 'lu', 'glow'],
    ],
    ['niches exists false', { niches: { exists: false } }, ['lu']],
    ['publishing_languages contains_all', { publishing_languages: { contains_all: ['it', 'en'] } }, ['bruno']],
    ['publishing_languages contains_none', { publishing_languages: { contains_none: ['en'] } }, ['lu', 'glow']],
    ['country_codes contains_any', { country_codes: { contains_any: ['FR'] } }, ['bruno', 'glow']],
    ['country_codes contains_all', { country_codes: { contains_all: ['IT', 'FR'] } }, ['bruno']],
    ['country_codes contains_none', { country_codes: { contains_none: ['FR'] } }, ['anna', 'lu']],
    ['country_codes exists false (no declared location)', { country_codes: { exists: false } }, ['lu']],
  ];
  const postsBy = (authors: AccountName[]) => ALL.filter((n) => authors.includes(POSTS[n]!.by));
  it.each(cases)('%s', async (_label, author, authors) => {
    expect(await postNames({}, author)).toEqual(postsBy(authors).sort());
  });

  it('composes post and author scopes', async () => {
    expect(await postNames({ hashtags: { contains_any: ['mealprep'] } }, { is_verified: { eq: true } })).toEqual([
      'a1',
      'a2',
      'a6',
    ]);
    expect(await postNames({ format: { not_in: ['reel'] } }, { country_codes: { contains_any: ['FR'] } })).toEqual([
      'b2',
      'b3',
      'g2',
    ]);
  });
});

describe('account filters (account.filters)', () => {
  // Private accounts are never returned, whatever they match (priv is a private "Restaurant" in IT).
  const cases: Array<[string, Record<string, unknown>, AccountName[]]> = [
    ['category_label eq, case-insensitive', { category_label: { eq: 'fitness coach' } }, ['anna']],
    ['category_label in', { category_label: { in: ['RESTAURANT', 'beauty'] } }, ['bruno', 'glow']],
    [
      'category_label not_in (whole label only)',
      { category_label: { not_in: ['Fitness Coach', 'travel'] } },
      ['bruno', 'lu', 'glow', 'guest'],
    ],
    ['handle eq with @', { handle: { eq: '@fit.anna' } }, ['anna']],
    ['handle in / not_in', { handle: { in: ['@Chef.Bruno', 'GUEST.star'], not_in: ['guest.star'] } }, ['bruno']],
    ['id in', { id: { in: [accountId('lu'), accountId('priv')] } }, ['lu']],
    ['id not_in', { id: { not_in: [accountId('anna'), accountId('glow')] } }, ['bruno', 'lu', 'guest']],
    ['observed_at gte', { observed_at: { gte: '2026-06-02T00:00:00Z' } }, ['guest']],
    ['observed_at lt', { observed_at: { lt: '2026-06-03T00:00:00Z' } }, ['anna', 'bruno', 'lu', 'glow']],
    ['followers_count gte/lt', { followers_count: { gte: 10_000, lt: 250_000 } }, ['bruno', 'lu']],
    ['following_count gt / lte', { following_count: { gt: 100, lte: 800 } }, ['anna', 'guest']],
    ['posts_count lt', { posts_count: { lt: 100 } }, ['lu', 'guest']],
    ['is_verified eq', { is_verified: { eq: true } }, ['anna', 'glow']],
    ['account_type eq', { account_type: { eq: 'personal' } }, ['guest']],
    ['niches contains_any', { niches: { contains_any: ['cooking', 'music'] } }, ['bruno', 'guest']],
    [
      'niches contains_none keeps unenriched accounts',
      { niches: { contains_none: ['cooking', 'music'] } },
      ['anna', 'lu', 'glow'],
    ],
    [
      'publishing_languages contains_any',
      { publishing_languages: { contains_any: ['en'] } },
      ['anna', 'bruno', 'guest'],
    ],
    ['publishing_languages exists false', { publishing_languages: { exists: false } }, ['lu']],
    ['country_codes contains_any', { country_codes: { contains_any: ['GB', 'US'] } }, ['anna', 'guest']],
    [
      'country_codes contains_none + exists',
      { country_codes: { contains_none: ['FR'], exists: true } },
      ['anna', 'guest'],
    ],
  ];
  it.each(cases)('%s', async (_label, filters, expected) => {
    expect(await accountNames({ account: { filters } })).toEqual([...expected].sort());
  });

  it('applies post filters to each counted post of account.posts, with the same null semantics', async () => {
    const scope = (minimum: number, filters: Record<string, unknown>) => ({
      account: { posts: { minimum_matching_posts: minimum, filters } },
    });
    expect(await accountNames(scope(1, { has_paid_partnership_label: { eq: true } }))).toEqual([
      'anna',
      'bruno',
      'glow',
    ]);
    // Unknown labels count as "not labelled": glow has only g2, g3 left; lu's l1, l3 are pending.
    expect(await accountNames(scope(3, { not: { has_paid_partnership_label: { eq: true } } }))).toEqual([
      'anna',
      'bruno',
      'lu',
    ]);
    expect(await accountNames(scope(2, { hashtags: { contains_any: ['#MEALPREP'] } }))).toEqual(['anna']);
  });
});
