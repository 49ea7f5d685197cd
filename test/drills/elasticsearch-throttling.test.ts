import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import {
  buildDrillDataset,
  checkState,
  drain,
  jobCounts,
  openDrill,
  problemsOf,
  rerunsOf,
  sendObservations,
  summary,
  waitForCounts,
  type Drill,
} from '../helpers/drill.ts';
import { bulkRequests, startFaultProxy, type FaultMode, type FaultProxy } from '../helpers/fault-proxy.ts';

/**
 * Drill: Elasticsearch answers 429 and 5xx to a share of the requests during a 20,000-observation
 * intake: 429 to 30 % of bulk writes, then 503 to 30 % of every request (reads, searches,
 * refreshes included), then 200 with every item rejected (429 `es_rejected_execution_exception`,
 * what a node under indexing pressure answers) to 30 % of bulk writes, then normal again.
 *
 * Why a proxy: every test file shares the one local Elasticsearch; making it overloaded for
 * real would fail the others. The service under test reaches Elasticsearch through the fault
 * proxy (ELASTICSEARCH_URL); the checks read the real cluster directly.
 */

const PHASE_MS = 8000;
const PHASES: FaultMode[] = [
  { kind: 'status', status: 429, fraction: 0.3, match: bulkRequests },
  { kind: 'status', status: 503, fraction: 0.3 },
  { kind: 'reject-items', fraction: 0.3 },
];
const dataset = buildDrillDataset({ seed: 23 });
let proxy: FaultProxy | undefined;
let drill: Drill | undefined;

beforeAll(async () => {
  proxy = await startFaultProxy(process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200');
  drill = await openDrill('es-throttling', { elasticsearchUrl: proxy.url });
});
afterAll(async () => {
  await drill?.close();
  await proxy?.close();
});

it('indexes every observation exactly once, with its newest fields, while Elasticsearch answers 429 and 503', async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const worker = await d.startWorkerProcess({ WORKER_CONCURRENCY: '4' });
  const started = performance.now();
  const sending = sendObservations(d.stack, dataset.observations, { requestSize: 2500, maxQueuedJobs: 10 });
  sending.catch(() => undefined);

  await waitForCounts(d.stack, (c) => (c.completed ?? 0) >= 4, 180_000, 'the first jobs');
  const faultsFrom = performance.now();
  const completedPerPhase: number[] = [];
  for (const mode of PHASES) {
    await proxy!.set(mode);
    await sleep(PHASE_MS);
    completedPerPhase.push((await jobCounts(d.stack)).completed ?? 0);
  }
  await proxy!.set({ kind: 'pass' });
  const restored = performance.now();

  const sent = await sending;
  const end = await drain(d.stack);
  const drained = performance.now();
  const report = await checkState(d.es, d.prefix, dataset.expected);
  const reruns = await rerunsOf(d.stack);
  await worker.stop();

  const stats = proxy!.stats();
  summary('elasticsearch-throttling', {
    observations: sent.sent,
    posts: `${report.posts.count}/${report.posts.expected}`,
    accounts: `${report.accounts.count}/${report.accounts.expected}`,
    faults_ms: Math.round(restored - faultsFrom),
    jobs_completed_after_each_phase: completedPerPhase,
    job_reruns: reruns,
    drained_after_faults_ms: Math.round(drained - restored),
    total_ms: Math.round(drained - started),
    jobs: end,
    proxy: stats,
  });
  expect(stats.injected[429], '429s were injected').toBeGreaterThan(0);
  expect(stats.injected[503], '503s were injected').toBeGreaterThan(0);
  expect(stats.rejectedBulks, 'bulk items were rejected').toBeGreaterThan(0);
  expect(problemsOf(report)).toEqual([]);
});

// The check above is only worth something if it can fail: corrupt the end state three ways.
it('the end-state check notices a lost, a duplicated and a stale document', async () => {
  const d = drill!;
  const postsAlias = `${d.prefix}-posts`;
  const [live] = Object.keys(await d.es.indices.getAlias({ name: postsAlias }));
  const hits = (
    await d.es.search<{ record: any }>({
      index: postsAlias,
      size: 2,
      query: { exists: { field: 'views' } },
      _source: ['record'],
    })
  ).hits.hits;
  const [stalePost, duplicatedPost] = hits;
  const record = structuredClone(stalePost!._source!.record);
  record.raw.v.views = -1;
  await d.es.index({ index: live!, id: stalePost!._id!, document: { record }, refresh: true });
  const copy = `${d.prefix}-posts-v0-selfcheck`;
  await d.es.indices.create({ index: copy, aliases: { [postsAlias]: {} } });
  await d.es.index({
    index: copy,
    id: duplicatedPost!._id!,
    document: { record: duplicatedPost!._source!.record },
    refresh: true,
  });
  const account = (await d.es.search({ index: `${d.prefix}-accounts`, size: 1 })).hits.hits[0]!;
  await d.es.delete({ index: account._index, id: account._id!, refresh: true });

  const report = await checkState(d.es, d.prefix, dataset.expected);
  expect(report.stale.some((l) => l.startsWith(`${stalePost!._id} raw`))).toBe(true);
  expect(report.duplicates.some((l) => l.startsWith(duplicatedPost!._id!))).toBe(true);
  expect(report.missing.some((l) => l.includes(account._id!))).toBe(true);
  const problems = problemsOf(report).join('\n');
  expect(problems).toMatch(/posts: \d+ documents, expected/);
  expect(problems).toMatch(/accounts: \d+ documents, expected/);
  expect(problems).toMatch(/posts alias points at/);
});
