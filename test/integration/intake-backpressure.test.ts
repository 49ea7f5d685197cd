import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    stack.runtime.startWorkerProcess((await import('pino')).pino({ level: 'silent' }));
    const deadline = Date.now() + 30_000;
    while ((await stack.runtime.queue.getWaitingCount()) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect((await stack.ingest(accounts(10, 'c'), { wait: false })).statusCode).toBe(202);
  });
});
