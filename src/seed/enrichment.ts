import { iso } from './accounts.ts';
import { HOOK_SLOTS } from './language-pack.ts';
import type { OfferPlan, PostPlan } from './post-plan.ts';
import type { Rng } from './random.ts';
import {
  CREATIVE_FORMATS,
  EN_CTAS,
  EN_HOOKS,
  NARRATIVES,
  NICHE_FORMATS,
  PROOFS,
  type TemplateArgs,
} from './vocabulary.ts';

/**
 * Builds `post_enrichment` observations from a post's {@link PostPlan}. Summaries are English,
 * whatever the post's language, as enrichment pipelines usually normalize them; transcripts and
 * on-screen text stay in the post's language.
 */

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const stripEmoji = (s: string): string =>
  s
    .replace(/\p{Extended_Pictographic}\uFE0F?/gu, '')
    .replace(/ {2,}/g, ' ')
    .trim();

/** A caption line as a spoken sentence: no emoji, closed by a full stop unless already closed. */
function spokenSentence(s: string, ja: boolean): string {
  const t = stripEmoji(s).replace(/:$/, '');
  return /[.?!。？！]$/.test(t) ? t : t + (ja ? '。' : '.');
}

/** Who the post shows: the account's own creator kind, or a generic one for a secondary niche. */
function creatorOf(p: PostPlan): string {
  return p.niche === p.acc.niches[0] ? p.acc.creator : `${p.niche.label} creator`;
}
const article = (s: string): string => (/^[aeiou]/i.test(s) ? 'an ' : 'a ') + s;

const VERBS: Readonly<Record<string, readonly string[]>> = {
  reel: ['walks through', 'demonstrates', 'explains', 'films'],
  carousel: ['breaks down', 'summarizes', 'lays out'],
  image: ['shares', 'presents'],
};
const MEDIUM: Readonly<Record<string, string>> = {
  reel: 'a short video',
  carousel: 'a slide carousel',
  image: 'a single photo',
};

function offerSummary(o: OfferPlan, a: TemplateArgs): { summary: string; types: string[]; terms: string[] } {
  const extra = o.extraTerm ? [o.extraTerm] : [];
  switch (o.kind) {
    case 'code':
      return {
        summary: `${o.pct}% discount on the ${o.brand} ${a.item} with promo code ${o.code}`,
        types: ['discount', 'promo_code'],
        terms: [`${o.pct}% off`, `code ${o.code}`, ...extra],
      };
    case 'sale':
      return {
        summary: `${o.pct}% off the ${o.brand} ${a.item} through the profile link`,
        types: ['discount'],
        terms: [`${o.pct}% off`, ...extra],
      };
    case 'giveaway':
      return {
        summary: `Giveaway of a ${o.brand} ${a.item}`,
        types: ['giveaway'],
        terms: ['follow and comment to enter', 'winner picked Friday'],
      };
    case 'freebie':
      return { summary: `Free ${a.phrase} checklist`, types: ['free_resource'], terms: ['free download'] };
  }
}

function summary(p: PostPlan, rng: Rng): string {
  const { args, offer } = p;
  let out = `${cap(article(creatorOf(p)))} ${rng.pick(VERBS[p.format]!)} their ${args.phrase} in ${MEDIUM[p.format]}: ${p.topic[2]}.`;
  out += rng.chance(0.5) ? ` Recommends the ${args.item}.` : ` Aimed at viewers dealing with ${args.pain}.`;
  if (offer?.kind === 'code') out += ` Includes a ${offer.pct}% discount code (${offer.code}) for ${offer.brand}.`;
  else if (offer?.kind === 'sale') out += ` Mentions a ${offer.pct}% ${offer.brand} sale.`;
  else if (offer?.kind === 'giveaway') out += ` Runs a ${offer.brand} giveaway.`;
  else if (offer?.kind === 'freebie') out += ' Offers a free checklist.';
  if (p.sponsor) out += ` Sponsored by ${p.sponsor}.`;
  if (p.lang.code !== 'en') out += ` In ${p.lang.name}.`;
  return out;
}

function modalities(p: PostPlan, rng: Rng): string[] {
  if (p.format === 'reel')
    return rng.chance(0.6) ? ['spoken', 'on_screen_text'] : ['spoken', 'visual', 'on_screen_text'];
  return p.format === 'carousel' ? ['visual', 'on_screen_text'] : ['visual', 'caption'];
}

function ctaModalities(p: PostPlan): string[] {
  return p.format === 'reel'
    ? ['spoken', 'caption']
    : p.format === 'carousel'
      ? ['caption', 'on_screen_text']
      : ['caption'];
}

/** Transcript lines of a video item, in the post's language. */
function transcript(p: PostPlan, rng: Rng, first: boolean): string {
  const { lang, args, offer } = p;
  if (lang.code !== 'en') {
    const label = lang.niches[p.niche.id] ?? p.niche.label;
    const lines = lang.spoken.map((s) => s(label, args.item));
    if (first) lines.unshift(spokenSentence(p.hookText, lang.code === 'ja'));
    if (offer) lines.push(stripEmoji(lang.offer(offer.pct, offer.code, offer.brand)));
    return lines.join(lang.code === 'ja' ? '' : ' ');
  }
  let out = first ? spokenSentence(p.hookText, false) + ' ' : '';
  out += `Okay so today I'm showing you my ${args.phrase}. ${cap(p.topic[2])}. `;
  out += rng.chance(0.6)
    ? `Honestly the ${args.item} changed everything for me. `
    : `I used to struggle with ${args.pain}, so this one is personal. `;
  if (offer?.kind === 'code')
    out += `And if you want to try it, code ${offer.code} gets you ${offer.pct}% off at ${offer.brand}. `;
  if (p.ctas.includes('save_post')) out += 'Save this so you have it for later. ';
  if (p.ctas.includes('follow_account')) out += `Follow for more ${p.niche.label} tips.`;
  return out.trim();
}

/** Per-media enrichment: transcripts and timed text on videos, untimed text on images. */
function mediaEnrichment(p: PostPlan, rng: Rng): Record<string, unknown>[] {
  return p.media.map((m, i) => {
    const visual = rng.pick(p.niche.visuals);
    if (m.type === 'video') {
      const d = m.duration ?? 15;
      const visible: { text: string; start_seconds: number; end_seconds: number }[] = [
        { text: p.hookText, start_seconds: 0, end_seconds: Math.min(d, 2.5) },
      ];
      if (d > 6)
        visible.push({
          text: rng.pick(p.niche.onScreen),
          start_seconds: Math.round(d * 0.3),
          end_seconds: Math.round(d * 0.3) + 3,
        });
      if (p.offer?.kind === 'code' && d > 10)
        visible.push({
          text: `code ${p.offer.code}`,
          start_seconds: Math.round(d * 0.7),
          end_seconds: Math.min(d, Math.round(d * 0.7) + 3),
        });
      return {
        platform_id: m.id,
        transcript: rng.chance(0.08) ? null : transcript(p, rng, i === 0),
        visible_text: visible,
        visual_description: `Vertical video: ${visual}, then ${rng.pick(p.niche.visuals)}.`,
      };
    }
    const text = i === 0 ? [{ text: p.hookText }] : rng.chance(0.5) ? [{ text: rng.pick(p.niche.onScreen) }] : [];
    const where = p.format === 'carousel' ? `Slide ${i + 1}: ` : 'Photo: ';
    return { platform_id: m.id, visible_text: text, visual_description: `${where}${visual}.` };
  });
}

/** The `post_enrichment` observation of a planned post, produced at `producedAt`. */
export function postEnrichment(p: PostPlan, rng: Rng, producedAt: number): Record<string, unknown> {
  const { args, offer } = p;
  const en = p.lang.code === 'en';
  const hookTemplate = en ? EN_HOOKS[p.hookIndex]! : null;
  const slot = HOOK_SLOTS[p.hookIndex % HOOK_SLOTS.length]!;
  const topics = [p.topic[0]];
  if (rng.chance(0.3)) {
    const extra = rng.pick(p.niche.topics)[0];
    if (extra !== p.topic[0]) topics.push(extra);
  }
  const formats = [rng.pick(CREATIVE_FORMATS[p.format]!)];
  const nicheFormat = NICHE_FORMATS[p.niche.id];
  if (nicheFormat && p.format === 'reel' && rng.chance(0.5)) formats.push(nicheFormat);

  const keyMessages = [
    {
      summary: cap(p.topic[2]),
      roles: [rng.chance(0.7) ? 'instruction' : 'recommendation'],
      presentation: p.format === 'reel' ? 'demonstrated' : 'asserted',
    },
  ];
  if (rng.chance(0.6))
    keyMessages.push({
      summary: `The ${args.item} helps with ${args.pain}`,
      roles: ['benefit', 'claim'],
      presentation: 'asserted',
    });

  const proofCount = rng.weighted([0, 1, 2], [30, 55, 15]);
  const proofs = rng.sample(PROOFS, proofCount).map((pr) => ({
    summary: pr.summary(args, creatorOf(p)),
    mechanisms: pr.mechanisms.slice(),
    cited_source_types: pr.cited.slice(),
  }));

  const offers = offer
    ? [offerSummary(offer, args)].map((o) => ({ summary: o.summary, types: o.types, stated_terms: o.terms }))
    : [];
  const ctaMods = ctaModalities(p);
  const ctas = p.ctas.map((action) => {
    // Any action name: the offer's call to action below adds others.
    const actions: string[] = [action];
    return {
      summary: EN_CTAS[action].summary(p.niche.label),
      actions,
      stages: [action === 'follow_account' && p.followFirst && p.format === 'reel' ? 'opening' : 'closing'],
      modalities: ctaMods,
    };
  });
  if (offer?.kind === 'code') {
    ctas.push({
      summary: `Asks viewers to use code ${offer.code} at checkout`,
      actions: ['use_promo_code', 'visit_profile_link'],
      stages: ['closing'],
      modalities: ctaMods,
    });
  }
  const narrative = NARRATIVES[p.narrativeIndex]!;

  const contexts: string[] = [];
  if (p.sponsor) contexts.push(p.labelled ? 'paid_partnership' : rng.chance(0.5) ? 'gifted_product' : 'affiliate');
  else if (offer?.kind === 'code' || offer?.kind === 'sale') contexts.push('affiliate');
  if (offer && (offer.kind === 'code' || offer.kind === 'sale')) contexts.push('discount_promotion');
  if (offer?.kind === 'giveaway') contexts.push('giveaway');
  if (offer?.kind === 'freebie') contexts.push('lead_magnet');
  if (contexts.length === 0) contexts.push('organic');

  return {
    kind: 'post_enrichment',
    post_platform_id: p.id,
    produced_at: iso(producedAt),
    primary_language: p.lang.code,
    content_summary: summary(p, rng),
    topics,
    creative_formats: formats,
    hook: {
      construction: hookTemplate ? hookTemplate.construction(args) : slot.construction(p.niche.label),
      devices: (hookTemplate ? hookTemplate.devices : slot.devices).slice(),
      modalities: modalities(p, rng),
    },
    key_messages: keyMessages,
    proofs,
    offers,
    calls_to_action: ctas,
    narrative_structure: { description: narrative.describe(args), patterns: narrative.patterns.slice() },
    has_paid_partnership_label: p.labelled,
    paid_partners: p.sponsor ? [{ name: p.sponsor }] : [],
    commercial_contexts: contexts,
    media: mediaEnrichment(p, rng),
  };
}
