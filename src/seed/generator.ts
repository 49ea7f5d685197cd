import { accountEnrichment, accountObservation, DAY, HOUR, iso, planAccounts, type SeedAccount } from './accounts.ts';
import { postEnrichment } from './enrichment.ts';
import type { PostPlan } from './post-plan.ts';
import { accountStyle, PostBuilder, seedHashOf } from './posts.ts';
import { accountReobservations, postReobservations } from './history.ts';
import { Rng } from './random.ts';

/**
 * A realistic, reproducible demo dataset: observations as a tracking pipeline would send them to
 * the intake (operations contract §3). The same options always yield the same sequence, byte for
 * byte as JSON, on any machine.
 *
 * Order, as a pipeline that discovers accounts and then crawls their feeds would send it:
 * 1. every account's `account` observation;
 * 2. account by account, its posts newest first, each followed by its `post_enrichment` when the
 *    post is enriched, then the account's `account_enrichment`;
 * 3. later observations: renames (a new handle) and deactivations/deletions, oldest first;
 * 4. with `history`, re-observations (`history.ts`): recent posts right after their first
 *    observation, each active account's series at the end.
 */

/** Options of {@link generateObservations}. */
export interface SeedOptions {
  /** Number of `post` observations. */
  posts: number;
  /** Number of distinct accounts. */
  accounts: number;
  /** Any number; equal seeds give equal datasets. */
  seed: number;
  /** Reference time; defaults to {@link DEFAULT_SEED_NOW} so that datasets do not depend on the clock. */
  now?: Date;
  /**
   * Also re-observe accounts and recent posts over time, for a metric history (growth curves of
   * four shapes). Everything else is the same with or without it.
   */
  history?: boolean;
}

/** The fixed default reference time of generated datasets. */
export const DEFAULT_SEED_NOW = new Date('2026-11-01T00:00:00Z');

function validate(opts: SeedOptions): void {
  for (const key of ['posts', 'accounts'] as const) {
    const v = opts[key];
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${key} must be a non-negative integer, got ${v}`);
  }
  if (!Number.isFinite(opts.seed)) throw new RangeError(`seed must be a finite number, got ${opts.seed}`);
  if (opts.posts > 0 && opts.accounts === 0) throw new RangeError('posts need at least one account to author them');
  if (opts.now && Number.isNaN(opts.now.getTime())) throw new RangeError('now must be a valid date');
}

/** Share of posts observed within three days that are still pending enrichment, and of older ones. */
const PENDING_RECENT = 0.55;
const PENDING_OLDER = 0.13;

/**
 * Yields observation objects (plain JSON, as a pipeline would send them) in an order a pipeline
 * plausibly would. Streaming: memory O(accounts), never O(posts).
 */
export function* generateObservations(opts: SeedOptions): Generator<Record<string, unknown>> {
  yield* generate(opts);
}

/** What a judge of post relevance knows about one generated post, whether it was enriched or not. */
export interface SeedPostLabel {
  /** The post's platform ID. */
  id: string;
  /** The niche and the topic its caption was written about. */
  niche: string;
  topic: string;
  /** Its caption's language code. */
  language: string;
  /** It offers a discount (a code or a sale): enriched, its contexts include `discount_promotion`. */
  discount: boolean;
}

/**
 * The hidden labels of the posts {@link generateObservations} yields for the same options: a post
 * still pending enrichment (no `post_enrichment` observation) was written about a topic all the
 * same. Replays the whole generation (time O(posts)).
 */
export function seedPostLabels(opts: SeedOptions): Map<string, SeedPostLabel> {
  const labels = new Map<string, SeedPostLabel>();
  const record = (plan: PostPlan) =>
    labels.set(plan.id, {
      id: plan.id,
      niche: plan.niche.id,
      topic: plan.topic[0],
      language: plan.lang.code,
      discount: plan.offer?.kind === 'code' || plan.offer?.kind === 'sale',
    });
  for (const _ of generate(opts, record));
  return labels;
}

function* generate(opts: SeedOptions, onPost?: (plan: PostPlan) => void): Generator<Record<string, unknown>> {
  validate(opts);
  const now = (opts.now ?? DEFAULT_SEED_NOW).getTime();
  const rng = new Rng(opts.seed);
  // Side streams (profiles, shortcodes) are keyed by a salt drawn from the main stream, so that
  // every bit of the seed reaches them too.
  const salt = rng.uint32();
  const plan = planAccounts(rng, opts.accounts, opts.posts, now);
  const { accounts } = plan;

  for (const acc of accounts) yield accountObservation(acc, salt, false);

  const builder = new PostBuilder(rng, plan, now, salt);
  for (const acc of accounts) {
    let lastObserved = acc.observedAt;
    // Sorted uniform times generated newest first without storing them: the maximum of k
    // uniforms is U^(1/k), and each next one is the previous scaled by a fresh U^(1/(k-1)).
    let u = 1;
    const span = acc.windowEnd - acc.windowStart;
    for (let remaining = acc.postCount; remaining > 0; remaining--) {
      u *= Math.pow(rng.next(), 1 / remaining);
      const postedAt = acc.windowStart + u * span;
      const { post, plan: postPlan } = builder.build(acc, postedAt);
      onPost?.(postPlan);
      yield post;
      lastObserved = Math.max(lastObserved, postPlan.observedAt);
      const recent = now - postPlan.observedAt < 3 * DAY;
      if (!rng.chance(recent ? PENDING_RECENT : PENDING_OLDER)) {
        const limit = enrichmentLimit(acc, now);
        const producedAt = Math.min(limit, postPlan.observedAt + rng.logNormal(40 * 60_000, 1));
        yield postEnrichment(postPlan, rng, Math.max(producedAt, postPlan.observedAt));
      }
      if (opts.history) yield* postReobservations(post, postedAt, postPlan.observedAt, enrichmentLimit(acc, now), salt);
    }
    if (!acc.isPrivate && rng.chance(0.9)) {
      const producedAt = Math.min(enrichmentLimit(acc, now), lastObserved + rng.logNormal(6 * HOUR, 0.8));
      yield accountEnrichment(acc, Math.max(producedAt, acc.observedAt));
    }
  }

  const later = accounts.filter((a) => a.fate !== 'none').sort((a, b) => a.fateAt - b.fateAt || a.index - b.index);
  for (const acc of later) {
    if (acc.fate === 'renamed') yield accountObservation(acc, salt, true);
    else yield { kind: 'account', platform_id: acc.id, status: acc.fate, observed_at: iso(acc.fateAt) };
  }
  if (opts.history) for (const acc of accounts) yield* accountReobservations(acc, salt, now);
}

/** Pipelines stop producing for an account once it is gone. */
function enrichmentLimit(acc: SeedAccount, now: number): number {
  return acc.fate === 'none' || acc.fate === 'renamed' ? now : acc.fateAt - 60_000;
}

/** What a judge of lookalikes knows about one generated account and the searches cannot see. */
export interface SeedAccountLabel {
  id: string;
  /** The primary niche's id (most of its posts are in it). */
  niche: string;
  /** Every niche of the account, primary first. */
  niches: readonly string[];
  /** Its latent style within the primary niche (`accountStyle`). */
  style: number;
  /** Its language's code. */
  language: string;
  isPrivate: boolean;
  /** Still active at the end of the dataset (not deleted, deactivated or unobservable). */
  active: boolean;
  /** Its tracked posts in the dataset. */
  posts: number;
}

/**
 * The hidden labels of the accounts {@link generateObservations} yields for the same options,
 * replaying only the account plan (no post is built).
 */
export function seedAccountLabels(opts: SeedOptions): SeedAccountLabel[] {
  validate(opts);
  const now = (opts.now ?? DEFAULT_SEED_NOW).getTime();
  const rng = new Rng(opts.seed);
  const salt = rng.uint32();
  const seedHash = seedHashOf(salt);
  return planAccounts(rng, opts.accounts, opts.posts, now).accounts.map((acc) => ({
    id: acc.id,
    niche: acc.niches[0]!.id,
    niches: acc.niches.map((n) => n.id),
    style: accountStyle(acc, seedHash),
    language: acc.lang.code,
    isPrivate: acc.isPrivate,
    active: acc.fate === 'none' || acc.fate === 'renamed',
    posts: acc.postCount,
  }));
}
