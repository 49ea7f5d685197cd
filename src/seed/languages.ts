import type { LanguagePack } from './language-pack.ts';
import { ES, PT, FR, DE, IT, JA } from './languages-other.ts';

/**
 * The languages of the demo dataset: the English pack here, the others in languages-other.ts, their
 * shape in language-pack.ts.
 */

const EN: LanguagePack = {
  code: 'en',
  name: 'English',
  weight: 62,
  firstNames: [
    'Maya',
    'Lucas',
    'Emma',
    'Noah',
    'Olivia',
    'Liam',
    'Ava',
    'Ethan',
    'Chloe',
    'Jordan',
    'Harper',
    'Mason',
    'Zoe',
    'Caleb',
    'Priya',
    'Marcus',
    'Aisha',
    'Tyler',
    'Grace',
    'Devon',
    'Sophie',
    'Jamal',
    'Lily',
    'Ryan',
  ],
  lastNames: [
    'Carter',
    'Nguyen',
    'Brooks',
    'Patel',
    'Reed',
    'Hughes',
    'Kim',
    'Foster',
    'Morgan',
    'Bennett',
    'Ellis',
    'Shaw',
    'Rivera',
    'Cole',
  ],
  places: [
    { country_code: 'US', region_code: 'US-CA', locality: 'Los Angeles' },
    { country_code: 'US', region_code: 'US-NY', locality: 'New York' },
    { country_code: 'US', region_code: 'US-TX', locality: 'Austin' },
    { country_code: 'GB', region_code: 'GB-LND', locality: 'London' },
    { country_code: 'CA', region_code: 'CA-ON', locality: 'Toronto' },
    { country_code: 'AU', region_code: 'AU-NSW', locality: 'Sydney' },
    { country_code: 'US', region_code: 'US-IL', locality: 'Chicago' },
  ],
  niches: {
    skincare: 'skincare',
    beauty: 'makeup',
    fashion: 'style',
    fitness: 'fitness',
    nutrition: 'nutrition',
    home_cooking: 'home cooking',
    parenting: 'parenting',
    travel: 'travel',
    personal_finance: 'money',
    gaming: 'gaming',
    tech_reviews: 'tech',
    diy_crafts: 'DIY',
    pets: 'pet care',
    photography: 'photography',
    music_production: 'music production',
  },
  hooks: [
    (t) => `My ${t} routine ✨`,
    (t) => `Nobody tells you this about ${t}`,
    (t) => `3 ${t} mistakes to avoid`,
    (t) => `${t} explained in 60 seconds`,
  ],
  bodies: [(t, i) => `Everything I use for ${t}, starting with the ${i}.`],
  spoken: [(t, i) => `So today we're talking ${t}, and the ${i} is the star.`],
  ctas: {
    save_post: () => 'Save this for later 📌',
    visit_profile_link: () => 'Link in bio 🔗',
    follow_account: (h) => `Follow @${h} for more`,
    comment_keyword: () => 'Comment "LIST" for the details',
    share_post: () => 'Share this with a friend',
  },
  offer: (p, c, b) => `Use code ${c} for ${p}% off at ${b} 🛍️`,
  partnership: (b) => `#ad In partnership with ${b}`,
  mention: (h) => `🎥 with @${h}`,
  bio: (t, c) => `${t} that actually works | ${c} 📍`,
  tags: ['fyp', 'explore', 'tips'],
};

/** Every language pack, English first. */
export const LANGUAGES: readonly LanguagePack[] = [EN, ES, PT, FR, DE, IT, JA];
/** Language weights aligned with {@link LANGUAGES}. */
export const LANGUAGE_WEIGHTS: readonly number[] = LANGUAGES.map((l) => l.weight);
/** The English pack (bilingual accounts post partly in English). */
export const ENGLISH: LanguagePack = EN;
