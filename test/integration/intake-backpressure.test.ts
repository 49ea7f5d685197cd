import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ingestStream } from '../../src/services/intake/stream-ingest.ts';
import type { Closable } from '../../src/start/core.ts';
import { accountObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  // No worker: the queue only grows. Room for two jobs of 500 observations.
  stack = await startStack('intake-backpressure', { INTAKE_MAX_QUEUED_OBSERVATIONS: '1000' }, { worker: false });
});
afterAll(async () => stack?.close());

const accounts = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => accountObs({ platform_id: `bp-${tag}-${i}` }));

describe('intake backpressure', () => {
  it('refuses a whole request with 503 and Retry-After once the backlog is full, and accepts again as it drains', async () => {
    expect((await stack.ingest(accounts(500, 'a'), { wait: false })).statusCode).toBe(202);
    expect((await stack.ingest(accounts(300, 'b'), { wait: false })).statusCode).toBe(202);
    const waitingBefore = await stack.runtime.queue.getWaitingCount();

    const refused = await stack.inject({
      method: 'POST',
      url: '/internal/v1/social/observations',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
      payload: accounts(10, 'c')
        .map((o) => JSON.stringify(o))
        .join('\n'),
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body.type).toMatch(/\/problems\/service-unavailable$/);
    expect(refused.body.detail).toMatch(/backlog is full/);
    // Nothing of the refused request was queued.
    expect(await stack.runtime.queue.getWaitingCount()).toBe(waitingBefore);

    // A worker drains the backlog: the same request is accepted.
    stack.runtime.startWorkerProcess(pino({ level: 'silent' }));
    const deadline = Date.now() + 30_000;
    while ((await stack.runtime.queue.getWaitingCount()) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect((await stack.ingest(accounts(10, 'c'), { wait: false })).statusCode).toBe(202);
  });
});

describe('a bulk load (seed, ingest) against a full backlog', () => {
  let loader: Stack;
  beforeAll(async () => {
    // Room for one request of 5,000 observations (ten jobs), and no worker until the load waits.
    loader = await startStack(
      'intake-backpressure-load',
      { INTAKE_MAX_QUEUED_OBSERVATIONS: '5000' },
      { worker: false },
    );
  });
  afterAll(async () => loader?.close());

  it('waits for the workers instead of failing, and loses nothing', async () => {
    // Three requests: the first fills the backlog, the second finds it full; the last one goes
    // only once the rest is indexed (a waiting load holds it back to refresh once).
    const entries = accounts(11_000, 'load').map((value, i) => ({ line: i + 1, value }));
    const waits: number[] = [];
    let worker: Closable | undefined;
    const result = await ingestStream(entries, loader.runtime.api.intake, {
      wait: true,
      requestId: 'req_backpressure_load',
      waitTimeoutMs: 120_000,
      onBackpressure: (ms) => {
        waits.push(ms);
        // The second request found the backlog full: only now does a worker start draining it.
        worker ??= loader.runtime.startWorkerProcess(pino({ level: 'silent' }));
      },
    });
    expect(worker).toBeDefined();
    expect(waits[0]).toBeGreaterThan(0);
    expect(result).toMatchObject({ accepted: 11_000, rejected: 0 });
    const indexed = await loader.runtime.es.count({ index: `${loader.runtime.config.INDEX_PREFIX}-accounts` });
    expect(indexed.count).toBe(11_000);
  });
});
