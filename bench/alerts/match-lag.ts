/**
 * What saved searches cost while the intake runs: match lag (the intake's 202 to the event) and the
 * intake's throughput with 0, 1,000 and 10,000 saved searches, in one run on one index.
 *
 *   npx tsx bench/alerts/match-lag.ts [--base 20000] [--posts 5000] [--searches 1000,10000]
 *
 * A base of seed posts is loaded first. Then, for each count of saved searches (created through
 * the API: a third query-only (a word or a pair of words from the seed's captions), a third a
 * hashtag of the seed with a views floor, a third words with a views floor and a format; one in ten pushes to a
 * receiver on loopback), a round (after one unreported warm-up round) sends the same number of new posts (copies of seed posts under
 * new IDs, so they are new to every search) in requests of 500 and measures:
 * - intake: observations per second from the first request to the observations queue idle (the
 *   worker also runs the matching passes and deliveries meanwhile, on the same two cores);
 * - lag: each event's `created_at` minus the 202 of the request that carried its post, p50/p95/max.
 * Embeddings are off (EMBEDDINGS=off): a query's semantic side would wait on the model's queue,
 * which is the embedding bench's subject; here every match is lexical or by filter.
 * Writes bench/results/alerts-match-lag.json.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createProducer } from '../../src/queues/registry.ts';
import { openAlertRedis } from '../../src/services/alerts/alert-redis.ts';
import { openAlertStores } from '../../src/start/alerts.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { savedSearchShapes } from './saved-search-shapes.ts';
import {
  destroyPrefix,
  harnessRuntime,
  retrying,
  sendObservations,
  startLoader,
  waitForQueueIdle,
  benchLogger,
  harnessEnv,
} from '../lib/in-process-service.ts';
import {
  activitySince,
  engineActivity,
  engineCpuMs,
  mergesSettled,
  redisCpuMs,
  type EngineActivity,
} from '../lib/engine-cpu.ts';
import { cli } from '../lib/args.ts';
import { writeResult, quantile } from '../lib/measure.ts';

const args = cli({
  options: {
    base: { type: 'int', default: 20000, min: 1 },
    posts: { type: 'int', default: 5000, min: 1 },
    searches: { type: 'string', default: '1000,10000' },
    // The rounds' counts in order, instead of 0 then --searches: e.g. 0,1000,1000,0, so that a
    // trend over the run (the index grows, and its merges with it) weighs on both sides alike. A
    // count ending in `v` (1000v) gives every saved search of the round a volume rule.
    rounds: { type: 'string' },
    keep: { type: 'boolean' },
  },
});
const BASE = args.base;
const POSTS = args.posts;
// A first round without saved searches warms the processes up and is not reported.
const COUNTS = ['0', ...(args.rounds ?? `0,${args.searches}`).split(',')].map((r) => ({
  count: Number(r.replace(/v$/, '')),
  volume: r.endsWith('v'),
}));
const prefix = `bench-alerts-${process.pid}`;
const env = harnessEnv(
  prefix,
  {},
  {
    EMBEDDINGS: 'off',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    SAVED_SEARCHES_PER_HOLDER: '100000',
    RATE_LIMIT_READ_PER_MINUTE: '0',
  },
);
const RECEIVER = `
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(204).end());
}).listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;
const logger = benchLogger();
const say = (line: string) => process.stdout.write(`${line}\n`);
/**
 * Redis's own count (MEMORY USAGE) of what alerts keep, by family: the events' streams, the sets of
 * their posts (`news`), the summaries they refer to, the saved searches' hashes, their volume
 * windows (hash, posts counted).
 */
async function alertStorageBytes(): Promise<{
  events: number;
  news: number;
  summaries: number;
  searches: number;
  volume: number;
}> {
  const families = {
    events: /:events$/,
    news: /:news$/,
    summaries: /:summary:/,
    searches: /:search:[^:]+$/,
    volume: /:volume:/,
  };
  const out = { events: 0, news: 0, summaries: 0, searches: 0, volume: 0 };
  const keys: Array<[keyof typeof out, string]> = [];
  for await (const batch of runtime.redis.scanStream({ match: `${prefix}:alert-store:*`, count: 1000 }))
    for (const k of batch as string[])
      for (const [family, pattern] of Object.entries(families))
        if (pattern.test(k)) keys.push([family as keyof typeof out, k]);
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    const pipeline = runtime.redis.pipeline();
    for (const [, k] of chunk) pipeline.memory('USAGE', k, 'SAMPLES', 0);
    ((await pipeline.exec()) ?? []).forEach(([error, used], j) => {
      if (!error) out[chunk[j]![0]] += Number(used ?? 0);
    });
  }
  return out;
}

const percentile = (values: number[], q: number) => quantile(values, q, null);

// Generated before any connection opens: tens of thousands of observations keep the event loop
// busy for seconds, past Redis's connect timeout.
const seed = [...generateObservations({ posts: BASE, accounts: Math.max(10, BASE / 20), seed: 5 })];
const posts = seed.filter((o) => o['kind'] === 'post');
const runtime = harnessRuntime(env, logger);
await runtime.indexAdmin.apply();
// Commands fail fast while the connection is still opening (no offline queue).
if (!(await runtime.ready(10_000))) throw new Error('Redis is not ready');
const { key } = await runtime.keys.create({ owner: 'bench@example.com', name: 'alerts', scopes: ['ingest', 'search'] });
const loader = await startLoader(runtime, logger, { holdEmbeddings: true });
const base = loader.node.baseUrl;
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
// The receiver is the customer's: a process of its own, so its CPU is not counted as the service's.
const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const [port] = (await once(receiver.stdout, 'data')) as [Buffer];
const hookUrl = `http://127.0.0.1:${port.toString().trim()}/hooks`;
const observationsQueue = createProducer('observations', { connection: runtime.producerRedis, prefix });
const alertsQueue = createProducer('alerts', { connection: runtime.producerRedis, prefix });
// A round's CPU counts all of its work: the follow-ups its batches left (a run some seconds after
// them) and the deliveries its passes queued, not only the observations and the passes.
const afterQueues = [createProducer('follow-ups', { connection: runtime.producerRedis, prefix }), alertsQueue];
const stores = openAlertStores(
  { REDIS_PREFIX: prefix, SAVED_SEARCH_EVENT_LIMIT: 10_000 },
  openAlertRedis({ redis: runtime.redis, prefix, timeoutMs: 30_000 }),
);
/** Until no endpoint has deliveries waiting (services/alerts/deliveries.ts). */
async function waitForDeliveries(): Promise<void> {
  while ((await retrying(() => stores.deliveries.dueCount())) > 0) await new Promise((r) => setTimeout(r, 250));
}

try {
  say(`loading ${seed.length} observations (${posts.length} posts) under ${prefix}`);
  for (let i = 0; i < seed.length; i += 500)
    await sendObservations(loader.node, key, seed.slice(i, i + 500), { wait: false });
  await waitForQueueIdle(observationsQueue, { timeoutMs: 3_600_000 });

  const shapes = savedSearchShapes(posts);
  say(`${shapes.words.length} specific words, ${shapes.hashtags.length} specific hashtags`);
  const { id: endpoint } = (await (
    await fetch(`${base}/v1/social/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: hookUrl }),
    })
  ).json()) as { id: string };
  /**
   * With `volume`, every search also watches its volume per hour: half above 20 posts, half a
   * spike of 3× the median of the 24 hours before (from 5 posts), counted over the seed's history.
   */
  function searchBody(i: number, volume: boolean) {
    const post = shapes.post(i);
    const rule =
      i % 2 === 0
        ? { interval: 'hour', above: 20 }
        : { interval: 'hour', spike: { factor: 3, baseline_intervals: 24, min_count: 5 } };
    return {
      name: `search ${i}`,
      post,
      ...(i % 10 === 0 ? { webhook_endpoint_id: endpoint } : {}),
      ...(volume ? { volume: rule } : {}),
    };
  }

  const rows: Array<Record<string, number | null>> = [];
  // Where each round's engine share went: each kind of work's milliseconds and count.
  const activities: EngineActivity[] = [];
  let created = 0;
  const ids: string[] = [];
  let withVolume = false;
  for (const [round, { count, volume }] of COUNTS.entries()) {
    const startedCreating = performance.now();
    // Fewer than the round before, or of the other kind: the newest ones deleted through the API.
    const keep = volume === withVolume ? count : 0;
    withVolume = volume;
    while (ids.length > keep) {
      const response = await fetch(`${base}/v1/social/saved-searches/${ids.pop()}`, {
        method: 'DELETE',
        headers: { authorization: headers.authorization },
      });
      if (response.status !== 204) throw new Error(`saved search delete: ${response.status} ${await response.text()}`);
    }
    for (created = ids.length; created < count;) {
      const batch = Array.from({ length: Math.min(16, count - created) }, () => created++);
      await Promise.all(
        batch.map(async (i) => {
          const response = await fetch(`${base}/v1/social/saved-searches`, {
            method: 'POST',
            headers,
            body: JSON.stringify(searchBody(i, volume)),
          });
          if (response.status !== 201) throw new Error(`saved search: ${response.status} ${await response.text()}`);
          ids.push(((await response.json()) as { id: string }).id);
        }),
      );
    }
    const createMs = performance.now() - startedCreating;
    // New posts: seed posts under new IDs (new to every search), their authors already known,
    // published within the last half hour (a volume rule counts them in the current hour's window;
    // every round alike, with volume rules or not).
    const now = Date.now();
    const fresh = posts.slice(0, POSTS).map((p, i) => ({
      ...p,
      posted_at: new Date(now - ((i * 7919) % 1_800_000)).toISOString(),
      platform_id: `${String(p['platform_id'])}-r${round}`,
      shortcode: `${String(p['shortcode'])}r${round}`,
      media: (p['media'] as Array<Record<string, unknown>>).map((m) => ({
        ...m,
        platform_id: `${String(m['platform_id'])}-r${round}`,
      })),
    }));
    const acceptedAt = new Map<string, number>();
    const byShortcode = new Map(fresh.map((p) => [String(p['shortcode']), String(p['platform_id'])]));
    const started = performance.now();
    const cpuAtStart = {
      engine: await engineCpuMs(runtime.es),
      redis: await retrying(() => redisCpuMs(runtime.redis)),
      activity: await engineActivity(runtime.es),
      service: process.cpuUsage(),
    };
    for (let i = 0; i < fresh.length; i += 500) {
      const chunk = fresh.slice(i, i + 500);
      await sendObservations(loader.node, key, chunk, { wait: false });
      const at = Date.now();
      for (const p of chunk) acceptedAt.set(String(p['platform_id']), at);
    }
    await waitForQueueIdle(observationsQueue, { timeoutMs: 3_600_000 });
    const intakeSeconds = (performance.now() - started) / 1000;
    // Until every queue is idle at once (a pass can follow a follow-up's writes, and so on).
    for (let settled = false; !settled;) {
      settled = true;
      for (const queue of afterQueues) {
        const startedWaiting = performance.now();
        await waitForQueueIdle(queue, { timeoutMs: 3_600_000 });
        if (performance.now() - startedWaiting > 50) settled = false;
      }
      const startedWaiting = performance.now();
      await waitForDeliveries();
      if (performance.now() - startedWaiting > 50) settled = false;
    }
    // The merges this round's writes set off belong to it (since 2026-11-28; before, they ran on
    // into the next round's count: one round's engine CPU moved by a quarter between runs).
    const settled = await mergesSettled(runtime.es);
    // What the round cost, passes included: the engine's CPU and this process's (API, worker, client;
    // not the receiver's).
    const engineCpuS = ((await engineCpuMs(runtime.es)) - cpuAtStart.engine) / 1000;
    const redisCpuS = ((await retrying(() => redisCpuMs(runtime.redis))) - cpuAtStart.redis) / 1000;
    const serviceCpu = process.cpuUsage(cpuAtStart.service);
    const ended = performance.now();
    const activity = activitySince(cpuAtStart.activity, await engineActivity(runtime.es));
    const serviceCpuS = (serviceCpu.user + serviceCpu.system) / 1e6;

    // Lags: every event of this round (its post is one of this round's copies).
    const lags: number[] = [];
    // What the events of every round so far take in Redis, against their bodies' own bytes (what
    // storing each event whole took before 2026-11-27).
    const stored = { events: 0, volumeEvents: 0, bodyBytes: 0, redisBytes: 0, searchBytes: 0, volumeBytes: 0 };
    if (count > 0) {
      for (const search of await retrying(() => stores.searches.all())) {
        for (const event of (await retrying(() => stores.events.page(search.id, null, 100_000))).events) {
          stored.events++;
          stored.bodyBytes += Buffer.byteLength(event.body);
          const body = JSON.parse(event.body) as {
            type: string;
            created_at: string;
            data: { post?: { web_url: string; shortcode: string } };
          };
          if (body.type !== 'post.matched') {
            stored.volumeEvents++;
            continue;
          }
          const platformId = byShortcode.get(body.data.post!.shortcode);
          const sent = platformId ? acceptedAt.get(platformId) : undefined;
          if (sent !== undefined) lags.push(Date.parse(body.created_at) - sent);
        }
      }
      const bytes = await retrying(() => alertStorageBytes());
      stored.redisBytes = bytes.events + bytes.news + bytes.summaries;
      stored.searchBytes = bytes.searches;
      stored.volumeBytes = bytes.volume;
    }
    lags.sort((a, b) => a - b);
    const row = {
      saved_searches: count,
      volume_rules: volume ? 1 : 0,
      volume_events: stored.volumeEvents,
      create_s: +(createMs / 1000).toFixed(1),
      posts: fresh.length,
      intake_obs_per_s: +(fresh.length / intakeSeconds).toFixed(1),
      events: lags.length,
      events_per_post: +(lags.length / fresh.length).toFixed(2),
      lag_p50_ms: percentile(lags, 0.5),
      lag_p95_ms: percentile(lags, 0.95),
      lag_max_ms: lags.at(-1) ?? null,
      engine_cpu_s_per_1000_posts: +((engineCpuS * 1000) / fresh.length).toFixed(3),
      redis_cpu_s_per_1000_posts: +((redisCpuS * 1000) / fresh.length).toFixed(3),
      process_cpu_s_per_1000_posts: +((serviceCpuS * 1000) / fresh.length).toFixed(3),
      redis_bytes_per_event: stored.events > 0 ? Math.round(stored.redisBytes / stored.events) : null,
      redis_bytes_per_search_hash: count > 0 ? Math.round(stored.searchBytes / count) : null,
      redis_volume_bytes_per_search: volume && count > 0 ? Math.round(stored.volumeBytes / count) : null,
      body_bytes_per_event: stored.events > 0 ? Math.round(stored.bodyBytes / stored.events) : null,
    };
    if (round > 0) {
      rows.push(row);
      activities.push(activity);
    }
    // The round's span in seconds of this process's uptime: the time axis of a `node --cpu-prof`
    // profile of the run, to read one round's share of it.
    const span_s = [+(started / 1000).toFixed(1), +(ended / 1000).toFixed(1)];
    say(
      `${round === 0 ? '(warm-up) ' : ''}${JSON.stringify({ ...row, span_s, merges_settled: settled, engine_activity: activity })}`,
    );
  }
  const none = rows[0]!;
  /** A round's saved searches: `1000`, or `1000v` with volume rules. */
  const label = (r: Record<string, number | null>) => `${r['saved_searches']}${r['volume_rules'] ? 'v' : ''}`;
  const cpu = (r: Record<string, number | null>) =>
    r['engine_cpu_s_per_1000_posts']! + r['redis_cpu_s_per_1000_posts']! + r['process_cpu_s_per_1000_posts']!;
  // On a machine the intake saturates, throughput goes as the inverse of CPU per post: the
  // capacity ratio is the CPU ratio's inverse, far steadier than a round's obs/s.
  say(
    `\n| saved searches | intake obs/s | / without | CPU-s per 1,000 posts: engine + Redis + process | capacity / without | events (per post) | lag p50 | lag p95 | lag max | Redis bytes per event (body) |`,
  );
  say(`|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
  for (const r of rows)
    say(
      `| ${label(r)} | ${r['intake_obs_per_s']} | ${(r['intake_obs_per_s']! / none['intake_obs_per_s']!).toFixed(2)} | ${r['engine_cpu_s_per_1000_posts']} + ${r['redis_cpu_s_per_1000_posts']} + ${r['process_cpu_s_per_1000_posts']} | ${(cpu(none) / cpu(r)).toFixed(2)} | ${r['events']} (${r['events_per_post']}) | ${r['lag_p50_ms'] ?? '–'} ms | ${r['lag_p95_ms'] ?? '–'} ms | ${r['lag_max_ms'] ?? '–'} ms | ${r['redis_bytes_per_event'] ?? '–'} (${r['body_bytes_per_event'] ?? '–'}) |`,
    );
  // Each count's rounds together (rounds of the same count given in an order such as 0,1000,1000,0):
  // CPU per 1,000 posts over all of them, and the capacity against the rounds without.
  const byCount = new Map<string, { posts: number; engine: number; redis: number; process: number; rounds: number }>();
  for (const r of rows) {
    const total = byCount.get(label(r)) ?? { posts: 0, engine: 0, redis: 0, process: 0, rounds: 0 };
    total.posts += r['posts']!;
    total.engine += (r['engine_cpu_s_per_1000_posts']! * r['posts']!) / 1000;
    total.redis += (r['redis_cpu_s_per_1000_posts']! * r['posts']!) / 1000;
    total.process += (r['process_cpu_s_per_1000_posts']! * r['posts']!) / 1000;
    total.rounds += 1;
    byCount.set(label(r), total);
  }
  const without = byCount.get('0');
  if (without && [...byCount.values()].some((t) => t.rounds > 1)) {
    const perPost = (t: { posts: number; engine: number; redis: number; process: number }) =>
      (t.engine + t.redis + t.process) / t.posts;
    say(`\n| saved searches | rounds | CPU-s per 1,000 posts: engine + Redis + process | capacity / without |`);
    say(`|---:|---:|---:|---:|`);
    for (const [count, t] of byCount)
      say(
        `| ${count} | ${t.rounds} | ${((t.engine * 1000) / t.posts).toFixed(3)} + ${((t.redis * 1000) / t.posts).toFixed(3)} + ${((t.process * 1000) / t.posts).toFixed(3)} | ${(perPost(without) / perPost(t)).toFixed(2)} |`,
      );
    // The same saved searches with volume rules and without: what the rules take of the capacity.
    for (const [count, t] of byCount) {
      const plain = count.endsWith('v') ? byCount.get(count.slice(0, -1)) : undefined;
      if (plain)
        say(
          `\nvolume rules on ${count.slice(0, -1)} saved searches: capacity with / without ${(perPost(plain) / perPost(t)).toFixed(2)}`,
        );
    }
  }
  say(
    `\n| saved searches | engine ms per 1,000 posts: get (count) | search (count) | index | refresh (count) | merge (count) |`,
  );
  say(`|---:|---:|---:|---:|---:|---:|`);
  rows.forEach((r, i) => {
    const a = activities[i]!;
    const per = (n: number) => Math.round((n * 1000) / r['posts']!);
    say(
      `| ${label(r)} | ${per(a.get_ms)} (${per(a.gets)}) | ${per(a.search_ms)} (${per(a.searches)}) | ${per(a.index_ms)} | ${per(a.refresh_ms)} (${per(a.refreshes)}) | ${per(a.merge_ms)} (${per(a.merges)}) |`,
    );
  });
  writeResult('alerts-match-lag.json', {
    date: new Date().toISOString(),
    base: BASE,
    posts_per_round: POSTS,
    rows: rows.map((r, i) => ({ ...r, engine_activity: activities[i] })),
  });
} finally {
  receiver.kill();
  await observationsQueue.close();
  for (const queue of afterQueues) await queue.close();
  await loader.close();
  if (!args.keep) await destroyPrefix(runtime);
  await runtime.close();
}
