import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createProducer,
  oldestWaitingAt,
  QUEUES,
  type JobPayload,
  type ObservationJob,
  type QueueName,
} from '../../src/queues/registry.ts';
import { startQueueConsumers } from '../../src/queues/consumers.ts';
import { PostponedError } from '../../src/internal/errors.ts';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-queues-${randomUUID().slice(0, 8)}`;
const connections: Redis[] = [];
const connection = () => {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  connections.push(redis);
  return redis;
};
const quiet = { warn: () => undefined, error: () => undefined };

afterAll(async () => {
  const redis = connection();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  for (const c of connections) c.disconnect();
});

describe('queue registry', () => {
  it('tells when the oldest waiting batch arrived, and null once none waits', async () => {
    // Its own prefix: no consumer of the other tests takes these jobs.
    const producer = createProducer('observations', { connection: connection(), prefix: `${prefix}-oldest` });
    try {
      expect(await oldestWaitingAt(producer)).toBeNull();
      const payload = (id: string): ObservationJob => ({
        observations: [{ kind: 'account', platform_id: id } as never],
        refresh: false,
        request_id: `req_${id}`,
      });
      const first = await producer.add('observations', payload('o1'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await producer.add('observations', payload('o2'));
      expect(second.timestamp).toBeGreaterThan(first.timestamp);
      expect(await oldestWaitingAt(producer)).toBe(first.timestamp);
      // Gone (here removed; in the service taken by the worker): the next one is the oldest.
      await first.remove();
      expect(await oldestWaitingAt(producer)).toBe(second.timestamp);
      await second.remove();
      expect(await oldestWaitingAt(producer)).toBeNull();
    } finally {
      await producer.obliterate({ force: true });
      await producer.close();
    }
  });

  it('hands a handler the payload it declared, with the retry flag, and keeps its result', async () => {
    const producer = createProducer('observations', { connection: connection(), prefix });
    const events = new QueueEvents('observations', { connection: connection(), prefix });
    await events.waitUntilReady();
    const seen: Array<{ payload: ObservationJob; isRetry: boolean }> = [];
    const result = { accounts_written: 1, posts_written: 0, fanned_out: 0, baselines_updated: 0, metrics_updated: 0 };
    const workers = startQueueConsumers(
      { observations: async (payload, job) => (seen.push({ payload, isRetry: job.isRetry }), result) },
      { connection, prefix, configuredConcurrency: 1, logger: quiet },
    );
    try {
      const payload: ObservationJob = {
        observations: [{ kind: 'account', platform_id: 'a1' } as never],
        refresh: false,
        request_id: 'req_1',
      };
      const job = await producer.add('observations', payload);
      expect(await job.waitUntilFinished(events, 10_000)).toEqual(result);
      expect(seen).toEqual([{ payload, isRetry: false }]);
      // The table's options apply to every job: retries for about an hour, failures kept.
      expect(job.opts.attempts).toBe(80);
    } finally {
      await workers.close();
      await events.close();
      await producer.close();
    }
  });

  it('fails a payload this version cannot read at once, without calling the handler or retrying it', async () => {
    // A job written by another release: the raw queue bypasses the registry's types.
    const raw = new Queue('embeddings', { connection: connection(), prefix });
    const events = new QueueEvents('embeddings', { connection: connection(), prefix });
    await events.waitUntilReady();
    let calls = 0;
    const workers = startQueueConsumers(
      { embeddings: async () => ++calls },
      { connection, prefix, configuredConcurrency: 1, logger: quiet },
    );
    try {
      const job = await raw.add('embed', { post_ids: ['post_1'] }, { attempts: 5 });
      await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(
        /unreadable embeddings job payload: \/posts, \/accounts: required/,
      );
      const failed = await raw.getJob(job.id!);
      expect(failed?.attemptsMade).toBe(1);
      expect(calls).toBe(0);
    } finally {
      await workers.close();
      await events.close();
      await raw.close();
    }
  });
  it('logs every failed attempt of every queue, the ones it will retry too, naming the queue and the attempt', async () => {
    // A delivery, a pass or an embedding failing quietly until its last attempt could be silent
    // for days: no queue is exempt.
    const payloads: { [N in QueueName]: JobPayload<N> } = {
      observations: {
        observations: [{ kind: 'account', platform_id: 'a1' } as never],
        refresh: false,
        request_id: 'r',
      },
      embeddings: { posts: ['post_1'], accounts: [] },
      'follow-ups': {},
      alerts: {},
      maintenance: {},
    };
    const warned: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const logger = {
      warn: (fields: object, message?: string) =>
        void warned.push({ fields: fields as Record<string, unknown>, message: message ?? '' }),
      error: () => undefined,
    } as unknown as Parameters<typeof startQueueConsumers>[1]['logger'];
    const names = Object.keys(QUEUES) as QueueName[];
    const failing = async () => {
      throw new Error('the handler failed');
    };
    const workers = startQueueConsumers(Object.fromEntries(names.map((n) => [n, failing])), {
      connection,
      prefix,
      configuredConcurrency: 1,
      logger,
    });
    const producers = names.map((n) => createProducer(n, { connection: connection(), prefix }));
    try {
      await Promise.all(names.map((n, i) => producers[i]!.add(n, payloads[n] as never)));
      const deadline = Date.now() + 10_000;
      while (new Set(warned.map((w) => w.fields['queue'])).size < names.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      for (const name of names) {
        const line = warned.find((w) => w.fields['queue'] === name);
        expect(line, name).toMatchObject({ message: 'job failed; it will be retried', fields: { attempts: 1 } });
      }
    } finally {
      await workers.close();
      await Promise.all(producers.map((p) => p.close()));
    }
  });

  it('puts a job that stops for shutdown back in its queue, its attempt not counted, and runs it again as a retry', async () => {
    const producer = createProducer('embeddings', { connection: connection(), prefix: `${prefix}-stop` });
    const options = { connection, prefix: `${prefix}-stop`, configuredConcurrency: 1, logger: quiet };
    // A long job: it does a step at a time until it is told the process is stopping.
    let steps = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = startQueueConsumers(
      {
        embeddings: async (_payload, job) => {
          started();
          while (!job.stopping.aborted) {
            steps++;
            await new Promise((r) => setTimeout(r, 20));
          }
          throw new PostponedError(`stopped after ${steps} steps`);
        },
      },
      options,
    );
    const job = await producer.add('embeddings', { posts: ['post_1', 'post_2'], accounts: [] });
    await running;
    // close() resolves once the running job has stopped: it does not wait for the job's end.
    await first.close();
    const postponed = await producer.getJob(job.id!);
    expect(['delayed', 'waiting']).toContain(await postponed!.getState());
    expect(postponed!.attemptsMade).toBe(0);
    expect(postponed!.failedReason ?? null).toBeNull();
    expect(steps).toBeGreaterThan(0);

    const events = new QueueEvents('embeddings', { connection: connection(), prefix: `${prefix}-stop` });
    await events.waitUntilReady();
    const seen: Array<{ posts: string[]; isRetry: boolean }> = [];
    const second = startQueueConsumers(
      { embeddings: async (payload, context) => (seen.push({ posts: payload.posts, isRetry: context.isRetry }), 2) },
      options,
    );
    try {
      expect(await postponed!.waitUntilFinished(events, 10_000)).toBe(2);
      // The same work, flagged as possibly begun: the handler re-checks what the first run wrote.
      expect(seen).toEqual([{ posts: ['post_1', 'post_2'], isRetry: true }]);
    } finally {
      await second.close();
      await events.close();
      await producer.close();
    }
  });
});
