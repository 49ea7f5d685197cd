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
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

/**
 * Drill: Elasticsearch stops in the middle of a 20,000-observation intake, then comes back.
 *
 * Why a proxy and not the real thing: every test file shares the one local Elasticsearch, and
 * stopping its JVM would fail whatever else runs against it (and restarting it takes longer than
 * the drill). The service under test (API and worker) reaches Elasticsearch only through the
 * fault proxy (ELASTICSEARCH_URL); "stopped" is the proxy cutting every open connection and
 * in-flight request (a bulk already forwarded may have been applied without its answer arriving,
 * as when a node dies mid-request), then resetting, then refusing new connections. The checks
 * read the real cluster directly.
 */

const OUTAGE_MS = 12_000;
const dataset = buildDrillDataset({ seed: 11 });
let proxy: FaultProxy | undefined;
let drill: Drill | undefined;

beforeAll(async () => {
  proxy = await startFaultProxy(process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200');
  drill = await openDrill('es-outage', { elasticsearchUrl: proxy.url });
});
afterAll(async () => {
  await drill?.close();
  await proxy?.close();
});

it('indexes every observation exactly once, with its newest fields, after Elasticsearch stops mid-intake', async () => {
  const d = drill!;
  onTestFailed(() => d.keepLogs());
  const worker = await d.startWorkerProcess({ WORKER_CONCURRENCY: '4' });
  const started = performance.now();
  const sending = sendObservations(d.stack, dataset.observations, { requestSize: 2500, maxQueuedJobs: 10 });
  sending.catch(() => undefined);

  // Mid-intake: about a third of the 40 jobs done, requests still coming.
  await waitForCounts(d.stack, (c) => (c.completed ?? 0) >= 12, 180_000, 'a third of the jobs');
  const before = await jobCounts(d.stack);
  const down = performance.now();
  await proxy!.set({ kind: 'reset' });
  await sleep(OUTAGE_MS / 2);
  await proxy!.set({ kind: 'refuse' });
  await sleep(OUTAGE_MS / 2);
  const during = await jobCounts(d.stack);
  await proxy!.set({ kind: 'pass' });
  const restored = performance.now();
  await waitForCounts(
    d.stack,
    (c) => (c.completed ?? 0) > (during.completed ?? 0),
    180_000,
    'a job to complete after the restart',
  );
  const firstCompletion = performance.now();

  const sent = await sending;
  const end = await drain(d.stack);
  const drained = performance.now();
  const report = await checkState(d.es, d.prefix, dataset.expected);
  const reruns = await rerunsOf(d.stack);
  await worker.stop();

  summary('elasticsearch-outage', {
    observations: sent.sent,
    requests: sent.requests,
    posts: `${report.posts.count}/${report.posts.expected}`,
    accounts: `${report.accounts.count}/${report.accounts.expected}`,
    outage_ms: Math.round(restored - down),
    jobs_completed_before_outage: before.completed,
    job_reruns: reruns,
    first_completion_after_restart_ms: Math.round(firstCompletion - restored),
    drained_after_restart_ms: Math.round(drained - restored),
    total_ms: Math.round(drained - started),
    jobs: end,
    proxy: proxy!.stats(),
  });
  expect(reruns, 'the outage made jobs fail and retry').toBeGreaterThan(0);
  expect(problemsOf(report)).toEqual([]);
});
