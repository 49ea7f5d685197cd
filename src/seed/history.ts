import { accountObservation, DAY, HOUR, iso, type SeedAccount } from './accounts.ts';
import { hash2, Rng } from './random.ts';

/**
 * Re-observations for the demo dataset's metric history, as a tracking pipeline sends them: each
 * active account again every three days over the 36 days before its first observation and up to
 * now, its follower count following a curve of one of four shapes; and each post of the last 30
 * days again 1, 3, 7, 14 and 21 days after its first observation, its counters grown along the
 * same saturating curve that set them. Every draw comes from a stream of its own (keyed by the
 * account or post), so the dataset without re-observations is unchanged by them.
 */

/** How an account's followers move over the history. */
export type GrowthShape = 'steady' | 'viral' | 'decline' | 'flat';

const SHAPES: readonly GrowthShape[] = ['steady', 'viral', 'decline', 'flat'];
const SHAPE_WEIGHTS = [40, 20, 20, 20];

/** Days between an account's re-observations, and how far back before its first observation they start. */
const ACCOUNT_EVERY_DAYS = 3;
const ACCOUNT_LOOKBACK_DAYS = 36;
/** Posts posted this recently are re-observed, this many days after their first observation. */
const RECENT_POST_DAYS = 30;
const POST_AGAIN_AFTER_DAYS = [1, 3, 7, 14, 21];

/** A follower curve: the factor to multiply the planned count by at time `t` (1 at the first observation). */
export interface FollowerCurve {
  shape: GrowthShape;
  factor(t: number): number;
}

/** The follower curve of an account, the same on every call. */
export function followerCurve(acc: SeedAccount, salt: number): FollowerCurve {
  const rng = new Rng(hash2(salt ^ 0x5eed_0001, acc.index));
  const shape = rng.weighted(SHAPES, SHAPE_WEIGHTS);
  const t0 = acc.observedAt;
  const months = (t: number) => (t - t0) / (30 * DAY);
  switch (shape) {
    case 'steady': {
      const rate = rng.uniform(0.02, 0.12);
      return { shape, factor: (t) => (1 + rate) ** months(t) };
    }
    case 'decline': {
      const rate = rng.uniform(0.01, 0.08);
      return { shape, factor: (t) => (1 - rate) ** months(t) };
    }
    case 'viral': {
      // A jump over two days somewhere in the history, slow growth around it.
      const at = t0 - ACCOUNT_LOOKBACK_DAYS * DAY + rng.uniform(0.3, 0.9) * (ACCOUNT_LOOKBACK_DAYS + 8) * DAY;
      const jump = rng.uniform(1.3, 3);
      const rate = rng.uniform(0.01, 0.04);
      const level = (t: number) => (1 + rate) ** months(t) * (1 + (jump - 1) * clamp((t - at) / (2 * DAY), 0, 1));
      return { shape, factor: (t) => level(t) / level(t0) };
    }
    case 'flat':
      return { shape, factor: () => 1 };
  }
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** The account's re-observations, oldest first (none for an account renamed, deleted or gone). */
export function* accountReobservations(
  acc: SeedAccount,
  salt: number,
  now: number,
): Generator<Record<string, unknown>> {
  if (acc.fate !== 'none') return;
  const curve = followerCurve(acc, salt);
  const rng = new Rng(hash2(salt ^ 0x5eed_0002, acc.index));
  const base = accountObservation(acc, salt, false);
  const last = now - rng.uniform(2 * HOUR, 10 * HOUR);
  const times: number[] = [];
  for (let t = acc.observedAt - ACCOUNT_LOOKBACK_DAYS * DAY; t < last - DAY; t += ACCOUNT_EVERY_DAYS * DAY) {
    // The first observation stays the generator's own.
    if (Math.abs(t - acc.observedAt) >= DAY) times.push(t + rng.uniform(-4 * HOUR, 4 * HOUR));
  }
  times.push(last);
  for (const at of times) {
    yield {
      ...base,
      observed_at: iso(at),
      followers_count: Math.max(0, Math.round(acc.followers * curve.factor(at))),
      posts_count: Math.max(0, Number(base.posts_count) + Math.round((at - acc.observedAt) / (3 * DAY))),
    };
  }
}

/** A stable 32-bit hash of a platform ID (FNV-1a). */
function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * A recent post's re-observations: `views` (reels) along the curve that set them, saturating
 * within days; `likes` and `comments` in proportion. Counters never go down.
 */
export function* postReobservations(
  post: Record<string, unknown>,
  postedAt: number,
  observedAt: number,
  limit: number,
  salt: number,
): Generator<Record<string, unknown>> {
  if (postedAt < limit - RECENT_POST_DAYS * DAY) return;
  const rng = new Rng(hash2(salt ^ 0x5eed_0003, idHash(String(post.platform_id))));
  const reach = (at: number, tau: number, floor: number) =>
    Math.max(floor, 1 - Math.exp(-(at - postedAt) / (tau * DAY)));
  let views = typeof post.views === 'number' ? post.views : null;
  let likes = Number(post.likes);
  let comments = Number(post.comments);
  let previous = observedAt;
  for (const days of POST_AGAIN_AFTER_DAYS) {
    const at = observedAt + days * DAY + rng.uniform(-2 * HOUR, 2 * HOUR);
    if (at >= limit) return;
    // Reels' reach (views, and likes with them) saturates within ~1.2 days, a carousel's likes within ~1.5.
    const grown =
      views !== null
        ? reach(at, 1.2, 0.03) / reach(previous, 1.2, 0.03)
        : reach(at, 1.5, 0.05) / reach(previous, 1.5, 0.05);
    const noise = 1 + rng.uniform(0, 0.02);
    if (views !== null) views = Math.max(views, Math.round(views * grown * noise));
    likes = Math.max(likes, Math.round(likes * grown * noise));
    comments = post.comments_enabled ? Math.max(comments, Math.round(comments * grown * noise)) : 0;
    previous = at;
    yield { ...post, observed_at: iso(at), views, likes, comments };
  }
}
