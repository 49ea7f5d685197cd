/**
 * The soak's request mix: what a busy API node sees — post searches with a query (hybrid, so
 * the model thread works), filters-only post searches, account searches, GETs of posts and
 * accounts, and intake batches of fresh observations — drawn request by request from fixed
 * weights with a seeded random stream, so two runs send the same sequence.
 */
import { Rng } from '../../src/seed/random.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';

/** The kinds of request, in the order of the report. */
export const KINDS = [
  'search_query',
  'search_filters',
  'search_accounts',
  'get_post',
  'get_account',
  'intake',
] as const;
export type Kind = (typeof KINDS)[number];

/**
 * Shares of the mix (sum 1). Intake is a small share of requests but each carries a batch, so the
 * worker (with the model: every new post is embedded) is busy the whole run.
 */
export const DEFAULT_WEIGHTS: Readonly<Record<Kind, number>> = {
  search_query: 0.3,
  search_filters: 0.2,
  search_accounts: 0.1,
  get_post: 0.2,
  get_account: 0.17,
  intake: 0.03,
};

/** One HTTP request of the mix. */
export interface MixRequest {
  kind: Kind;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  contentType?: string;
}

/** What GETs ask for: ids and alternate keys the index holds (read from it after seeding). */
export interface Targets {
  posts: Array<{ id: string; shortcode: string | null }>;
  accounts: Array<{ id: string; handle: string | null }>;
}

const MODIFIERS = [
  '',
  'for beginners',
  'tips',
  'on a budget',
  'with a discount code',
  'review',
  'mistakes to avoid',
  'in 10 minutes',
  'for busy people',
  'that actually works',
  'honest opinion',
  'step by step',
];
const FORMATS = ['reel', 'image', 'carousel'];
const SORTS = [
  { by: 'views', order: 'desc' },
  { by: 'posted_at', order: 'desc' },
  { by: 'likes', order: 'desc' },
];

/** Every query text the mix may send: topics, items, pains and tags of every niche, with modifiers. */
export function queryTexts(): string[] {
  const stems = new Set<string>();
  for (const niche of NICHES) {
    for (const [, phrase] of niche.topics) stems.add(phrase);
    for (const item of niche.items) stems.add(item);
    for (const pain of niche.pains) stems.add(`${niche.label} for ${pain}`);
    for (const tag of niche.hashtags) stems.add(`#${tag}`);
  }
  const texts: string[] = [];
  for (const modifier of MODIFIERS) for (const stem of stems) texts.push(modifier ? `${stem} ${modifier}` : stem);
  return texts;
}

/**
 * An endless stream of requests. Query texts follow a skewed popularity (a few are asked often,
 * most rarely), so the query-embedding cache both hits and churns as it would in production.
 * Intake batches are the next slices of `observations`: the generated dataset whose beginning was
 * seeded, so each batch brings new posts (and embedding work for the worker) and enrichments.
 */
export function createMix(options: {
  targets: Targets;
  observations: Iterator<Record<string, unknown>>;
  weights?: Readonly<Record<Kind, number>>;
  seed: number;
  intakeBatch: number;
}): () => MixRequest {
  const { targets, intakeBatch, observations } = options;
  const weights = options.weights ?? DEFAULT_WEIGHTS;
  const rng = new Rng(options.seed);
  const texts = queryTexts();
  const niches = NICHES.map((n) => n.id);
  const cumulative = KINDS.map(
    (
      (sum) => (kind: Kind) =>
        (sum += weights[kind])
    )(0),
  );
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rng.next() * list.length)]!;
  // Squaring a uniform skews towards the front of the list: ~30% of queries hit the first 10%.
  const popularText = () => texts[Math.floor(rng.next() ** 2 * texts.length)]!;
  const json = (kind: Kind, path: string, body: unknown): MixRequest => ({
    kind,
    method: 'POST',
    path,
    body: JSON.stringify(body),
    contentType: 'application/json',
  });

  const build: Record<Kind, () => MixRequest> = {
    search_query: () => {
      const post: Record<string, unknown> = { query: popularText() };
      if (rng.chance(0.3)) post['filters'] = { views: { gte: pick([100, 1000, 10_000]) } };
      if (rng.chance(0.2)) post['author'] = { filters: { followers_count: { gte: pick([1000, 10_000]) } } };
      return json('search_query', '/v1/social/posts/search', { post, limit: pick([10, 20]) });
    },
    search_filters: () =>
      json('search_filters', '/v1/social/posts/search', {
        post: { filters: { format: { in: [pick(FORMATS)] }, views: { gte: Math.floor(rng.next() * 20_000) } } },
        sort: pick(SORTS),
        limit: 20,
      }),
    search_accounts: () => {
      const account: Record<string, unknown> = { filters: { niches: { contains_any: [pick(niches)] } } };
      if (rng.chance(0.25))
        account['posts'] = { minimum_matching_posts: 2, filters: { views: { gte: Math.floor(rng.next() * 5000) } } };
      return json('search_accounts', '/v1/social/accounts/search', {
        account,
        sort: { by: 'followers_count', order: 'desc' },
        limit: 20,
      });
    },
    get_post: () => {
      const post = pick(targets.posts);
      const key = post.shortcode && rng.chance(0.3) ? post.shortcode : post.id;
      return { kind: 'get_post', method: 'GET', path: `/v1/social/posts/${encodeURIComponent(key)}` };
    },
    get_account: () => {
      const account = pick(targets.accounts);
      const key = account.handle && rng.chance(0.5) ? `@${account.handle}` : account.id;
      return { kind: 'get_account', method: 'GET', path: `/v1/social/accounts/${encodeURIComponent(key)}` };
    },
    intake: () => {
      const lines: string[] = [];
      for (let i = 0; i < intakeBatch; i++) {
        const next = observations.next();
        if (next.done) break;
        lines.push(JSON.stringify(next.value));
      }
      // The generated dataset is spent (a very long run): reads take the intake's share.
      if (lines.length === 0) return build.get_post();
      return {
        kind: 'intake',
        method: 'POST',
        path: '/internal/v1/social/observations',
        body: `${lines.join('\n')}\n`,
        contentType: 'application/x-ndjson',
      };
    },
  };

  return () => {
    const r = rng.next() * cumulative.at(-1)!;
    const kind = KINDS[cumulative.findIndex((c) => r < c)] ?? 'get_post';
    return build[kind]();
  };
}
