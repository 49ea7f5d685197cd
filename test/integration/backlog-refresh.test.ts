import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldOf } from '../../src/internal/typed-objects.ts';
import { createProducer, requestFollowUp, type Producer } from '../../src/queues/registry.ts';
import { openBacklogRefresh } from '../../src/start/backlog-refresh.ts';
import type { BacklogRefresh } from '../../src/internal/backlog-refresh.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { until } from '../helpers/wait.ts';

// While the intake is behind (its oldest waiting batch has waited BACKLOG_REFRESH_INTERVAL), a
// worker raises the refresh interval of the indices the intake writes and lets follow-ups gather
// as long; once the queue has caught up, both go back (src/internal/backlog-refresh.ts). Real
// queue, real engine: the batch waits because no worker runs until the test starts one.
let stack: Stack;
let refresh: BacklogRefresh | null = null;
let followUps: Producer<'follow-ups'> | undefined;
const said: string[] = [];

beforeAll(async () => {
  stack = await startStack('backlog-refresh', { BACKLOG_REFRESH_INTERVAL: '3s' }, { worker: false });
}, 60_000);

afterAll(async () => {
  refresh?.close();
  await followUps?.close();
  await stack?.close();
});

/** The live refresh interval of each index the intake writes, by its alias. */
async function intervals(): Promise<Record<string, string>> {
  const prefix = stack.config.INDEX_PREFIX;
  const out: Record<string, string> = {};
  for (const name of ['posts', 'post-vectors', 'accounts']) {
    const settings = await stack.runtime.es.indices.getSettings({ index: `${prefix}-${name}`, flat_settings: true });
    const [index] = Object.values(settings);
    const value = fieldOf(index?.settings, 'index.refresh_interval');
    out[name] = typeof value === 'string' ? value : '1s';
  }
  return out;
}

describe('refreshes sized for a backlog', () => {
  it('raises the interval while a batch waits, keeps an operator’s longer one, and sets it back once the worker catches up', async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void said.push(JSON.parse(line).msg) });
    followUps = createProducer('follow-ups', {
      connection: stack.runtime.connections.producerRedis(),
      prefix: stack.config.REDIS_PREFIX,
    });
    refresh = openBacklogRefresh(
      stack.config,
      { observations: stack.runtime.queue, followUps },
      stack.runtime.indexAdmin,
      logger,
    );
    // Its first sample keeps the live indices at INDEX_REFRESH_INTERVAL (a worker stopped while
    // behind may have left them raised); then an operator raises the accounts' for a backfill.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await stack.runtime.es.indices.putSettings({
      index: `${stack.config.INDEX_PREFIX}-accounts`,
      settings: { refresh_interval: '30s' },
    });
    expect(refresh?.followUpDelayMs(1000)).toBe(1000);

    const sent = await stack.ingest(
      [accountObs({ platform_id: 'br-a', handle: 'backlog.refresh' }), postObs('br-a', { platform_id: 'br-p1' })],
      { wait: false },
    );
    expect(sent.statusCode).toBe(202);
    await until(async () => (await intervals()).posts === '3s', { timeoutMs: 15_000, what: 'the raised interval' });
    expect(await intervals()).toEqual({ posts: '3s', 'post-vectors': '3s', accounts: '30s' });
    expect(refresh?.followUpDelayMs(1000)).toBe(3000);
    // A follow-up run asked for meanwhile waits; caught up, it starts at once whatever its delay.
    await requestFollowUp(followUps, 60_000);
    expect(await followUps.getDelayedCount()).toBe(1);

    // The worker drains the queue: caught up, every index is back at INDEX_REFRESH_INTERVAL.
    stack.runtime.startWorkerProcess(pino({ level: 'silent' }));
    await until(async () => (await intervals()).posts === '1s', { timeoutMs: 15_000, what: 'the interval set back' });
    expect(await intervals()).toEqual({ posts: '1s', 'post-vectors': '1s', accounts: '1s' });
    expect(refresh?.followUpDelayMs(1000)).toBe(1000);
    await until(async () => (await followUps!.getDelayedCount()) === 0, {
      timeoutMs: 10_000,
      what: 'the follow-up run promoted',
    });
    // Once when it fell behind, once when it caught up.
    expect(said.filter((m) => /behind|caught up/.test(m))).toEqual([
      expect.stringMatching(/^the intake is behind/),
      expect.stringMatching(/^the intake has caught up/),
    ]);
    // Nothing was lost or left invisible: the engine's own refresh shows the batch's post.
    const visible = async () =>
      (await stack.runtime.es.count({ index: `${stack.config.INDEX_PREFIX}-posts` })).count === 1;
    await until(visible, { timeoutMs: 10_000, what: 'the post visible to search' });
  }, 60_000);

  it('a paused queue (an index rebuild) is not a backlog: its waiting batches raise nothing', async () => {
    await stack.runtime.queue.pause();
    try {
      await stack.ingest([postObs('br-a', { platform_id: 'br-p2' })], { wait: false });
      await new Promise((resolve) => setTimeout(resolve, 5000));
      expect((await intervals()).posts).toBe('1s');
      expect(refresh?.followUpDelayMs(1000)).toBe(1000);
    } finally {
      await stack.runtime.queue.resume();
    }
  }, 30_000);
});
