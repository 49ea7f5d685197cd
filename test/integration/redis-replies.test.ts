import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalError } from '../../src/internal/errors.ts';
import { HASH, NUMBER, NUMBERS, STRINGS, replyOf, repliesOf } from '../../src/internal/redis-replies.ts';

// Replies as a real Redis gives them through ioredis: scripts' tables, integers, HGETALL's object.
const prefix = `test-redis-replies-${randomUUID().slice(0, 8)}`;
let redis: Redis;
beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('Redis replies', () => {
  it('reads a script table of integers, of strings, and an integer as what they are', async () => {
    expect(replyOf(await redis.eval('return {1, 2, 3}', 0), NUMBERS)).toEqual([1, 2, 3]);
    expect(replyOf(await redis.eval("return {'a', 'b'}", 0), STRINGS)).toEqual(['a', 'b']);
    expect(replyOf(await redis.eval('return 7', 0), NUMBER)).toBe(7);
  });

  it('reads pipelined HGETALLs as hashes, an absent key as an empty one', async () => {
    await redis.hset(`${prefix}:h`, { a: '1', b: 'x' });
    const results = await redis.pipeline().hgetall(`${prefix}:h`).hgetall(`${prefix}:absent`).exec();
    const values = (results ?? []).map(([, value]) => value);
    expect(repliesOf(values, HASH)).toEqual([{ a: '1', b: 'x' }, {}]);
  });

  it('refuses a reply of another shape as an internal error, never as data', async () => {
    const mixed = await redis.eval("return {1, 'two'}", 0);
    expect(() => replyOf(mixed, NUMBERS)).toThrow(InternalError);
    const nil = await redis.eval('return nil', 0);
    expect(() => replyOf(nil, STRINGS)).toThrow('Redis answered null where an array of strings was expected');
  });
});
