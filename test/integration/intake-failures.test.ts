import { Queue, Worker } from 'bullmq';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseObservation } from '../../src/contract/observations.ts';
import { ServiceUnavailableError } from '../../src/internal/errors.ts';
import { accountObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { until } from '../helpers/wait.ts';

// An operator's view of observations that could not be indexed: `intake failures` lists them,
// `intake retry` requeues them. The CLI runs as a subprocess on this file's prefixes.

const exec = promisify(execFile);
let stack: Stack;
let raw: Queue;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/social-search.js', ...args], {
      env: {
        ...process.env,
        INDEX_PREFIX: stack.config.INDEX_PREFIX,
        REDIS_PREFIX: stack.config.REDIS_PREFIX,
        LOG_LEVEL: 'warn',
      },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error: any) {
    return { code: error.code ?? 1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' };
  }
}

/** `intake failures --json`, parsed. */
async function failures(): Promise<any[]> {
  const result = await cli('intake', 'failures', '--json');
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

beforeAll(async () => {
  // No worker: each test starts the one it needs.
  stack = await startStack('intake-failures', {}, { worker: false });
  // Jobs as another release or a broken worker would leave them: a raw queue, past the registry's types.
  raw = new Queue('observations', { connection: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX });
});
afterAll(async () => {
  await raw?.close();
  await stack?.close();
});

describe('social-search intake failures | retry', () => {
  it('lists a job this version cannot read, with its reason and observations, and requeues it with fresh attempts', async () => {
    const observation = parseObservation(accountObs({ platform_id: 'fail-unreadable' }));
    if (!observation.ok) throw new Error(observation.detail);
    // A field this version does not know: the worker's registry check fails it at once.
    const job = await raw.add('observations', {
      observations: [observation.value],
      refresh: false,
      request_id: 'req_from_a_newer_release',
      shard: 3,
    });
    const worker = stack.runtime.startWorkerProcess(pino({ level: 'silent' }));
    await until(() => job.isFailed());
    await worker.close();

    const [listed, ...others] = await failures();
    expect(others).toEqual([]);
    expect(listed).toEqual({
      id: job.id,
      request_id: 'req_from_a_newer_release',
      observation_count: 1,
      attempts: expect.any(Number),
      failed_reason: expect.stringMatching(/^unreadable observations job payload: .*shard/),
      failed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      kinds: { account: 1 },
      observations: [{ kind: 'account', platform_id: 'fail-unreadable' }],
    });
    const text = await cli('intake', 'failures');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${job.id}\t`);
    expect(text.stdout).toContain('unreadable observations job payload');
    expect(text.stderr).toMatch(/^1 failed job\(s\), 1 observation\(s\)/);

    const retried = await cli('intake', 'retry', '--all');
    expect(retried).toMatchObject({ code: 0, stdout: `requeued 1 job(s): ${job.id}\n` });
    const requeued = await raw.getJob(job.id!);
    expect(await requeued!.getState()).toBe('waiting');
    expect(requeued!.attemptsMade).toBe(0);
    expect(await failures()).toEqual([]);
    // Nothing is waiting for this worker-less test any more.
    await requeued!.remove();
  });

  it('indexes a failed job once it is requeued by id', async () => {
    const observation = parseObservation(accountObs({ platform_id: 'fail-retried', handle: 'failed.then.retried' }));
    if (!observation.ok) throw new Error(observation.detail);
    // A worker whose every attempt fails (an engine that rejects the writes), on one attempt.
    const broken = new Worker(
      'observations',
      async () => {
        throw new Error('the engine rejected the bulk write');
      },
      { connection: stack.runtime.connections.queueRedis('broken worker'), prefix: stack.config.REDIS_PREFIX },
    );
    const job = await stack.runtime.queue.add(
      'observations',
      { observations: [observation.value], refresh: true, request_id: 'req_retry_me' },
      { attempts: 1 },
    );
    await until(() => job.isFailed());
    await broken.close();

    const listed = (await failures()).find((f) => f.id === job.id);
    expect(listed).toMatchObject({
      request_id: 'req_retry_me',
      attempts: 1,
      failed_reason: 'the engine rejected the bulk write',
    });
    expect((await stack.get('/v1/social/accounts/@failed.then.retried')).statusCode).toBe(404);

    stack.runtime.startWorkerProcess(pino({ level: 'silent' }));
    expect(await cli('intake', 'retry', job.id!)).toMatchObject({ code: 0, stdout: `requeued 1 job(s): ${job.id}\n` });
    const account = await until(async () => {
      const response = await stack.get('/v1/social/accounts/@failed.then.retried');
      return response.statusCode === 200 && response;
    });
    expect(account.body.handle).toBe('failed.then.retried');
    expect(await failures()).toEqual([]);
  });

  it('waits by ID until a job ends: a failed one is a 503, a finished or removed one is no wait', async () => {
    const observation = parseObservation(accountObs({ platform_id: 'fail-waited' }));
    if (!observation.ok) throw new Error(observation.detail);
    const payload = { observations: [observation.value], refresh: false, request_id: 'req_waited' };
    // Unreadable to this version (a field it does not know): any worker fails it at once.
    const failing = await raw.add('observations', { ...payload, shard: 3 });
    const done = await stack.runtime.queue.add('observations', payload);
    const { intake } = stack.runtime.api;
    // Waited on while both are still queued: the wait learns how each ended from the queue's events.
    const waited = intake.waitFor([done.id!, failing.id!, 'no-such-job'], 20_000);
    const worker = stack.runtime.startWorkerProcess(pino({ level: 'silent' }));
    try {
      await expect(waited).rejects.toBeInstanceOf(ServiceUnavailableError);
      expect(await done.getState()).toBe('completed');
      // Ended already: the wait reads their states and answers at once, the failure a 503 again.
      await expect(intake.waitFor([failing.id!], 20_000)).rejects.toBeInstanceOf(ServiceUnavailableError);
      await intake.waitFor([done.id!, 'no-such-job'], 1);
    } finally {
      await worker.close();
      await failing.remove();
    }
  });

  it('says which ids are not failed jobs (exit 1), and wants ids or --all (exit 2)', async () => {
    const unknown = await cli('intake', 'retry', 'no-such-job');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not in the failed set (unknown, or already requeued): no-such-job');
    expect((await cli('intake', 'retry')).code).toBe(2);
    expect((await cli('intake', 'retry', 'x', '--all')).code).toBe(2);
    const none = await cli('intake', 'failures');
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'no failed observation jobs\n' });
  });
});
