import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationRequiredError } from '../../src/internal/errors.ts';
import { createCachedKeyStore, type CachedKeyStore } from '../../src/services/keys/key-cache.ts';
import { createKeyService, type KeyService } from '../../src/services/keys/key-service.ts';
import { createKeyStore, revocationChannel, type KeyStore } from '../../src/services/keys/key-store.ts';
import { until } from '../helpers/wait.ts';

// Two processes' worth of key services over one real Redis: an API node that caches active keys,
// and an operator's CLI that revokes without any cache.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-key-cache-${randomUUID()}`;
const connections: Redis[] = [];
const connect = () => {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  connections.push(connection);
  return connection;
};

let store: KeyStore;
let reads = 0;
let cached: CachedKeyStore;
let api: KeyService;
let cli: KeyService;

beforeAll(() => {
  const plain = createKeyStore({ redis: connect(), prefix });
  // The real store, counting the reads that reach Redis.
  store = { ...plain, get: (id) => (reads++, plain.get(id)) };
  cached = createCachedKeyStore({ store, subscriber: connect, channel: revocationChannel(prefix), ttlMs: 60_000 });
  api = createKeyService({ store: cached });
  cli = createKeyService({ store: createKeyStore({ redis: connect(), prefix }) });
});

afterAll(async () => {
  cached.close();
  const redis = connections[0]!;
  const found = [...(await redis.keys(`${prefix}:*`)), ...(await redis.keys(`${prefix}-other:*`))];
  if (found.length > 0) await redis.del(...found);
  for (const connection of connections) connection.disconnect();
});

/** The cache's listener state flips within milliseconds: poll it closely. */
const QUICK = { timeoutMs: 2000, intervalMs: 5 };

describe('API key cache', () => {
  it('authenticates repeat requests without reading Redis once its revocation listener is live', async () => {
    const created = await cli.create({ owner: 'cache@example.com', name: 'cached' });
    await api.authenticate(`Bearer ${created.key}`);
    await until(() => cached.stats().listening, QUICK);
    await api.authenticate(`Bearer ${created.key}`);
    const before = reads;
    for (let i = 0; i < 20; i++) expect((await api.authenticate(`Bearer ${created.key}`)).id).toBe(created.id);
    expect(reads).toBe(before);
    expect(cached.stats().hits).toBeGreaterThanOrEqual(20);
  });

  it('still rejects a wrong secret for a cached key id', async () => {
    const created = await cli.create({ owner: 'cache@example.com', name: 'secret check' });
    await api.authenticate(`Bearer ${created.key}`);
    const tampered = created.key.slice(0, -4) + (created.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(api.authenticate(`Bearer ${tampered}`)).rejects.toBeInstanceOf(AuthenticationRequiredError);
  });

  it('rejects a key revoked by another process on the very next request', async () => {
    const created = await cli.create({ owner: 'cache@example.com', name: 'revoked elsewhere' });
    await until(() => cached.stats().listening, QUICK);
    await api.authenticate(`Bearer ${created.key}`);
    await api.authenticate(`Bearer ${created.key}`);
    const hits = cached.stats().hits;
    expect(hits).toBeGreaterThan(0);

    await cli.revoke(created.id);
    // The revocation message travels on another connection; it lands within milliseconds.
    const started = Date.now();
    let rejected = false;
    while (!rejected && Date.now() - started < 500) {
      // Requests arrive as I/O, between which the listener's message is read.
      await new Promise((resolve) => setTimeout(resolve, 2));
      rejected = await api.authenticate(`Bearer ${created.key}`).then(
        () => false,
        (error) => error instanceof AuthenticationRequiredError,
      );
    }
    expect(rejected).toBe(true);
    // And it stays rejected: revoked keys are never cached.
    const readsBefore = reads;
    await expect(api.authenticate(`Bearer ${created.key}`)).rejects.toBeInstanceOf(AuthenticationRequiredError);
    expect(reads).toBe(readsBefore + 1);
  });

  it('does not cache unknown key ids', async () => {
    // Well-formed, but created in another key store: unknown here.
    const elsewhere = await createKeyService({
      store: createKeyStore({ redis: connect(), prefix: `${prefix}-other` }),
    }).create({
      owner: 'other@example.com',
      name: 'unknown here',
    });
    const before = reads;
    await expect(api.authenticate(`Bearer ${elsewhere.key}`)).rejects.toBeInstanceOf(AuthenticationRequiredError);
    await expect(api.authenticate(`Bearer ${elsewhere.key}`)).rejects.toBeInstanceOf(AuthenticationRequiredError);
    expect(reads - before).toBe(2);
  });
});

describe('API key cache when its listener drops', () => {
  it('forgets every cached key, so a revocation sent meanwhile still takes effect', async () => {
    const name = `key-cache-listener-${randomUUID()}`;
    const redis = connect();
    const local = createCachedKeyStore({
      store,
      subscriber: () => {
        const connection = new Redis(REDIS_URL, {
          maxRetriesPerRequest: 1,
          connectionName: name,
          retryStrategy: () => 50,
        });
        connections.push(connection);
        return connection;
      },
      channel: revocationChannel(prefix),
      ttlMs: 60_000,
    });
    const node = createKeyService({ store: local });
    try {
      const created = await cli.create({ owner: 'cache@example.com', name: 'listener drop' });
      await node.authenticate(`Bearer ${created.key}`);
      await until(() => local.stats().listening, QUICK);
      await node.authenticate(`Bearer ${created.key}`);
      await node.authenticate(`Bearer ${created.key}`);
      expect(local.stats().hits).toBe(1);

      // Cut the listener's connection, and revoke while it is down: that message is lost.
      const clients = (await redis.client('LIST')) as string;
      const id = clients
        .split('\n')
        .find((line) => line.includes(`name=${name}`))
        ?.match(/\bid=(\d+)/)?.[1];
      expect(id).toBeDefined();
      await redis.client('KILL', 'ID', id!);
      await until(() => !local.stats().listening, QUICK);
      await cli.revoke(created.id);

      await expect(node.authenticate(`Bearer ${created.key}`)).rejects.toBeInstanceOf(AuthenticationRequiredError);
      // Back up again, it still never serves the revoked key from memory.
      await until(() => local.stats().listening, QUICK);
      await expect(node.authenticate(`Bearer ${created.key}`)).rejects.toBeInstanceOf(AuthenticationRequiredError);
    } finally {
      local.close();
    }
  });
});
