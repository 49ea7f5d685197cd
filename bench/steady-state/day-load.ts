/**
 * One simulated day of observations after the seed dataset (`generateObservations({posts,
 * accounts, seed})`, reference time `now`), as a tracking pipeline would send them while it keeps
 * the dataset current: the day is the 24 h after `now`, crawled account by account in a random
 * order, each active account's turn being
 *
 * 1. its `account` observation, followers along the account's follower curve (`followerCurve` of
 *    src/seed/history.ts) and `posts_count` grown by the posts it published that day;
 * 2. every post of it posted in the 30 days before the day, re-observed with views, likes and
 *    comments grown along the saturating curve that set them (`postReobservations`' shape, at the
 *    crawl's time; counters never go down);
 * 3. its new posts of the day (5 % of the dataset's post count over all active public accounts,
 *    in proportion to their post counts), each followed by its `post_enrichment`.
 *
 * `observed_at` (`produced_at` for enrichments) increases through the whole day: every
 * observation has a slot of 24 h ÷ the day's observations. Deleted, deactivated and unobservable
 * accounts and their posts are not crawled again, as a pipeline stops once an account is gone.
 *
 * Streaming over the dataset once: memory O(accounts) plus the recent posts kept for step 2.
 *
 *   npx tsx bench/steady-state/day-load.ts --check [--intake [--service-commit REV]] [--posts 3000] [--accounts 300]
 *
 * checks a small day ({@link checkDayLoad}): new IDs and shortcodes distinct from the dataset's,
 * order, counters, the contract's validation of every observation; with `--intake`, also sends
 * it with `?wait=true` to a fresh stack holding the dataset and requires zero rejections.
 */
import { fileURLToPath } from 'node:url';
import { parseObservation } from '../../src/contract/observations.ts';
import { accountObservation, DAY, iso, planAccounts, type SeedAccount } from '../../src/seed/accounts.ts';
import { postEnrichment } from '../../src/seed/enrichment.ts';
import { DEFAULT_SEED_NOW, generateObservations, type SeedOptions } from '../../src/seed/generator.ts';
import { followerCurve } from '../../src/seed/history.ts';
import { PostBuilder } from '../../src/seed/posts.ts';
import { hash2, Rng } from '../../src/seed/random.ts';
import { writeLoad, type GeneratedLoad } from '../lib/intake-load.ts';
import { cli } from '../lib/args.ts';

/** Posts posted this many days before the day are re-observed (as history.ts re-observes them). */
const RECENT_POST_DAYS = 30;
/** New posts of the day, as a share of the dataset's posts. */
const DEFAULT_NEW_SHARE = 0.05;
const MINUTE = 60_000;

/** Options of {@link generateDay}: the dataset's, and the day's share of new posts. */
export interface DayOptions extends Omit<SeedOptions, 'history'> {
  /** New posts of the day ÷ the dataset's posts (default 0.05). */
  newShare?: number;
}

/** What the day holds, by cause. */
export interface DayCounts {
  /** Active accounts, each observed once. */
  accounts: number;
  /** Posts of the last 30 days observed again. */
  reobserved_posts: number;
  new_posts: number;
  post_enrichments: number;
  /** The dataset's posts left out because their author is gone (deleted, deactivated, unobservable). */
  recent_posts_of_gone_accounts: number;
}

/** A recent post of the dataset as last observed there. */
interface RecentPost {
  post: Record<string, unknown>;
  postedAt: number;
  observedAt: number;
}

/** The day's crawl: a slot per observation, accounts in crawl order. */
interface DayPlan {
  dayStart: number;
  salt: number;
  order: SeedAccount[];
  recent: Map<number, RecentPost[]>;
  newPosts: Map<number, number>;
  /** The dataset's posts, and its highest media counter: where the new posts' counters start. */
  datasetPosts: number;
  maxMedia: number;
  counts: DayCounts;
  total: number;
}

const isActive = (acc: SeedAccount) => acc.fate === 'none' || acc.fate === 'renamed';

/**
 * Reach of a post at `at`, as the seed sets counters: views (reels) saturate within ~1.2 days,
 * a carousel's or image's likes within ~1.5 (PostBuilder.views, history.ts postReobservations).
 */
function reach(post: Record<string, unknown>, postedAt: number, at: number): number {
  const [tau, floor] = post['views'] !== null ? [1.2, 0.03] : [1.5, 0.05];
  return Math.max(floor, 1 - Math.exp(-(at - postedAt) / (tau * DAY)));
}

/** Replays the dataset once: the account plan, the recent posts to re-observe, the ID counters in use. */
function planDay(opts: DayOptions): DayPlan {
  const now = (opts.now ?? DEFAULT_SEED_NOW).getTime();
  // The same draws as generateObservations' opening: salt, then the account plan.
  const rng = new Rng(opts.seed);
  const salt = rng.uint32();
  const { accounts } = planAccounts(rng, opts.accounts, opts.posts, now);
  const recent = new Map<number, RecentPost[]>();
  const byId = new Map(accounts.map((a) => [a.id, a]));
  let datasetPosts = 0;
  let maxMedia = 0;
  let gone = 0;
  let seen = 0;
  for (const o of generateObservations({
    posts: opts.posts,
    accounts: opts.accounts,
    seed: opts.seed,
    now: new Date(now),
  })) {
    if (o['kind'] === 'account' && seen < accounts.length) {
      // The replayed plan must be the dataset's: its first observations are the accounts in order.
      if (o['platform_id'] !== accounts[seen]!.id) throw new Error(`account plan replay differs at ${seen}`);
      seen++;
    }
    if (o['kind'] !== 'post') continue;
    datasetPosts++;
    for (const m of o['media'] as Array<{ platform_id: string }>)
      maxMedia = Math.max(maxMedia, Number(m.platform_id.slice(2)));
    const postedAt = Date.parse(String(o['posted_at']));
    if (postedAt < now - RECENT_POST_DAYS * DAY) continue;
    const acc = byId.get(String(o['author_platform_id']))!;
    if (!isActive(acc)) {
      gone++;
      continue;
    }
    const list = recent.get(acc.index) ?? [];
    list.push({ post: o, postedAt, observedAt: Date.parse(String(o['observed_at'])) });
    recent.set(acc.index, list);
  }

  // Side streams of their own, so the day never shifts the dataset's draws.
  const dayRng = new Rng(hash2(salt ^ 0xda7_0001, opts.seed >>> 0));
  const order = dayRng.shuffle(accounts.filter(isActive));
  // New posts in proportion to post counts: systematic sampling from a random start gives each
  // account floor or ceil of its share, and exactly the total.
  const newTotal = Math.round((opts.newShare ?? DEFAULT_NEW_SHARE) * opts.posts);
  const publishers = accounts.filter((a) => isActive(a) && !a.isPrivate && a.postCount > 0);
  const weight = publishers.reduce((s, a) => s + a.postCount, 0);
  const newPosts = new Map<number, number>();
  let cumulative = dayRng.next();
  for (const acc of publishers) {
    const before = Math.floor(cumulative);
    cumulative += (newTotal * acc.postCount) / weight;
    const n = Math.floor(cumulative) - before;
    if (n > 0) newPosts.set(acc.index, n);
  }
  const counts: DayCounts = {
    accounts: order.length,
    reobserved_posts: [...recent.values()].reduce((s, l) => s + l.length, 0),
    new_posts: [...newPosts.values()].reduce((s, n) => s + n, 0),
    post_enrichments: 0,
    recent_posts_of_gone_accounts: gone,
  };
  counts.post_enrichments = counts.new_posts;
  const total = counts.accounts + counts.reobserved_posts + counts.new_posts + counts.post_enrichments;
  return { dayStart: now, salt, order, recent, newPosts, datasetPosts, maxMedia, counts, total };
}

/**
 * PostBuilder numbers posts (platform ID `31…`, shortcode, own-sound ID) and media (`18…`) from
 * counters that start at 0 and has no option to start elsewhere; its counters are plain fields at
 * runtime, so the day's builder is moved past the dataset's (new posts continue the dataset's
 * numbering: the shortcode is a bijection of the post counter, so no new code equals an old one).
 */
function continuingBuilder(
  rng: Rng,
  plan: ReturnType<typeof planAccounts>,
  now: number,
  salt: number,
  posts: number,
  media: number,
): PostBuilder {
  const builder = new PostBuilder(rng, plan, now, salt);
  const counters = builder as unknown as { postIndex: number; mediaIndex: number };
  if (counters.postIndex !== 0 || counters.mediaIndex !== 0)
    throw new Error('PostBuilder counters moved: update continuingBuilder');
  counters.postIndex = posts;
  counters.mediaIndex = media;
  return builder;
}

/** A day and what it holds. */
export interface Day {
  counts: DayCounts;
  /** Observations in the day. */
  total: number;
  /** The day's start (the dataset's `now`), ms. */
  dayStart: number;
  observations(): Generator<Record<string, unknown>>;
}

/** The day after the dataset of `opts` (see the module comment). Deterministic: equal options, equal days. */
export function generateDay(opts: DayOptions): Day {
  const day = planDay(opts);
  const now = day.dayStart;
  const slot = DAY / day.total;
  function* observations(): Generator<Record<string, unknown>> {
    const rng = new Rng(opts.seed);
    const salt = rng.uint32();
    const plan = planAccounts(rng, opts.accounts, opts.posts, now);
    const postRng = new Rng(hash2(salt ^ 0xda7_0002, opts.seed >>> 0));
    const builder = continuingBuilder(postRng, plan, now + DAY, salt, day.datasetPosts, day.maxMedia);
    let i = 0;
    const nextTime = () => now + (i++ + 0.5) * slot;
    for (const acc of day.order) {
      const renamed = acc.fate === 'renamed';
      const fresh = day.newPosts.get(acc.index) ?? 0;
      const crawledAt = nextTime();
      const base = accountObservation(acc, salt, renamed);
      yield {
        ...base,
        observed_at: iso(crawledAt),
        followers_count: Math.max(
          0,
          Math.round((base['followers_count'] as number) * followerCurve(acc, salt).factor(crawledAt)),
        ),
        posts_count: (base['posts_count'] as number) + fresh,
      };
      for (const { post, postedAt, observedAt } of day.recent.get(acc.index) ?? []) {
        const at = nextTime();
        const noiseRng = new Rng(hash2(salt ^ 0xda7_0003, Number(String(post['platform_id']).slice(-9))));
        const grown = (reach(post, postedAt, at) / reach(post, postedAt, observedAt)) * (1 + noiseRng.uniform(0, 0.02));
        const views = post['views'] as number | null;
        const likes = post['likes'] as number;
        const comments = post['comments'] as number;
        yield {
          ...post,
          observed_at: iso(at),
          views: views === null ? null : Math.max(views, Math.round(views * grown)),
          likes: Math.max(likes, Math.round(likes * grown)),
          comments: post['comments_enabled'] ? Math.max(comments, Math.round(comments * grown)) : 0,
        };
      }
      // The account's current handle in its captions' calls to action, as after its rename.
      const author = renamed && acc.newHandle ? { ...acc, handle: acc.newHandle } : acc;
      for (let n = 0; n < fresh; n++) {
        const at = nextTime();
        // Published since the day began and before the crawl saw the account (its posts_count has them).
        const postedAt = now + postRng.next() * Math.max(0, crawledAt - now - MINUTE);
        const { post, plan: postPlan } = builder.build(author, postedAt);
        // The builder set the counters for its own observation time: move them to the crawl's.
        const factor = reach(post, postedAt, at) / reach(post, postedAt, postPlan.observedAt);
        const views = post['views'] as number | null;
        const grownViews = views === null ? null : Math.round(views * factor);
        const likes = Math.round((post['likes'] as number) * factor);
        postPlan.observedAt = at;
        yield {
          ...post,
          observed_at: iso(at),
          views: grownViews,
          likes: grownViews === null ? likes : Math.min(grownViews, likes),
          comments: Math.round((post['comments'] as number) * factor),
        };
        yield postEnrichment(postPlan, postRng, nextTime());
      }
    }
  }
  return { counts: day.counts, total: day.total, dayStart: now, observations };
}

/** The day as {@link GeneratedLoad} (for `sendLoad`): written once to `file`, `perRequest` observations a request. */
export function writeDayLoad(day: Day, perRequest: number, file: string): GeneratedLoad {
  return writeLoad(day.observations(), perRequest, file);
}

/**
 * Checks the day of a small dataset and throws on the first failure: new post, media and sound
 * IDs and shortcodes distinct from the dataset's and from each other; one observation per active
 * account; time stamps within the day and never decreasing; re-observed counters never below the
 * dataset's; each new post followed by its enrichment; every observation valid by the intake's
 * contract (`parseObservation`).
 */
export function checkDayLoad(opts: { posts: number; accounts: number; seed?: number }): DayCounts {
  const dataset: SeedOptions = { posts: opts.posts, accounts: opts.accounts, seed: opts.seed ?? 1 };
  const taken = {
    ids: new Set<string>(),
    shortcodes: new Set<string>(),
    media: new Set<string>(),
    sounds: new Set<string>(),
  };
  const posts = new Map<string, Record<string, unknown>>();
  let activeAccounts = 0;
  const rng = new Rng(dataset.seed);
  rng.uint32();
  for (const acc of planAccounts(rng, dataset.accounts, dataset.posts, DEFAULT_SEED_NOW.getTime()).accounts) {
    if (isActive(acc)) activeAccounts++;
  }
  const remember = (o: Record<string, unknown>) => {
    taken.ids.add(String(o['platform_id']));
    taken.shortcodes.add(String(o['shortcode']));
    for (const m of o['media'] as Array<{ platform_id: string }>) taken.media.add(m.platform_id);
    const sound = (o['audio'] as { platform_id: string | null } | null)?.platform_id;
    if (sound?.startsWith('8')) taken.sounds.add(sound);
  };
  for (const o of generateObservations(dataset)) {
    if (o['kind'] !== 'post') continue;
    remember(o);
    posts.set(String(o['platform_id']), o);
  }
  const fail = (what: string): never => {
    throw new Error(`day check (${opts.posts} posts): ${what}`);
  };
  const day = generateDay(dataset);
  const start = day.dayStart;
  let last = '';
  let accounts = 0;
  let total = 0;
  let pendingEnrichment: string | null = null;
  const seenNew = { ids: new Set<string>() };
  for (const o of day.observations()) {
    total++;
    const parsed = parseObservation(o);
    if (!parsed.ok) fail(`invalid ${String(o['kind'])}: ${parsed.detail}`);
    const at = String(o['observed_at'] ?? o['produced_at']);
    if (at < last) fail(`time goes back: ${at} after ${last}`);
    if (Date.parse(at) < start || Date.parse(at) >= start + DAY) fail(`${at} outside the day`);
    last = at;
    if (pendingEnrichment !== null && (o['kind'] !== 'post_enrichment' || o['post_platform_id'] !== pendingEnrichment))
      fail(`new post ${pendingEnrichment} not followed by its enrichment`);
    pendingEnrichment = null;
    if (o['kind'] === 'account') accounts++;
    if (o['kind'] !== 'post') continue;
    const id = String(o['platform_id']);
    const old = posts.get(id);
    if (old) {
      for (const counter of ['views', 'likes', 'comments'] as const) {
        if (old[counter] !== null && (o[counter] as number) < (old[counter] as number))
          fail(`${counter} of ${id} went down`);
      }
      continue;
    }
    if (seenNew.ids.has(id)) fail(`new post ${id} twice`);
    seenNew.ids.add(id);
    if (taken.shortcodes.has(String(o['shortcode']))) fail(`new post ${id} reuses shortcode ${String(o['shortcode'])}`);
    for (const m of o['media'] as Array<{ platform_id: string }>)
      if (taken.media.has(m.platform_id)) fail(`new post ${id} reuses media ${m.platform_id}`);
    const sound = (o['audio'] as { platform_id: string | null } | null)?.platform_id;
    if (sound?.startsWith('8') && taken.sounds.has(sound)) fail(`new post ${id} reuses sound ${sound}`);
    if (Date.parse(String(o['posted_at'])) < start) fail(`new post ${id} posted before the day`);
    remember(o);
    pendingEnrichment = id;
  }
  if (pendingEnrichment !== null) fail(`new post ${pendingEnrichment} not followed by its enrichment`);
  if (accounts !== activeAccounts) fail(`${accounts} account observations for ${activeAccounts} active accounts`);
  if (total !== day.total) fail(`${total} observations, planned ${day.total}`);
  if (seenNew.ids.size !== day.counts.new_posts || day.counts.new_posts !== Math.round(DEFAULT_NEW_SHARE * opts.posts))
    fail(`${seenNew.ids.size} new posts, expected ${Math.round(DEFAULT_NEW_SHARE * opts.posts)}`);
  if (day.counts.reobserved_posts === 0) fail('no post re-observed');
  return day.counts;
}

/**
 * Sends the day of a small dataset through a real intake, `?wait=true` in requests of 500, on a
 * fresh stack holding the dataset, and throws unless every observation is accepted.
 */
async function checkThroughIntake(posts: number, accounts: number, serviceCommit: string): Promise<number> {
  const { REPO_ROOT, startStack, until } = await import('../lib/service-stack.ts');
  const { snapshotService } = await import('../lib/service-snapshot.ts');
  const { generateLoad, sendLoad } = await import('../lib/intake-load.ts');
  const { Pool } = await import('undici');
  const { mkdirSync, rmSync } = await import('node:fs');
  const root = snapshotService(serviceCommit).dir;
  const scratch = `${REPO_ROOT}/.scratch/day-load-check-${process.pid}`;
  mkdirSync(scratch, { recursive: true });
  const removeFiles = () => {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  };
  // Ctrl-C or TERM: the stack's handler cleans the stack up and exits, past the finally below.
  process.once('exit', removeFiles);
  const stack = await startStack({
    label: 'day-load-check',
    apis: 1,
    worker: true,
    env: { EMBEDDINGS: 'off' },
    probeIntervalMs: 0,
    root,
  });
  try {
    const url = stack.apis[0]!.url;
    const base = generateLoad({ posts, accounts, seed: 1 }, 5000, `${scratch}/base.ndjson`);
    await Promise.race([sendLoad(base, { baseUrl: url, key: stack.key, inFlight: 2 }), stack.failure]);
    await until(
      'the dataset to be indexed',
      async () => Object.values(await stack.queueDepth()).every((n) => n === 0),
      10 * 60_000,
    );
    const pool = new Pool(url, { connections: 1 });
    let accepted = 0;
    let lines: string[] = [];
    const send = async () => {
      const response = await pool.request({
        method: 'POST',
        path: '/internal/v1/social/observations?wait=true',
        headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
        body: lines.join('\n') + '\n',
      });
      const answer = (await response.body.json()) as { accepted: number; rejected: unknown[] };
      if (response.statusCode !== 200 || answer.rejected.length > 0 || answer.accepted !== lines.length)
        throw new Error(`intake answered ${response.statusCode}: ${JSON.stringify(answer).slice(0, 500)}`);
      accepted += answer.accepted;
      lines = [];
    };
    for (const o of generateDay({ posts, accounts, seed: 1 }).observations()) {
      lines.push(JSON.stringify(o));
      if (lines.length === 500) await send();
    }
    if (lines.length > 0) await send();
    await pool.close();
    return accepted;
  } finally {
    await stack.cleanup();
    removeFiles();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = cli({
    options: {
      check: { type: 'boolean' },
      intake: { type: 'boolean' },
      posts: { type: 'int', default: 3000, min: 1 },
      accounts: { type: 'int', min: 1 },
      'service-commit': { type: 'string', default: 'HEAD' },
    },
  });
  if (!args.check) {
    process.stderr.write(
      'usage: npx tsx bench/steady-state/day-load.ts --check [--intake [--service-commit REV]] [--posts 3000] [--accounts N]\n',
    );
    process.exit(2);
  }
  const posts = args.posts;
  const accounts = args.accounts ?? Math.max(1, Math.round(posts / 10));
  const counts = checkDayLoad({ posts, accounts });
  const intake = args.intake
    ? { accepted_with_wait: await checkThroughIntake(posts, accounts, args['service-commit']) }
    : {};
  console.log(JSON.stringify({ ok: true, ...counts, ...intake }));
}
