import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  // No worker: nothing gets indexed until the test starts one.
  stack = await startStack('intake-timeout', { INTAKE_WAIT_TIMEOUT_MS: '700' }, { worker: false });
});
afterAll(async () => stack?.close());

describe('?wait=true when indexing does not finish in time', () => {
  it('answers a 504 intake-timeout problem, keeps the observations queued, and indexes them later', async () => {
    const started = Date.now();
    const response = await stack.ingest([accountObs({ platform_id: 'to-a', handle: 'late.bloomer' })]);
    expect(response.statusCode).toBe(504);
    expect(response.body).toMatchObject({ type: 'https://api.example.test/problems/intake-timeout', status: 504 });
    expect(response.body.detail).toMatch(/queued/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await stack.runtime.queue.getWaitingCount()).toBe(1);

    const worker = stack.runtime.startWorkerProcess(pino({ level: 'silent' }));
    try {
      const id = mintId('account', 'to-a');
      const deadline = Date.now() + 20_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = (await stack.get(`/v1/social/accounts/${id}`)).statusCode;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
    } finally {
      await worker.close();
    }
  });
});
