/**
 * The social query set (bench/relevance.md, "Relevance for social queries"): queries and relevance
 * judgments derived from the demo generator's own observations, never written by hand. The
 * generated posts carry known hashtags, mentions, authors, languages, topics and offers (their
 * `post_enrichment` says which), so what is relevant to each query follows from the data.
 */
import { mintId } from '../../src/contract/ids.ts';
import { hashtagsFromCaption } from '../../src/domain/merge.ts';
import { LANGUAGES } from '../../src/seed/languages.ts';
import type { SeedPostLabel } from '../../src/seed/generator.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { DEV_QUESTIONS } from './dev-question-set.ts';
import { PARAPHRASED_QUESTIONS } from './paraphrase-set.ts';

/** One query of the set, with its judgments (post ID → grade). */
export interface SocialQuery {
  id: string;
  kind:
    | 'hashtag'
    | 'handle'
    | 'intent'
    | 'language'
    | 'nonsense'
    | 'topic'
    | 'question'
    | 'language-question'
    | 'paraphrase'
    | 'paraphrase-topic'
    | 'dev';
  /** The niche the query is about (topic, question, language-question): results outside it are off-niche. */
  niche?: string;
  /** Query language (intent: en; nonsense: none). */
  language: string | null;
  text: string;
  judgments: Map<string, number>;
}

interface PostFacts {
  id: string;
  author: string;
  hashtags: string[];
  mentions: string[];
  language: string | null;
  topics: string[];
  contexts: string[];
}

type Obs = Record<string, unknown>;

/** Topic id → its niche and English phrase. */
const TOPICS = new Map(NICHES.flatMap((n) => n.topics.map((t) => [t[0], { niche: n.id, phrase: t[1] }] as const)));

/**
 * What the observations say about every post, with each account's latest handle. A post without a
 * `post_enrichment` takes its topic and language from `labels` when given (the generator's own:
 * its caption was written about that topic whether or not the pipeline has enriched it yet).
 */
function postFacts(observations: readonly Obs[], labels?: ReadonlyMap<string, SeedPostLabel>): Map<string, PostFacts> {
  const handles = new Map<string, string>();
  const posts = new Map<string, PostFacts>();
  const enriched = new Set<string>();
  for (const o of observations) {
    if (o['kind'] === 'account' && typeof o['handle'] === 'string')
      handles.set(o['platform_id'] as string, o['handle'].toLowerCase());
    if (o['kind'] === 'post') {
      const caption = o['caption'] as string;
      const tags = (o['hashtags'] as string[] | undefined) ?? hashtagsFromCaption(caption);
      posts.set(o['platform_id'] as string, {
        id: mintId('post', o['platform_id'] as string),
        author: o['author_platform_id'] as string,
        hashtags: [...new Set(tags.map((t) => t.toLowerCase()))],
        mentions: ((o['caption_mentions'] as string[] | undefined) ?? []).map((m) => m.replace(/^@/, '').toLowerCase()),
        language: null,
        topics: [],
        contexts: [],
      });
    }
    if (o['kind'] === 'post_enrichment') {
      const post = posts.get(o['post_platform_id'] as string);
      if (!post) continue;
      enriched.add(o['post_platform_id'] as string);
      post.language = (o['primary_language'] as string | null) ?? null;
      post.topics = (o['topics'] as string[] | null) ?? [];
      post.contexts = (o['commercial_contexts'] as string[] | null) ?? [];
    }
  }
  for (const post of posts.values()) post.author = handles.get(post.author) ?? '';
  for (const [platformId, post] of posts) {
    const label = labels?.get(platformId);
    if (!label || enriched.has(platformId)) continue;
    post.language = label.language;
    post.topics = [label.topic];
    if (label.discount) post.contexts = ['discount_promotion'];
  }
  return posts;
}

/** Every `n`-th of a sorted list, at most `max`: spread over the list, deterministic. */
function spread<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const step = items.length / max;
  return Array.from({ length: max }, (_, i) => items[Math.floor(i * step)]!);
}

/**
 * Questions as people type them around a topic's phrase: function words ("how do I", "what"), and
 * generic words that other niches' captions carry too ("beginner", "cheap", "best", "tips", "get").
 */
const EN_QUESTIONS: readonly ((phrase: string) => string)[] = [
  (p) => `how should a beginner get started with ${p}?`,
  (p) => `any cheap tips for ${p}?`,
  (p) => `what do I need to know about ${p}`,
  (p) => `is ${p} worth it? what are the best options`,
  (p) => `how can I get better at ${p} without expensive stuff`,
];

/** The same kind of question in each other language of the data, around its niche phrase. */
const QUESTIONS: Readonly<Record<string, (niche: string) => string>> = {
  es: (t) => `¿cómo empiezo con ${t} si soy principiante?`,
  pt: (t) => `como começar com ${t} sendo iniciante?`,
  fr: (t) => `comment débuter en ${t} quand on est débutant ?`,
  de: (t) => `wie fange ich als Anfänger mit ${t} an?`,
  it: (t) => `come posso iniziare con ${t} da principiante?`,
  ja: (t) => `初心者は${t}をどうやって始めればいいですか？`,
};

/** Strings with no meaning in any language of the data: keyboard runs, emoji, random letters. */
export const NONSENSE_QUERIES = [
  '🔥🔥🔥',
  '🫠🫠',
  'zxqv wplkj vvrq',
  'aaaaaaaaaaaaaaaa',
  'qwertyuiop',
  'asdfghjkl asdf',
  'xkq zzt brrp',
  'hjkl hjkl hjkl',
  'mnbvcxz',
  'ppppqqqq',
  'zzzz yyyy xxxx',
  'wqzx plmq',
  'grblfrxx',
  'ooooooooooo',
  'jjjjjj kkkk',
  'qqq www eee rrr',
  'vbnm vbnm',
  'trrrkkk',
  'fjdksla',
  'yyyyyyyyy',
];

/** The query set of a generated dataset, judged on the posts `servable` holds. */
export function socialQuerySet(
  observations: readonly Obs[],
  servable: ReadonlySet<string>,
  labels?: ReadonlyMap<string, SeedPostLabel>,
): SocialQuery[] {
  const posts = [...postFacts(observations, labels).values()].filter((p) => servable.has(p.id));
  const out: SocialQuery[] = [];
  const judged = (ids: Iterable<string>, grade = 1) => new Map([...ids].map((id) => [id, grade]));

  // Entities: rare hashtags (2–10 posts carry them), bare and with `#`; handles (1–10 posts
  // mention them or are theirs), with `@`.
  const byTag = new Map<string, string[]>();
  for (const p of posts) for (const t of p.hashtags) byTag.set(t, [...(byTag.get(t) ?? []), p.id]);
  const rareTags = [...byTag]
    .filter(([, ids]) => ids.length >= 2 && ids.length <= 10)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [tag, ids] of spread(rareTags, 15)) {
    out.push({ id: `tag:${tag}`, kind: 'hashtag', language: null, text: tag, judgments: judged(ids) });
    out.push({ id: `#tag:${tag}`, kind: 'hashtag', language: null, text: `#${tag}`, judgments: judged(ids) });
  }
  const byHandle = new Map<string, Set<string>>();
  for (const p of posts) {
    for (const h of [p.author, ...p.mentions]) if (h) byHandle.set(h, (byHandle.get(h) ?? new Set()).add(p.id));
  }
  const rareHandles = [...byHandle].filter(([, ids]) => ids.size <= 10).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [handle, ids] of spread(rareHandles, 15)) {
    out.push({ id: `@:${handle}`, kind: 'handle', language: null, text: `@${handle}`, judgments: judged(ids) });
  }

  // Intent (English): a topic's phrase; every other topic of a niche also asks for a discount
  // code. Grade 2: the topic (and the discount); 1: the topic without the discount, or the niche.
  for (const niche of NICHES) {
    for (const [i, [topicId, phrase]] of niche.topics.slice(0, 2).entries()) {
      const discount = i === 1;
      const judgments = new Map<string, number>();
      for (const p of posts) {
        const onTopic = p.topics.includes(topicId);
        const inNiche = p.topics.some((t) => TOPICS.get(t)?.niche === niche.id);
        const offer = p.contexts.includes('discount_promotion');
        const grade = onTopic ? (discount && !offer ? 1 : 2) : inNiche ? 1 : 0;
        if (grade > 0) judgments.set(p.id, grade);
      }
      const text = discount ? `${phrase} with a discount code` : phrase;
      out.push({
        id: `intent:${topicId}${discount ? ':discount' : ''}`,
        kind: 'intent',
        language: 'en',
        text,
        judgments,
      });
    }
  }

  // Questions (English) about three topics of each niche, and the same topics as noun phrases,
  // judged like the intents: grade 2 the topic, 1 another topic of the niche.
  for (const [n, niche] of NICHES.entries()) {
    for (const [i, [topicId, phrase]] of niche.topics.slice(0, 3).entries()) {
      const judgments = new Map<string, number>();
      for (const p of posts) {
        const grade = p.topics.includes(topicId) ? 2 : p.topics.some((t) => TOPICS.get(t)?.niche === niche.id) ? 1 : 0;
        if (grade > 0) judgments.set(p.id, grade);
      }
      const question = EN_QUESTIONS[(n * 3 + i) % EN_QUESTIONS.length]!(phrase);
      const about = { language: 'en', niche: niche.id, judgments };
      out.push({ id: `topic:${topicId}`, kind: 'topic', text: phrase, ...about });
      out.push({ id: `question:${topicId}`, kind: 'question', text: question, ...about });
    }
  }

  // The held-out set (paraphrase-set.ts): every topic asked in the asker's own words, and the same
  // topic as its noun phrase, judged like the questions above. Every third question is typed
  // without its question mark, as people often do.
  let asked = 0;
  for (const niche of NICHES) {
    for (const [topicId, phrase] of niche.topics) {
      const question = PARAPHRASED_QUESTIONS[topicId];
      if (!question) continue;
      const judgments = new Map<string, number>();
      for (const p of posts) {
        const grade = p.topics.includes(topicId) ? 2 : p.topics.some((t) => TOPICS.get(t)?.niche === niche.id) ? 1 : 0;
        if (grade > 0) judgments.set(p.id, grade);
      }
      const text = asked++ % 3 === 2 ? question.replace(/\?$/u, '') : question;
      const about = { language: 'en', niche: niche.id, judgments };
      out.push({ id: `paraphrase-topic:${topicId}`, kind: 'paraphrase-topic', text: phrase, ...about });
      out.push({ id: `paraphrase:${topicId}`, kind: 'paraphrase', text, ...about });
      // The development set (dev-question-set.ts), the same topics asked otherwise: what a change
      // may be tuned on, beside the held-out set that judges it. Every third without its mark.
      const dev = DEV_QUESTIONS[topicId];
      if (dev)
        out.push({
          id: `dev:${topicId}`,
          kind: 'dev',
          text: asked % 3 === 1 ? dev.replace(/\?$/u, '') : dev,
          ...about,
        });
    }
  }

  // Each language: the language pack's own "my <niche> routine" hook for the niches with posts in
  // that language. Grade 2: that language and niche; 1: the niche in another language.
  for (const lang of LANGUAGES) {
    const counts = new Map<string, number>();
    for (const p of posts) {
      if (p.language !== lang.code) continue;
      for (const niche of new Set(p.topics.map((t) => TOPICS.get(t)?.niche)))
        if (niche) counts.set(niche, (counts.get(niche) ?? 0) + 1);
    }
    const niches = [...counts]
      .filter(([, n]) => n >= 2)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 4);
    for (const [nicheId] of niches) {
      const judgments = new Map<string, number>();
      for (const p of posts) {
        if (!p.topics.some((t) => TOPICS.get(t)?.niche === nicheId)) continue;
        judgments.set(p.id, p.language === lang.code ? 2 : 1);
      }
      const label = lang.niches[nicheId] ?? nicheId;
      const text = lang.hooks[0](label).replace(/\s*✨\s*$/u, '');
      const about = { language: lang.code, niche: nicheId, judgments };
      out.push({ id: `lang:${lang.code}:${nicheId}`, kind: 'language', text, ...about });
      // The same niche asked as a question (English's questions are above, by topic).
      const question = QUESTIONS[lang.code];
      if (question)
        out.push({
          id: `lang-question:${lang.code}:${nicheId}`,
          kind: 'language-question',
          text: question(label),
          ...about,
        });
    }
  }

  for (const [i, text] of NONSENSE_QUERIES.entries())
    out.push({ id: `nonsense:${i}`, kind: 'nonsense', language: null, text, judgments: new Map() });
  return out;
}
