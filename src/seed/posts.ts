import { DAY, iso, type AccountPlan, type SeedAccount } from './accounts.ts';
import type { LanguagePack } from './language-pack.ts';
import type { MediaPlan, OfferPlan, PostFormat, PostPlan } from './post-plan.ts';
import { mix32, hash2, type Rng } from './random.ts';
import {
  CTA_ACTIONS,
  DISCOUNTS,
  EN_ASIDES,
  EN_BODIES,
  EN_CTAS,
  EN_HOOKS,
  GENERIC_TAGS,
  MUSIC_WORDS,
  NARRATIVES,
  OFFER_TERMS,
  type NicheDef,
  type TemplateArgs,
  type TopicTuple,
} from './vocabulary.ts';

/**
 * Builds `post` observations and remembers, per post, the choices its enrichment must describe
 * (a {@link PostPlan}), so that caption, transcript and enrichment tell the same story.
 */

const SHORTCODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const CAROUSEL_SIZES = [2, 3, 4, 5, 6, 7, 8, 9, 10];
const CAROUSEL_WEIGHTS = [14, 16, 16, 14, 11, 9, 8, 6, 6];
const ASPECTS: readonly (readonly [number, number])[] = [
  [1080, 1350],
  [1080, 1080],
  [1080, 566],
];
const TRACK_COUNT = MUSIC_WORDS.first.length * MUSIC_WORDS.second.length;

/**
 * An 11-character shortcode, unique per post index: the first six characters carry a bijective
 * mix of the index (so no two posts collide), the rest are hash noise so codes look random.
 */
export function shortcode(seedHash: number, index: number): string {
  const unique = mix32((index ^ seedHash) >>> 0);
  const noise = hash2(seedHash, index);
  // Six characters hold 36 bits: 4 bits of noise above the 32 unique bits.
  let out = SHORTCODE_ALPHABET[((noise >>> 28) << 2) | (unique >>> 30)]!;
  for (let shift = 24; shift >= 0; shift -= 6) out += SHORTCODE_ALPHABET[(unique >>> shift) & 63];
  for (let shift = 24; shift >= 0; shift -= 6) out += SHORTCODE_ALPHABET[(noise >>> shift) & 63];
  return out;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * How many latent styles each niche has: an account's style is a group of its primary niche's
 * topics (`STYLE_TOPICS` of them) that most of its posts there are about. Lookalikes are judged
 * by it (bench/relevance.md, "Lookalikes").
 */
export const STYLES_PER_NICHE = 3;
const STYLE_TOPICS = 2;
/** Share of an account's posts in its primary niche that keep to its style's topics. */
const STYLE_SHARE = 0.8;

/** The latent style of an account (0 to STYLES_PER_NICHE − 1), from the dataset's seed hash. */
export function accountStyle(acc: Pick<SeedAccount, 'index'>, seedHash: number): number {
  return mix32(hash2(seedHash ^ 0x57e1e, acc.index)) % STYLES_PER_NICHE;
}

/** A topic of `style` for post `index` (most of the time), else null (the drawn topic stays). */
function styledTopic(niche: NicheDef, style: number, index: number, seedHash: number): TopicTuple | null {
  const roll = mix32(hash2(seedHash ^ 0x70b1c, index));
  if (roll / 4294967296 >= STYLE_SHARE) return null;
  return niche.topics[(style * STYLE_TOPICS + (roll & 1)) % niche.topics.length] ?? null;
}

/** The hash that keys the per-post side streams (shortcodes, styles) of a dataset with `salt`. */
export function seedHashOf(salt: number): number {
  return mix32(hash2(salt, 0x5eed));
}

/** Stateful post builder: owns the ID counters and the shared random stream. */
export class PostBuilder {
  private postIndex = 0;
  private mediaIndex = 0;
  private readonly seedHash: number;

  constructor(
    private readonly rng: Rng,
    private readonly plan: AccountPlan,
    private readonly now: number,
    salt: number,
  ) {
    this.seedHash = seedHashOf(salt);
  }

  /** Builds the next post of `acc`, published at `postedAt`. */
  build(acc: SeedAccount, postedAt: number): { post: Record<string, unknown>; plan: PostPlan } {
    const rng = this.rng;
    const index = this.postIndex++;
    const id = '31' + pad(index + 1, 17);
    const lang = acc.secondLang && rng.chance(0.3) ? acc.secondLang : acc.lang;
    const niche = acc.niches.length === 1 || rng.chance(0.65) ? acc.niches[0]! : rng.pick(acc.niches);
    const drawn = rng.pick(niche.topics);
    // In its primary niche an account keeps mostly to the topics of its style (a side stream:
    // the draws above and below are the same with or without styles).
    const topic =
      niche === acc.niches[0]
        ? (styledTopic(niche, accountStyle(acc, this.seedHash), index, this.seedHash) ?? drawn)
        : drawn;
    const args: TemplateArgs = {
      phrase: topic[1],
      item: rng.pick(niche.items),
      pain: rng.pick(niche.pains),
      n: rng.int(3, 7),
    };
    const r = rng.next();
    const format: PostFormat =
      r < acc.reelShare ? 'reel' : r < acc.reelShare + (1 - acc.reelShare) * acc.imageShare ? 'image' : 'carousel';
    const media = this.media(format);

    const limit = acc.fate === 'none' || acc.fate === 'renamed' ? this.now : acc.fateAt - 60_000;
    const observedAt = Math.max(
      postedAt + 60_000,
      Math.min(limit, postedAt + Math.max(5 * 60_000, rng.logNormal(2 * DAY, 1.2))),
    );

    const sponsored = rng.chance(acc.followers > 50_000 ? 0.12 : 0.05);
    const sponsor = sponsored ? rng.pick(niche.brands) : null;
    const offer = this.offer(acc, lang, niche, sponsored);
    const ctaCount = rng.weighted([0, 1, 2], [20, 55, 25]);
    const ctas = ctaCount === 0 ? [] : rng.sample(CTA_ACTIONS, ctaCount);
    const hookIndex = lang.code === 'en' ? rng.int(0, EN_HOOKS.length - 1) : rng.int(0, 3);
    const hookText =
      lang.code === 'en'
        ? EN_HOOKS[hookIndex]!.render(args)
        : // rng.int(0, 3) is an index of the four hooks every language has.
          lang.hooks[hookIndex as 0](lang.niches[niche.id] ?? niche.label);
    const plan: PostPlan = {
      id,
      acc,
      lang,
      niche,
      topic,
      args,
      format,
      hookIndex,
      hookText,
      narrativeIndex: rng.int(0, NARRATIVES.length - 1),
      ctas,
      followFirst: rng.chance(0.4),
      offer,
      sponsor,
      labelled: sponsored && rng.chance(0.8),
      media,
      observedAt,
    };

    const coauthors = rng.chance(0.05) ? this.others(acc, rng.chance(0.8) ? 1 : 2) : [];
    const mentioned = rng.chance(0.1) ? this.others(acc, rng.chance(0.75) ? 1 : 2) : [];
    for (const c of coauthors) if (rng.chance(0.5) && !mentioned.includes(c)) mentioned.push(c);
    const mentions = mentioned.map((i) => '@' + this.plan.accounts[i]!.handle);
    const tags = this.hashtags(niche, topic, lang);
    const caption = this.caption(plan, mentions, tags);

    const views = format === 'reel' ? this.views(acc, postedAt, observedAt) : null;
    const ageFactor = 1 - Math.exp(-(observedAt - postedAt) / (1.5 * DAY));
    const likes =
      views !== null
        ? Math.min(views, Math.round(views * rng.logNormal(0.045, 0.6)))
        : Math.round((acc.followers * rng.logNormal(0.03, 0.7) + rng.logNormal(8, 1)) * Math.max(0.05, ageFactor));
    const commentsEnabled = rng.chance(0.96);
    const code = shortcode(this.seedHash, index);
    const post: Record<string, unknown> = {
      kind: 'post',
      platform_id: id,
      observed_at: iso(observedAt),
      status: 'available',
      shortcode: code,
      web_url: `https://social.example/p/${code}`,
      author_platform_id: acc.id,
      coauthor_platform_ids: coauthors.map((i) => this.plan.accounts[i]!.id),
      posted_at: iso(postedAt),
      format,
      caption,
      caption_mentions: mentions,
      comments_enabled: commentsEnabled,
      views,
      likes,
      comments: commentsEnabled ? Math.round(likes * rng.logNormal(0.02, 0.8)) : 0,
      audio: this.audio(acc, format, media[0]!.duration),
      media: media.map((m) => this.mediaItem(m)),
    };
    if (rng.chance(0.2)) post.hashtags = tags;
    return { post, plan };
  }

  private media(format: PostFormat): MediaPlan[] {
    const rng = this.rng;
    // A carousel shares one aspect ratio, which its first item sets on the platform.
    const [width, height] = format === 'reel' ? [1080, 1920] : rng.weighted(ASPECTS, [60, 35, 5]);
    const next = (type: 'image' | 'video', duration: number | null): MediaPlan => ({
      id: '18' + pad(++this.mediaIndex, 17),
      type,
      width,
      height,
      duration,
    });
    if (format === 'reel') return [next('video', round1(Math.min(90, Math.max(5, rng.logNormal(22, 0.6)))))];
    if (format === 'image') return [next('image', null)];
    const size = rng.weighted(CAROUSEL_SIZES, CAROUSEL_WEIGHTS);
    const out: MediaPlan[] = [];
    for (let i = 0; i < size; i++) {
      out.push(
        rng.chance(0.2)
          ? next('video', round1(Math.min(60, Math.max(3, rng.logNormal(12, 0.5)))))
          : next('image', null),
      );
    }
    return out;
  }

  private mediaItem(m: MediaPlan): Record<string, unknown> {
    const { width, height } = m;
    if (m.type === 'image') {
      return {
        platform_id: m.id,
        type: 'image',
        width,
        height,
        source_url: `https://cdn.social.example/media/${m.id}.jpg`,
      };
    }
    return {
      platform_id: m.id,
      type: 'video',
      width,
      height,
      source_url: `https://cdn.social.example/media/${m.id}.mp4`,
      duration_seconds: m.duration,
      thumbnail_source_url: this.rng.chance(0.97) ? `https://cdn.social.example/media/${m.id}_thumb.jpg` : null,
    };
  }

  /** Heavy-tailed reach: log-normal around a fraction of followers, a floor from non-followers, rare virality. */
  private views(acc: SeedAccount, postedAt: number, observedAt: number): number {
    const rng = this.rng;
    let reach = acc.followers * rng.logNormal(0.3, 1.0) + rng.logNormal(150, 1.2);
    // Breakout reels happen to small and mid-size accounts; giants are already at their reach.
    if (rng.chance(0.015) && acc.followers < 2_000_000) reach *= rng.uniform(8, 60);
    const age = (observedAt - postedAt) / DAY;
    return Math.round(reach * Math.max(0.03, 1 - Math.exp(-age / 1.2)));
  }

  private offer(acc: SeedAccount, lang: LanguagePack, niche: NicheDef, sponsored: boolean): OfferPlan | null {
    const rng = this.rng;
    if (!rng.chance(sponsored ? 0.6 : 0.14)) return null;
    // Only code offers have a phrase in every language pack.
    const kind =
      lang.code === 'en' ? rng.weighted(['code', 'sale', 'giveaway', 'freebie'] as const, [60, 15, 12, 13]) : 'code';
    const pct = rng.pick(DISCOUNTS);
    const brand = rng.pick(niche.brands);
    return {
      kind,
      pct,
      code: `${acc.codeBase}${pct}`,
      brand,
      extraTerm: rng.chance(0.4) ? rng.pick(OFFER_TERMS) : null,
    };
  }

  /** Distinct other public accounts, preferably sharing the niche. */
  private others(acc: SeedAccount, count: number): number[] {
    const rng = this.rng;
    const pool = rng.chance(0.8)
      ? (this.plan.pools.get(acc.niches[0]!.id) ?? this.plan.publicPool)
      : this.plan.publicPool;
    const out: number[] = [];
    for (let tries = 0; tries < count * 4 && out.length < count; tries++) {
      const i = rng.pick(pool);
      if (i !== acc.index && !out.includes(i)) out.push(i);
    }
    return out;
  }

  private hashtags(niche: NicheDef, topic: TopicTuple, lang: LanguagePack): string[] {
    const rng = this.rng;
    if (rng.chance(0.12)) return [];
    const tags = [topic[0].replace(/_/g, '')];
    for (const t of rng.sample(niche.hashtags, rng.int(1, 5))) if (!tags.includes(t)) tags.push(t);
    if (rng.chance(0.4)) tags.push(rng.pick(lang.code === 'en' ? GENERIC_TAGS : lang.tags));
    return tags;
  }

  private caption(p: PostPlan, mentions: string[], tags: string[]): string {
    const rng = this.rng;
    const { lang, args, offer, acc } = p;
    const label = lang.niches[p.niche.id] ?? p.niche.label;
    const lines: string[] = [p.hookText];
    if (lang.code === 'en') {
      let body = rng.pick(EN_BODIES)(p.topic[2], args);
      if (rng.chance(0.4)) body += ' ' + rng.pick(EN_ASIDES);
      lines.push(body);
      if (offer) lines.push(enOffer(offer, args));
    } else {
      lines.push(rng.pick(lang.bodies)(label, args.item));
      if (offer) lines.push(lang.offer(offer.pct, offer.code, offer.brand));
    }
    if (p.sponsor) lines.push(lang.partnership(p.sponsor));
    if (mentions.length > 0) lines.push(lang.mention(mentions.map((m) => m.slice(1)).join(' @')));
    for (const action of p.ctas) {
      lines.push(lang.code === 'en' ? EN_CTAS[action].line(acc.handle, p.niche.label) : lang.ctas[action](acc.handle));
    }
    if (tags.length > 0) lines.push(tags.map((t) => '#' + t).join(' '));
    return lines.join('\n\n');
  }

  /** Audio: on ~70% of reels and a few other posts; original sounds attribute an existing account. */
  private audio(acc: SeedAccount, format: PostFormat, videoDuration: number | null): Record<string, unknown> | null {
    const rng = this.rng;
    if (!rng.chance(format === 'reel' ? 0.7 : 0.12)) return null;
    if (format === 'reel' && rng.chance(0.45)) {
      let owner = acc;
      if (rng.chance(0.25)) {
        const pool = this.plan.pools.get(acc.niches[0]!.id) ?? this.plan.publicPool;
        owner = this.plan.accounts[rng.pick(pool)]!;
      }
      // An account's own sound is new per post; a reused sound is the owner's signature sound.
      const pid = rng.chance(0.07)
        ? null
        : owner === acc
          ? '8' + pad(this.postIndex, 15)
          : '9' + pad(owner.index + 1, 15);
      return {
        platform_id: pid,
        type: 'original_sound',
        title: 'Original audio',
        attribution_display_name: owner.displayName,
        attribution_account_platform_id: owner.id,
        duration_seconds: owner === acc && videoDuration !== null ? videoDuration : round1(rng.uniform(8, 45)),
        web_url: pid === null ? null : `https://social.example/audio/${pid}`,
      };
    }
    // A Zipf-ish pick from a fixed catalog, so popular tracks recur across posts.
    const track = Math.min(TRACK_COUNT - 1, Math.floor(rng.pareto(1, 0.8, TRACK_COUNT + 1)) - 1);
    const pid = rng.chance(0.07) ? null : '5' + pad(track + 1, 15);
    return {
      platform_id: pid,
      type: 'music',
      title: `${MUSIC_WORDS.first[track % MUSIC_WORDS.first.length]} ${MUSIC_WORDS.second[Math.floor(track / MUSIC_WORDS.first.length)]}`,
      attribution_display_name: MUSIC_WORDS.artists[mix32(track) % MUSIC_WORDS.artists.length]!,
      attribution_account_platform_id: null,
      duration_seconds: 15 + (mix32(track + 7) % 46),
      web_url: pid === null ? null : `https://social.example/audio/${pid}`,
    };
  }
}

/** The English caption line of an offer. */
function enOffer(o: OfferPlan, a: TemplateArgs): string {
  const terms = o.extraTerm ? ` (${o.extraTerm})` : '';
  switch (o.kind) {
    case 'code':
      return `Use code ${o.code} for ${o.pct}% off the ${o.brand} ${a.item} 🛍️${terms}`;
    case 'sale':
      return `The ${o.brand} ${a.item} is ${o.pct}% off right now, link in bio${terms}`;
    case 'giveaway':
      return `GIVEAWAY 🎁 Win a ${o.brand} ${a.item}: follow and comment to enter, winner picked Friday`;
    case 'freebie':
      return `Free ${a.phrase} checklist at the link in bio`;
  }
}
