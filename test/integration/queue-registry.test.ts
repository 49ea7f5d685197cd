import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createProducer, type ObservationJob } from '../../src/queues/registry.ts';
import { startQueueConsumers } from '../../src/queues/consumers.ts';

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
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  for (const c of connections) c.disconnect();
});

describe('queue registry', () => {
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
        /unreadable embeddings job payload: \/posts: required/,
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
});
