import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationRequiredError,
  InsufficientScopeError,
  ServiceUnavailableError,
  ValidationFailedError,
} from '../../src/internal/errors.ts';
import { createKeyService, type KeyService } from '../../src/services/keys/key-service.ts';
import { createKeyStore } from '../../src/services/keys/key-store.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-keys-${randomUUID()}`;

let redis: Redis;
let keys: KeyService;

function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
}

async function ready(client: Redis): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
}

async function scanPrefix(client: Redis): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

/** Every string stored under the test prefix: key names, hash fields and values, set members. */
async function dumpPrefix(client: Redis): Promise<string> {
  const parts: string[] = [];
  for (const name of await scanPrefix(client)) {
    parts.push(name);
    const type = await client.type(name);
    if (type === 'hash') parts.push(...Object.entries(await client.hgetall(name)).flat());
    else if (type === 'zset') parts.push(...(await client.zrange(name, 0, -1)));
    else if (type === 'set') parts.push(...(await client.smembers(name)));
    else if (type === 'string') parts.push((await client.get(name)) ?? '');
  }
  return parts.join('\n');
}

/** Runs `fn`, expecting an {@link AuthenticationRequiredError}, and returns its detail. */
async function authFailure(fn: () => Promise<unknown>): Promise<string> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AuthenticationRequiredError);
  return (error as AuthenticationRequiredError).detail;
}

beforeAll(async () => {
  redis = connect();
  await ready(redis);
  keys = createKeyService({ store: createKeyStore({ redis, prefix }) });
});

afterAll(async () => {
  const names = await scanPrefix(redis);
  if (names.length > 0) await redis.del(...names);
  redis.disconnect();
});

describe('create and authenticate', () => {
  it('creates a key of the documented format and authenticates it with its scopes', async () => {
    const created = await keys.create({
      owner: 'Alice@Example.com',
      name: 'nightly export',
      scopes: ['ingest', 'search'],
    });
    expect(created.key).toMatch(/^ssk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(created.key.slice(21), 'base64url').length * 8).toBeGreaterThanOrEqual(256);
    expect(created.id).toBe(`key_${created.key.slice(4, 20)}`);
    expect(created.owner).toBe('alice@example.com');
    expect(created.scopes).toEqual(['search', 'ingest']);
    expect(Number.isNaN(Date.parse(created.created_at))).toBe(false);

    const identity = await keys.authenticate(`Bearer ${created.key}`);
    expect(identity).toEqual({
      id: created.id,
      owner: 'alice@example.com',
      name: 'nightly export',
      scopes: ['search', 'ingest'],
      limits: { search: null, read: null },
    });
  });

  it('accepts the Bearer scheme in any case', async () => {
    const { key, id } = await keys.create({ owner: 'case@example.com', name: 'case' });
    expect((await keys.authenticate(`bearer ${key}`)).id).toBe(id);
    expect((await keys.authenticate(`BEARER ${key}`)).id).toBe(id);
  });

  it('defaults scopes to search', async () => {
    const created = await keys.create({ owner: 'bob@example.com', name: 'default scopes' });
    expect(created.scopes).toEqual(['search']);
  });

  it.each([
    ['a non-email owner', { owner: 'not-an-email', name: 'x' }, /owner/],
    ['an empty name', { owner: 'a@example.com', name: '  ' }, /name/],
    ['a 101-character name', { owner: 'a@example.com', name: 'n'.repeat(101) }, /name/],
    ['an unknown scope', { owner: 'a@example.com', name: 'x', scopes: ['admin'] }, /scopes/],
    ['empty scopes', { owner: 'a@example.com', name: 'x', scopes: [] }, /scopes/],
  ])('rejects %s', async (_label, input, pattern) => {
    const error = await keys.create(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationFailedError);
    expect((error as ValidationFailedError).detail).toMatch(pattern);
  });

  it('stores no secret: the clear key and its secret part appear nowhere in Redis', async () => {
    const { key } = await keys.create({ owner: 'carol@example.com', name: 'leak check' });
    const secret = key.slice(21);
    const dump = await dumpPrefix(redis);
    expect(dump.length).toBeGreaterThan(0);
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice(0, 16));
  });
});

describe('list', () => {
  it('never includes secrets or hashes, sorts by creation and filters by owner', async () => {
    const clock = { t: Date.parse('2030-01-01T00:00:00Z') };
    const service = createKeyService({
      store: createKeyStore({ redis, prefix }),
      now: () => new Date((clock.t += 1000)),
    });
    const owner = `list-${randomUUID()}@example.com`;
    const first = await service.create({ owner, name: 'first' });
    const second = await service.create({ owner, name: 'second', scopes: ['ingest'] });
    await service.create({ owner: 'someone-else@example.com', name: 'other' });

    const mine = await service.list({ owner });
    expect(mine.map((k) => k.id)).toEqual([first.id, second.id]);
    expect(mine[1]).toEqual({
      id: second.id,
      owner,
      name: 'second',
      scopes: ['ingest'],
      created_at: second.created_at,
      revoked_at: null,
      status: 'active',
      limits: { search: null, read: null },
    });

    const all = await service.list();
    expect(all.map((k) => k.id)).toEqual(expect.arrayContaining([first.id, second.id]));
    expect(all.some((k) => k.owner === 'someone-else@example.com')).toBe(true);
    const serialized = JSON.stringify(all);
    for (const created of [first, second]) {
      expect(serialized).not.toContain(created.key);
      expect(serialized).not.toContain(created.key.slice(21));
    }
    expect(serialized).not.toMatch(/secret|hash|"key"/);
  });

  it('matches the owner filter case-insensitively', async () => {
    const owner = `mixed-${randomUUID()}@example.com`;
    const created = await keys.create({ owner, name: 'mixed case' });
    const listed = await keys.list({ owner: owner.toUpperCase() });
    expect(listed.map((k) => k.id)).toEqual([created.id]);
  });
});

describe('revoke', () => {
  it('stops the key at once, across clients, and is idempotent', async () => {
    const created = await keys.create({ owner: 'dave@example.com', name: 'to revoke' });
    const otherClient = connect();
    await ready(otherClient);
    try {
      const otherProcess = createKeyService({ store: createKeyStore({ redis: otherClient, prefix }) });
      await otherProcess.authenticate(`Bearer ${created.key}`);

      expect(await keys.revoke(created.id)).toBe(true);
      const detail = await authFailure(() => otherProcess.authenticate(`Bearer ${created.key}`));
      expect(detail).toMatch(/not active \(unknown or revoked\)/);

      const [listed] = (await keys.list({ owner: 'dave@example.com' })).filter((k) => k.id === created.id);
      expect(listed?.status).toBe('revoked');
      const revokedAt = listed?.revoked_at;
      expect(revokedAt).toBeTruthy();

      expect(await keys.revoke(created.id)).toBe(true);
      const [again] = (await keys.list({ owner: 'dave@example.com' })).filter((k) => k.id === created.id);
      expect(again?.revoked_at).toBe(revokedAt);
    } finally {
      otherClient.disconnect();
    }
  });

  it('returns false for unknown or ill-formed ids without creating anything', async () => {
    const before = (await scanPrefix(redis)).length;
    expect(await keys.revoke('key_aaaaaaaaaaaaaaaa')).toBe(false);
    expect(await keys.revoke('not-a-key-id')).toBe(false);
    expect((await scanPrefix(redis)).length).toBe(before);
  });
});

describe('401 diagnostics', () => {
  let key = '';
  let secret = '';

  beforeAll(async () => {
    ({ key } = await keys.create({ owner: 'erin@example.com', name: 'diagnostics' }));
    secret = key.slice(21);
  });

  const cases: [string, () => string | undefined, RegExp][] = [
    ['a missing header', () => undefined, /Authorization: Bearer <API_KEY>/],
    ['an empty header', () => '', /No API key was sent/],
    ['another scheme', () => 'Token x', /must start with `Bearer `/],
    ['a bare key', () => key, /without the `Bearer ` prefix/],
    ['no space after Bearer', () => `Bearer${key}`, /one space between `Bearer` and the key/],
    ['Bearer with no key', () => 'Bearer', /no key after it/],
    ['a double-quoted key', () => `Bearer "${key}"`, /wrapped in quotes/],
    ['a single-quoted key', () => `Bearer '${key}'`, /wrapped in quotes/],
    ['two spaces before the key', () => `Bearer  ${key}`, /surrounding whitespace/],
    ['a tab before the key', () => `Bearer\t${key}`, /surrounding whitespace/],
    ['a trailing space', () => `Bearer ${key} `, /surrounding whitespace/],
    ['a trailing newline', () => `Bearer ${key}\n`, /surrounding whitespace/],
    ['quotes and whitespace', () => `Bearer  "${key}" `, /quotes and has surrounding whitespace/],
    ['a malformed key', () => 'Bearer ssk_short', /malformed/],
    ['a truncated key', () => `Bearer ${key.slice(0, -1)}`, /malformed/],
    ['a key id instead of a key', () => `Bearer key_${key.slice(4, 20)}`, /malformed/],
    ['an unknown id', () => `Bearer ssk_${'a'.repeat(16)}_${secret}`, /not active \(unknown or revoked\)/],
    [
      'the right id with a wrong secret',
      () => `Bearer ${key.slice(0, 21)}${secret.startsWith('A') ? 'B' : 'A'}${secret.slice(1)}`,
      /not active \(unknown or revoked\)/,
    ],
  ];

  it.each(cases)('diagnoses %s without echoing the key', async (_label, header, pattern) => {
    const detail = await authFailure(() => keys.authenticate(header()));
    expect(detail).toMatch(pattern);
    expect(detail).not.toContain(secret);
    expect(detail).not.toContain(secret.slice(0, 8));
    expect(detail).not.toContain(key.slice(4, 20));
  });

  it('sets the problem name, status and WWW-Authenticate', async () => {
    const error = await keys.authenticate('Token supersecretvalue').catch((e: unknown) => e);
    expect(error).toMatchObject({ problem: 'authentication-required', status: 401 });
    expect((error as AuthenticationRequiredError).headers()).toHaveProperty('www-authenticate');
    expect((error as Error).message).not.toContain('supersecretvalue');
  });
});

describe('requireScope', () => {
  it('passes with the scope and throws a 403 without it', async () => {
    const { key } = await keys.create({ owner: 'frank@example.com', name: 'search only' });
    const identity = await keys.authenticate(`Bearer ${key}`);
    expect(() => keys.requireScope(identity, 'search')).not.toThrow();
    let error: unknown;
    try {
      keys.requireScope(identity, 'ingest');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect(error).toMatchObject({ status: 403, detail: 'this key lacks the `ingest` scope' });
  });
});

describe('Redis unavailable', () => {
  const SAFE_DETAIL = 'the key store is unreachable';

  async function expectUnavailable(fn: () => Promise<unknown>): Promise<void> {
    const started = Date.now();
    const error = await fn().catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).detail).toBe(SAFE_DETAIL);
    expect((error as ServiceUnavailableError).message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|:1\b/);
  }

  it('answers 503 with a safe detail when Redis refuses connections', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    dead.on('error', () => {});
    try {
      const service = createKeyService({ store: createKeyStore({ redis: dead, prefix }) });
      await expectUnavailable(() => service.authenticate(`Bearer ssk_${'a'.repeat(16)}_${'b'.repeat(43)}`));
      await expectUnavailable(() => service.create({ owner: 'g@example.com', name: 'x' }));
      await expectUnavailable(() => service.list());
      await expectUnavailable(() => service.revoke('key_aaaaaaaaaaaaaaaa'));
    } finally {
      dead.disconnect();
    }
  });

  it('answers 503 when Redis accepts connections but never replies', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    // An offline queue makes the client wait forever for a handshake that never completes: only
    // the store's own timeout stands between the request and a hang.
    const hung = new Redis({
      host: '127.0.0.1',
      port,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    hung.on('error', () => {});
    try {
      const store = createKeyStore({ redis: hung, prefix, timeoutMs: 500 });
      const service = createKeyService({ store });
      await expectUnavailable(() => service.authenticate(`Bearer ssk_${'a'.repeat(16)}_${'b'.repeat(43)}`));
      await expectUnavailable(() => service.list());
    } finally {
      hung.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
