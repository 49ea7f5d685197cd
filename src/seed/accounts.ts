import type { LanguagePack } from './language-pack.ts';
import { LANGUAGES, LANGUAGE_WEIGHTS, ENGLISH } from './languages.ts';
import { hash2, Rng } from './random.ts';
import { NICHES, NICHE_BY_ID, NICHE_WEIGHTS, type NicheDef } from './vocabulary.ts';

/**
 * Account planning for the demo dataset: everything about an account that later observations
 * must agree on (handle, niches, language, audience, fate, posting window) is decided up front and
 * kept in a small record per account, so that memory is O(accounts) while posts stream.
 */

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** What happens to an account after its first observation. */
export type AccountFate = 'none' | 'renamed' | 'deleted' | 'deactivated' | 'unobservable';

/** The planned, stable facts of one demo account. */
export interface SeedAccount {
  index: number;
  id: string;
  handle: string;
  /** The handle after the rename, for `renamed` accounts. */
  newHandle: string | null;
  displayName: string;
  /** Upper-case ASCII base of the account's promo codes (`MAYA` → `MAYA20`). */
  codeBase: string;
  lang: LanguagePack;
  /** Bilingual accounts also post in English. */
  secondLang: LanguagePack | null;
  niches: readonly NicheDef[];
  creator: string;
  followers: number;
  following: number;
  historyPosts: number;
  verified: boolean;
  isPrivate: boolean;
  fate: AccountFate;
  /** When the fate is observed (ms); 0 when the fate is `none`. */
  fateAt: number;
  observedAt: number;
  /** Tracked posts of this account in the dataset. */
  postCount: number;
  windowStart: number;
  windowEnd: number;
  reelShare: number;
  imageShare: number;
}

/** The account plan plus lookup pools for cross-account references. */
export interface AccountPlan {
  accounts: SeedAccount[];
  /** Niche id → indices of public accounts with that niche (coauthors, mentions, sounds). */
  pools: ReadonlyMap<string, readonly number[]>;
  /** Indices of every public account. */
  publicPool: readonly number[];
}

/** Account platform ID: `178414` followed by an 11-digit counter, like long numeric user IDs. */
export function accountId(index: number): string {
  return '178414' + String(index + 1).padStart(11, '0');
}

/** ASCII lowercase of a name, for handles and codes. */
function fold(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

const HANDLE_PATTERNS: readonly ((f: string, l: string, w: string, w2: string) => string)[] = [
  (f, _l, w) => `${w}with${f}`,
  (f, _l, w) => `${f}.${w}`,
  (f, l) => `${f}${l}`,
  (f, l) => `${f}.${l}`,
  (f, _l, w) => `the${w}${f}`,
  (f, _l, w) => `${f}_${w}`,
  (f, _l, w, w2) => `${w2}.${f}_${w}`,
  (f, _l, w) => `${w}by${f}`,
  (f, l, w) => `${f}.${l}_${w}`,
  (f, l) => `${f}_${l.slice(0, 1)}`,
];

function uniqueHandle(rng: Rng, taken: Set<string>, f: string, l: string, niche: NicheDef): string {
  const w = rng.pick(niche.handleWords);
  const w2 = rng.pick(niche.handleWords);
  let handle = rng
    .pick(HANDLE_PATTERNS)(f, l, w, w2 === w ? 'its' : w2)
    .slice(0, 26)
    .replace(/[._]+$/, '');
  // Real users resolve a taken handle the same way: digits, an underscore, a year.
  while (taken.has(handle)) {
    handle = `${handle.replace(/[._]+$/, '')}${rng.chance(0.3) ? '_' : ''}${rng.int(1, 99)}`;
    if (handle.length > 30) handle = `${f}${rng.int(100, 99999)}`;
  }
  taken.add(handle);
  return handle;
}

function pickNiches(rng: Rng): NicheDef[] {
  const first = rng.weighted(NICHES, NICHE_WEIGHTS);
  const count = rng.weighted([1, 2, 3], [60, 30, 10]);
  const out = [first];
  while (out.length < count) {
    const lastRelated = out[out.length - 1]!.related;
    const next = rng.chance(0.65) ? NICHE_BY_ID.get(rng.pick(lastRelated))! : rng.weighted(NICHES, NICHE_WEIGHTS);
    if (!out.includes(next)) out.push(next);
    else if (rng.chance(0.5)) break; // accept fewer niches rather than loop long
  }
  return out;
}

function verifiedChance(followers: number): number {
  if (followers > 1_000_000) return 0.7;
  if (followers > 100_000) return 0.25;
  if (followers > 10_000) return 0.03;
  return 0.003;
}

/**
 * Spreads `posts` over the public accounts with heavy-tailed weights: a floor of one post each
 * (when there are enough posts), the rest proportional to a Pareto weight, capped at a plausible
 * yearly maximum. Systematic rounding makes the counts sum exactly to `posts` without sorting.
 */
function allocatePosts(rng: Rng, accounts: SeedAccount[], eligible: number[], posts: number): void {
  if (eligible.length === 0) return;
  const base = posts >= eligible.length ? 1 : 0;
  const rest = posts - base * eligible.length;
  const weights = eligible.map(() => rng.pareto(1, 1.4, 600));
  const cap = Math.max(1100, Math.ceil((3 * rest) / eligible.length));
  const target = new Float64Array(eligible.length);
  let remaining = rest;
  const free = weights.slice();
  // Water-filling: accounts over the cap keep the cap, the excess goes to the others.
  for (let round = 0; round < 20 && remaining > 1e-9; round++) {
    let total = 0;
    for (const w of free) total += w;
    if (total === 0) break;
    let spilled = 0;
    for (let i = 0; i < free.length; i++) {
      const w = free[i]!;
      if (w === 0) continue;
      const add = (remaining * w) / total;
      const room = cap - target[i]!;
      if (add >= room) {
        target[i] = cap;
        free[i] = 0;
        spilled += add - room;
      } else target[i] = target[i]! + add;
    }
    remaining = spilled;
  }
  let cumulative = 0;
  let assigned = 0;
  for (let i = 0; i < eligible.length; i++) {
    cumulative += target[i]!;
    const upTo = i === eligible.length - 1 ? rest : Math.min(rest, Math.round(cumulative));
    accounts[eligible[i]!]!.postCount = base + upTo - assigned;
    assigned = upTo;
  }
}

/** Plans `count` accounts and distributes `posts` over them. */
export function planAccounts(rng: Rng, count: number, posts: number, now: number): AccountPlan {
  const accounts: SeedAccount[] = [];
  const taken = new Set<string>();
  const eligible: number[] = [];
  for (let index = 0; index < count; index++) {
    const lang = rng.weighted(LANGUAGES, LANGUAGE_WEIGHTS);
    const niches = pickNiches(rng);
    const primary = niches[0]!;
    const first = rng.pick(lang.firstNames);
    const last = rng.pick(lang.lastNames);
    const f = fold(first);
    const l = fold(last);
    const handle = uniqueHandle(rng, taken, f, l, primary);
    const style = rng.next();
    const nicheWord = lang.niches[primary.id] ?? primary.label;
    const displayName =
      style < 0.5
        ? `${first} ${last}`
        : style < 0.8
          ? `${first} | ${nicheWord.charAt(0).toUpperCase()}${nicheWord.slice(1)}`
          : style < 0.9
            ? `${first} ✨`
            : first;
    // Index 0 is always an ordinary public account, so that every post has a possible author.
    const isPrivate = index > 0 && rng.chance(0.08);
    let followers = Math.round(rng.pareto(50, 0.45, 50_000_000));
    if (isPrivate) followers = Math.min(followers, Math.round(rng.logNormal(350, 1)));
    const fateRoll = index > 0 ? rng.next() : 1;
    const fate: AccountFate =
      fateRoll < 0.03
        ? 'renamed'
        : fateRoll < 0.05
          ? rng.weighted(['deleted', 'deactivated', 'unobservable'] as const, [40, 35, 25])
          : 'none';
    const fateAt = fate === 'none' ? 0 : now - rng.uniform(HOUR, 6 * DAY);
    const windowEnd = fate === 'none' || fate === 'renamed' ? now - 20 * 60_000 : fateAt - 12 * HOUR;
    const span = rng.chance(0.7) ? 365 * DAY : rng.uniform(30 * DAY, 365 * DAY);
    accounts.push({
      index,
      id: accountId(index),
      handle,
      displayName,
      newHandle: fate === 'renamed' ? uniqueHandle(rng, taken, f, l, rng.pick(niches)) : null,
      codeBase: f.toUpperCase().slice(0, 8) || 'SAVE',
      lang,
      secondLang: lang !== ENGLISH && rng.chance(0.3) ? ENGLISH : null,
      niches,
      creator: rng.pick(primary.creators),
      followers,
      following: Math.min(7500, Math.round(rng.logNormal(followers > 1_000_000 ? 250 : 480, 0.9))),
      historyPosts: Math.round(rng.logNormal(260, 1.1)),
      verified: rng.chance(verifiedChance(followers)),
      isPrivate,
      fate,
      fateAt,
      observedAt: now - rng.uniform(7 * DAY, 9 * DAY),
      postCount: 0,
      windowStart: Math.max(now - 365 * DAY, windowEnd - span),
      windowEnd,
      reelShare: rng.uniform(0.25, 0.85),
      imageShare: rng.uniform(0.05, 0.35),
    });
    if (!isPrivate) eligible.push(index);
  }
  allocatePosts(rng, accounts, eligible, posts);
  const pools = new Map<string, number[]>();
  for (const i of eligible) {
    for (const n of accounts[i]!.niches) {
      const pool = pools.get(n.id);
      if (pool) pool.push(i);
      else pools.set(n.id, [i]);
    }
  }
  return { accounts, pools, publicPool: eligible };
}

/** Profile facts regenerated from a per-account stream, identical in every observation. */
function profile(acc: SeedAccount, salt: number): Record<string, unknown> {
  const rng = new Rng(hash2(salt, acc.index));
  const primary = acc.niches[0]!;
  const place = rng.pick(acc.lang.places);
  const labels = acc.niches.map((n) => n.label);
  const biography =
    acc.lang === ENGLISH
      ? `${acc.creator.charAt(0).toUpperCase()}${acc.creator.slice(1)} sharing ${labels.join(' & ')} 🌿\n${rng.pick(primary.topics)[1]} & more | ${place.locality} 📍${rng.chance(0.3) ? `\n📩 ${acc.handle}@mail.example` : ''}`
      : acc.lang.bio(acc.lang.niches[primary.id] ?? primary.label, place.locality);
  const links = rng.weighted([0, 1, 2], [40, 45, 15]);
  const bioLinks = [];
  if (links >= 1) bioLinks.push({ url: `https://link.example/${acc.handle}`, title: 'All my links' });
  if (links >= 2) bioLinks.push({ url: `https://shop.example/${acc.handle}`, title: 'Shop my favorites' });
  const type = rng.weighted(['creator', 'business', 'personal'], [75, 15, 10]);
  return {
    avatar_source_url: rng.chance(0.05) ? null : `https://cdn.social.example/avatars/${acc.id}.jpg`,
    biography,
    bio_links: bioLinks,
    account_type: type,
    category_label: type === 'personal' ? 'Personal blog' : rng.chance(0.2) ? 'Digital creator' : primary.category,
    declared_locations: rng.chance(0.4) ? [place] : [],
  };
}

/** The active `account` observation of an account, before (`initial`) or after its rename. */
export function accountObservation(acc: SeedAccount, salt: number, renamed: boolean): Record<string, unknown> {
  const handle = renamed && acc.newHandle ? acc.newHandle : acc.handle;
  const p = profile(acc, salt);
  const growth = renamed ? 1 + ((acc.index * 7919) % 50) / 1000 : 1; // a few days of follower growth
  return {
    kind: 'account',
    platform_id: acc.id,
    observed_at: iso(renamed ? acc.fateAt : acc.observedAt),
    status: 'active',
    handle,
    display_name: acc.displayName,
    web_url: `https://social.example/${handle}`,
    avatar_source_url: p.avatar_source_url,
    biography: p.biography,
    bio_links: p.bio_links,
    account_type: p.account_type,
    category_label: p.category_label,
    declared_locations: p.declared_locations,
    is_verified: acc.verified,
    is_private: acc.isPrivate,
    followers_count: Math.round(acc.followers * growth),
    following_count: acc.following,
    posts_count: acc.postCount + acc.historyPosts + (renamed ? 2 : 0),
  };
}

/** The `account_enrichment` of an account, as a pipeline derives it from the account's posts. */
export function accountEnrichment(acc: SeedAccount, producedAt: number): Record<string, unknown> {
  const labels = acc.niches.map((n) => n.label);
  const topics = acc.niches.flatMap((n) => n.topics.slice(0, 2).map((t) => t[1]));
  const languages = acc.secondLang ? [acc.lang.code, acc.secondLang.code] : [acc.lang.code];
  const langNames = acc.secondLang ? `${acc.lang.name} and ${acc.secondLang.name}` : acc.lang.name;
  const creator = acc.creator.charAt(0).toUpperCase() + acc.creator.slice(1);
  return {
    kind: 'account_enrichment',
    account_platform_id: acc.id,
    produced_at: iso(producedAt),
    publishing_summary: `${creator} publishing ${langNames} ${labels.join(', ')} content, mostly about ${topics.slice(0, 3).join(', ')}.`,
    publishing_languages: languages,
    niches: acc.niches.map((n) => n.id),
  };
}

/** Second-precision ISO 8601 UTC, as pipelines usually send. */
export function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19) + 'Z';
}
