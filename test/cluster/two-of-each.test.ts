import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { acquireRebuildLock, rebuildRunning } from '../../src/services/indices/rebuild-lock.ts';
import { call, metric, requireCluster, waitForCluster, type Answer } from '../helpers/cluster.ts';
import {
  buildDrillDataset,
  checkState,
  drain,
  openDrill,
  problemsOf,
  type ApiProcess,
  type Drill,
  type Obs,
  type WorkerProcess,
} from '../helpers/drill.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';

/**
 * Two API processes and two worker processes on one Redis and the 3-node cluster, as an operator
 * scales out: what each process keeps for itself (its shared point in time, its key cache, its
 * view of the rate limit) and what they share (queues, the visibility epoch, revocations, budgets,
 * the rebuild lock) must make them behave as one service.
 */

requireCluster();

/** Per key and minute, across both API nodes (each test uses its own key). */
const RATE_LIMIT = 40;
const dataset = buildDrillDataset({ seed: 5, total: 1500, posts: 600, accounts: 40 });
/** A valid account search (the lightest search there is). */
const ANY_ACCOUNT = { account: { filters: { followers_count: { gte: 0 } } }, limit: 1 };
let d: Drill;
let apis: ApiProcess[] = [];
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  d = await openDrill('two-of-each', { env: { INDEX_REPLICAS: '1' } });
  await waitForCluster(d.es, { status: 'green', nodes: 3 }, 120_000);
  // Debug logs name every job a worker ran ("observations indexed").
  workers = await Promise.all([1, 2].map(() => d.startWorkerProcess({ WORKER_CONCURRENCY: '2', LOG_LEVEL: 'debug' })));
  // The longest snapshot sharing there is: a first page on a node reuses its point in time for a
  // minute unless the visibility epoch says writes were made visible since.
  const apiEnv = { RATE_LIMIT_SEARCH_PER_MINUTE: String(RATE_LIMIT), SEARCH_SNAPSHOT_MAX_AGE_MS: '60000' };
  apis = await Promise.all([1, 2].map(() => d.startApi(apiEnv)));
});

afterAll(async () => {
  await Promise.all([...apis, ...workers].map((p) => p.stop()));
  await d?.close();
});

const newKey = async (name: string) =>
  (await d.stack.runtime.api.keys.create({ owner: 'cluster@example.com', name, scopes: ['search', 'ingest'] })).key;

/** Sends observations through both API nodes in turn (202, no wait), `size` per request. */
async function sendThroughBoth(key: string, observations: Obs[], size: number): Promise<number> {
  let requests = 0;
  for (let i = 0; i < observations.length; i += size) {
    const answer = await call(apis[requests++ % 2]!.url, '/internal/v1/social/observations', {
      key,
      ndjson: observations.slice(i, i + size),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  }
  return requests;
}

/** The job ids a worker's log says it ran. */
const jobsIn = (worker: WorkerProcess) =>
  new Set(
    readFileSync(worker.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"observations indexed"'))
      .map((line) => String(JSON.parse(line).job)),
  );

describe('two API nodes and two workers on one Redis', () => {
  it('share the queues: both workers take jobs, every observation is indexed exactly once with its newest fields', async () => {
    onTestFailed(() => d.keepLogs());
    const key = await newKey('queues');
    const requests = await sendThroughBoth(key, dataset.observations, 100);
    await drain(d.stack);
    const report = await checkState(d.es, d.prefix, dataset.expected);
    const [first, second] = workers.map(jobsIn) as [Set<string>, Set<string>];
    const completed = (await d.stack.runtime.queue.getJobs(['completed'], 0, -1)).map((j) => j.id!);
    console.log(
      `[two-of-each] ${dataset.observations.length} observations in ${requests} requests; jobs run by worker 1: ${first.size}, worker 2: ${second.size}, completed: ${completed.length}`,
    );
    expect(first.size).toBeGreaterThan(0);
    expect(second.size).toBeGreaterThan(0);
    expect(new Set([...first, ...second])).toEqual(new Set(completed));
    expect(problemsOf(report)).toEqual([]);
  });

  it('a write made visible through one API node is found at once through the other, whose snapshot is shared and young', async () => {
    const key = await newKey('visibility');
    const [a, b] = apis as [ApiProcess, ApiProcess];
    const author = accountObs({ platform_id: 'vis-author', handle: 'vis.author' });
    expect((await call(a.url, '/internal/v1/social/observations?wait=true', { key, ndjson: [author] })).status).toBe(
      200,
    );
    const reusedBefore = await metric(b.url, 'search_snapshots_reused_total');
    for (let round = 0; round < 5; round++) {
      const body = { post: { query: 'visibility round' }, limit: 50 };
      // B answers twice in a row: the second first page reuses the snapshot of the first.
      const warm = [
        await call(b.url, '/v1/social/posts/search', { key, body }),
        await call(b.url, '/v1/social/posts/search', { key, body }),
      ];
      for (const w of warm) expect(w.status).toBe(200);
      const post = postObs('vis-author', { platform_id: `vis-post-${round}`, caption: `visibility round ${round}` });
      expect((await call(a.url, '/internal/v1/social/observations?wait=true', { key, ndjson: [post] })).status).toBe(
        200,
      );
      const after = await call(b.url, '/v1/social/posts/search', { key, body });
      expect(after.status).toBe(200);
      const shortcodes = (after.body.data as Array<{ shortcode: string }>).map((p) => p.shortcode);
      expect(
        shortcodes.filter((s) => s.startsWith('SCvis-post-')).length,
        `round ${round}: ${JSON.stringify(shortcodes)}`,
      ).toBe(round + 1);
    }
    // The snapshot was shared (so the epoch, not its age, is what retired it).
    expect(await metric(b.url, 'search_snapshots_reused_total')).toBeGreaterThanOrEqual(reusedBefore + 5);
  });

  it('a key revoked through the CLI stops working on both API nodes at once, though each had it cached', async () => {
    const created = await d.cli([
      'keys',
      'create',
      '--owner',
      'cluster@example.com',
      '--name',
      'to revoke',
      '--scopes',
      'search',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    const read = (api: ApiProcess) => call(api.url, '/v1/social/accounts/search', { key, body: ANY_ACCOUNT });
    for (const api of apis) expect((await read(api)).status).toBe(200);
    const revoked = await d.cli(['keys', 'revoke', id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const revokedAt = performance.now();
    // KEY_CACHE_TTL_MS is 30 s: only the revocation message can make both nodes refuse within 2 s.
    const statuses: number[][] = [];
    for (const api of apis) {
      const seen: number[] = [];
      for (;;) {
        const status = (await read(api)).status;
        seen.push(status);
        if (status === 401 || performance.now() - revokedAt > 2000) break;
        await sleep(50);
      }
      statuses.push(seen);
    }
    expect(statuses.map((s) => s.at(-1))).toEqual([401, 401]);
  });

  it('the search rate limit is one budget per key across both API nodes', async () => {
    const key = await newKey('rate limit');
    const answers: Answer[] = [];
    for (let i = 0; i < RATE_LIMIT + 10; i++)
      answers.push(await call(apis[i % 2]!.url, '/v1/social/accounts/search', { key, body: ANY_ACCOUNT }));
    const statuses = answers.map((a) => a.status);
    expect(statuses.slice(0, RATE_LIMIT)).toEqual(Array(RATE_LIMIT).fill(200));
    expect(statuses.slice(RATE_LIMIT)).toEqual(Array(10).fill(429));
    // Each node reports what is left of the shared budget, not of its own.
    expect(answers.slice(0, RATE_LIMIT).map((a) => Number(a.headers?.get('ratelimit-remaining')))).toEqual(
      Array.from({ length: RATE_LIMIT }, (_, i) => RATE_LIMIT - 1 - i),
    );
  });

  it('one rebuild at a time across processes; intake through both nodes during a rebuild is queued and applied after the swap', async () => {
    onTestFailed(() => d.keepLogs());
    const key = await newKey('rebuild');
    // This process holds the lock, as a rebuild running elsewhere would (it takes it first of all).
    const held = await acquireRebuildLock(d.stack.runtime.redis, d.prefix, 'posts', 'the test process');
    if (!('lock' in held)) throw new Error(`the lock is taken: ${held.heldBy}`);
    let refused: Awaited<ReturnType<Drill['cli']>>;
    try {
      refused = await d.cli(['indices', 'rebuild', 'posts']);
    } finally {
      await held.lock.release();
    }
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already running \(the test process\)/);

    const rebuilding = d.cli(['indices', 'rebuild', 'posts']);
    const deadline = Date.now() + 60_000;
    while (!(await rebuildRunning(d.stack.runtime.redis, d.prefix, 'posts'))) {
      if (Date.now() > deadline) throw new Error('the rebuild never took the lock');
      await sleep(20);
    }
    const late = Array.from({ length: 4 }, (_, i) =>
      postObs('vis-author', { platform_id: `late-post-${i}`, caption: `sent during the rebuild ${i}` }),
    );
    await sendThroughBoth(key, late, 2);
    const lockedDuringIntake = await rebuildRunning(d.stack.runtime.redis, d.prefix, 'posts');
    const done = await rebuilding;
    expect(done.code, done.stderr).toBe(0);
    await drain(d.stack);
    console.log(
      `[two-of-each] rebuild: ${done.stdout.trim()} in ${done.ms} ms; intake sent while it held the lock: ${lockedDuringIntake}`,
    );
    for (const api of apis) {
      const page = await call(api.url, '/v1/social/posts/search', {
        key,
        body: { post: { query: 'sent during the rebuild' }, limit: 10 },
      });
      expect(page.status).toBe(200);
      const shortcodes = (page.body.data as Array<{ shortcode: string }>)
        .map((p) => p.shortcode)
        .filter((s) => s.startsWith('SClate-post-'));
      expect(shortcodes.sort()).toEqual(late.map((o) => o.shortcode).sort());
    }
  });
});
