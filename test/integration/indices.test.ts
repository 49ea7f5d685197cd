import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { createElasticsearchEngine } from '../../src/engine/elasticsearch/engine.ts';
import { templatesDir } from '../../src/internal/paths.ts';
import { NO_ACCOUNT_METRICS } from '../../src/domain/derived.ts';
import { applyAccount, applyPost } from '../../src/domain/merge.ts';
import { emptyAccount, emptyPost } from '../../src/domain/records.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { acquireRebuildLock } from '../../src/services/indices/rebuild-lock.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('indices');
});
afterAll(async () => stack?.close());

const aliasTargets = async (alias: string) => Object.keys(await stack.runtime.es.indices.getAlias({ name: alias }));

describe('indices apply', () => {
  it('is idempotent: a second apply changes nothing', async () => {
    const lines = await stack.runtime.indexAdmin.apply();
    expect(lines.every((l) => l.action === 'unchanged')).toBe(true);
    expect(lines.some((l) => l.detail)).toBe(false);
  });

  it('reports a template that differs from the installed one and reinstalls it', async () => {
    const name = `${stack.config.INDEX_PREFIX}-posts`;
    const {
      created_date: _c,
      created_date_millis: _cm,
      modified_date: _m,
      modified_date_millis: _mm,
      ...installed
    } = (await stack.runtime.es.indices.getIndexTemplate({ name })).index_templates[0]!.index_template as any;
    await stack.runtime.es.indices.putIndexTemplate({
      name,
      ...installed,
      _meta: { ...installed._meta, content_hash: 'hand-edited' },
    });
    const lines = await stack.runtime.indexAdmin.apply();
    const line = lines.find((l) => l.object === `index template ${name}`)!;
    expect(line.action).toBe('updated');
    expect(line.detail).toMatch(/was hand-edited/);
    expect(line.detail).toMatch(/indices rebuild posts/);
    expect((await stack.runtime.indexAdmin.apply()).every((l) => l.action === 'unchanged')).toBe(true);
  });
});

describe('indices rebuild', () => {
  it('copies every record into a new index and swaps the aliases while reads keep answering', async () => {
    const posts = Array.from({ length: 60 }, (_, i) => postObs('idx-a', { platform_id: `idx-p${i}` }));
    await stack.ingest([accountObs({ platform_id: 'idx-a', handle: 'idx.author' }), ...posts]);
    const readAlias = `${stack.config.INDEX_PREFIX}-posts`;
    const before = await aliasTargets(readAlias);
    const probe = mintId('post', 'idx-p7');
    const expected = (await stack.get(`/v1/social/posts/${probe}`)).body;

    let rebuilding = true;
    const statuses: number[] = [];
    const reader = (async () => {
      while (rebuilding) statuses.push((await stack.get(`/v1/social/posts/${probe}`)).statusCode);
    })();
    const result = await stack.runtime.indexAdmin.rebuild('posts');
    rebuilding = false;
    await reader;

    expect(result.copied).toBe(60);
    expect(result.from).toEqual(before);
    expect(await aliasTargets(readAlias)).toEqual([result.to]);
    expect(await aliasTargets(`${stack.config.INDEX_PREFIX}-posts-write`)).toEqual([result.to]);
    expect(await stack.runtime.es.indices.exists({ index: before[0]! })).toBe(false);
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    const after = (await stack.get(`/v1/social/posts/${probe}`)).body;
    expect({ ...after, media: [] }).toEqual({ ...expected, media: [] });
    // Writes after the swap go to the new index and are merged with the copied records.
    await stack.ingest([postObs('idx-a', { platform_id: 'idx-p7', likes: 5, observed_at: '2026-07-01T00:00:00Z' })]);
    expect((await stack.get(`/v1/social/posts/${probe}`)).body.likes).toBe(5);
    const status = await stack.runtime.indexAdmin.status();
    expect(status.find((s) => s.name === 'posts')).toMatchObject({ docs: 60, up_to_date: true, indices: [result.to] });
  });
});

describe('interrupted rebuilds', () => {
  const concrete = async () =>
    Object.keys(
      await stack.runtime.es.indices.get({ index: `${stack.config.INDEX_PREFIX}-accounts-v*`, allow_no_indices: true }),
    ).sort();
  const readAlias = () => `${stack.config.INDEX_PREFIX}-accounts`;

  it('a copy that fails or is cancelled leaves no index behind and the aliases as they were', async () => {
    await stack.ingest([accountObs({ platform_id: 'int-a', handle: 'int.author' })]);
    const indices = await concrete();
    const live = await aliasTargets(readAlias());

    await expect(
      stack.runtime.indexAdmin.rebuild('accounts', { transform: () => Promise.reject(new Error('embedding failed')) }),
    ).rejects.toThrow('embedding failed');
    expect(await concrete()).toEqual(indices);

    // Cancelled once the copy is done but before the swap: still nothing left, nothing swapped.
    const abort = new AbortController();
    await expect(
      stack.runtime.indexAdmin.rebuild('accounts', { signal: abort.signal, onProgress: () => abort.abort() }),
    ).rejects.toThrow();
    expect(await concrete()).toEqual(indices);
    expect(await aliasTargets(readAlias())).toEqual(live);
  });

  it('the next rebuild removes what a killed one left, but keeps an index kept on purpose', async () => {
    const kept = await stack.runtime.indexAdmin.rebuild('accounts', { keepOld: true });
    // What `kill -9` during a copy leaves: a newer concrete index that no alias points to.
    const orphan = `${stack.config.INDEX_PREFIX}-accounts-v999-orphan`;
    await stack.runtime.es.indices.create({ index: orphan });

    const outcome = await stack.runtime.rebuilds.rebuild('accounts');
    expect(outcome).toMatchObject({ status: 'rebuilt', removedOrphans: [orphan], from: [kept.to] });
    expect(await stack.runtime.es.indices.exists({ index: orphan })).toBe(false);
    expect(await stack.runtime.es.indices.exists({ index: kept.from[0]! })).toBe(true);
    await stack.runtime.es.indices.delete({ index: kept.from[0]! });
  });

  it('one rebuild per index at a time', async () => {
    const held = await acquireRebuildLock(
      stack.runtime.redis,
      stack.config.REDIS_PREFIX,
      'accounts',
      'another operator',
    );
    if (!('lock' in held)) throw new Error('lock expected');
    try {
      expect(await stack.runtime.rebuilds.rebuild('accounts')).toEqual({ status: 'busy', heldBy: 'another operator' });
    } finally {
      await held.lock.release();
    }
    expect((await stack.runtime.rebuilds.rebuild('accounts')).status).toBe('rebuilt');
  });

  it('a worker resumes intake left paused by a killed rebuild, not one paused by a running rebuild', async () => {
    await stack.runtime.queue.pause();
    const held = await acquireRebuildLock(stack.runtime.redis, stack.config.REDIS_PREFIX, 'posts');
    if (!('lock' in held)) throw new Error('lock expected');
    expect(await stack.runtime.rebuilds.resumeAbandonedPause()).toEqual([]);
    expect(await stack.runtime.queue.isPaused()).toBe(true);
    await held.lock.release();
    expect(await stack.runtime.rebuilds.resumeAbandonedPause()).toEqual([stack.runtime.queue.name]);
    expect(await stack.runtime.queue.isPaused()).toBe(false);
  });
});

describe('before indices apply', () => {
  it('intake fails as "not installed" and leaves no index named like an alias behind', async () => {
    const prefix = `${stack.config.INDEX_PREFIX}-bare`;
    const engine = createElasticsearchEngine({
      client: stack.runtime.es,
      indexPrefix: prefix,
      templatesDir: templatesDir(),
      visibility: { current: async () => null, advance: async () => undefined },
    });
    const process = createObservationProcessor({
      store: engine.intake,
      locks: createRedisKeyedLocks({ redis: stack.runtime.redis, prefix }),
    });
    // The observations as the intake hands them to the worker: validated.
    const valid = (value: unknown): Observation => {
      const parsed = parseObservation(value);
      if (!parsed.ok) throw new Error(parsed.detail);
      return parsed.value;
    };
    const created = async () =>
      Object.keys(await stack.runtime.es.indices.get({ index: `${prefix}-*`, allow_no_indices: true }));
    try {
      // An account alone: its real-time read of a missing alias finds nothing, so it would be created.
      await expect(
        process([valid(accountObs({ platform_id: 'bare-a', handle: 'bare.author' }))], { refresh: false }),
      ).rejects.toMatchObject({ status: 503, detail: expect.stringMatching(/indices apply/) });
      await expect(
        process([valid(postObs('bare-a', { platform_id: 'bare-p' }))], { refresh: false }),
      ).rejects.toMatchObject({ status: 503 });
      expect(await created()).toEqual([]);
    } finally {
      for (const index of await created()) await stack.runtime.es.indices.delete({ index });
    }
  });
});

describe('indices apply on indices built from an older template', () => {
  /** A copy of the current templates with `file`'s changed by `older` (removed with the copy). */
  function olderTemplates(file: string, older: (template: Record<string, any>) => void): string {
    const dir = mkdtempSync(join(tmpdir(), 'templates-'));
    for (const name of readdirSync(templatesDir())) copyFileSync(join(templatesDir(), name), join(dir, name));
    const template = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    older(template);
    writeFileSync(join(dir, file), JSON.stringify(template));
    return dir;
  }
  /** An engine over `prefix`'s indices that installs the templates of `dir`. */
  const engineAt = (prefix: string, dir: string) =>
    createElasticsearchEngine({
      client: stack.runtime.es,
      indexPrefix: prefix,
      templatesDir: dir,
      visibility: { current: async () => null, advance: async () => undefined },
    });

  it("adds the current template's new fields live, so that new writes work before the rebuild that fills them", async () => {
    const prefix = `${stack.config.INDEX_PREFIX}-older`;
    // The accounts template as it was before the account metrics: version 2, without their fields.
    const older = olderTemplates('accounts.index.json', (accounts) => {
      accounts.version = 2;
      for (const field of Object.keys(accounts.template.mappings.properties))
        if (/growth|_90d$/.test(field)) delete accounts.template.mappings.properties[field];
    });
    const current = engineAt(prefix, templatesDir());
    try {
      await engineAt(prefix, older).admin.apply();
      const observed = parseObservation(accountObs({ platform_id: 'older-a', handle: 'older.a' }));
      if (!observed.ok || observed.value.kind !== 'account') throw new Error('fixture rejected');
      const record = {
        ...applyAccount(emptyAccount(mintId('account', 'older-a'), 'older-a'), observed.value),
        metrics: {
          t: '2026-06-01T00:00:00.000Z',
          v: { ...NO_ACCOUNT_METRICS, followers_growth_7d: 0.1 },
        },
      };
      const write = () => current.intake.accounts.merge([record.id], () => record);
      // The older mapping is strict: the new field is refused.
      await expect(write()).rejects.toThrow(/strict_dynamic_mapping_exception|not allowed/);
      const lines = await current.admin.apply();
      const added = lines.filter((l) => l.object.startsWith('mappings of'));
      expect(added).toHaveLength(1);
      expect(added[0]).toMatchObject({ action: 'updated', detail: expect.stringMatching(/indices rebuild accounts/) });
      expect((await write()).size).toBe(1);
      const status = (await current.admin.status()).find((s) => s.name === 'accounts')!;
      expect(status).toMatchObject({ up_to_date: false, template_version: 2 });
      // Nothing more to add: a second apply leaves the mappings alone.
      expect((await current.admin.apply()).filter((l) => l.object.startsWith('mappings of'))).toEqual([]);
    } finally {
      await current.admin.destroy();
      rmSync(older, { recursive: true, force: true });
    }
  });

  it('adds the passages of posts template v6 live to a posts index built from v5', async () => {
    const prefix = `${stack.config.INDEX_PREFIX}-older-posts`;
    const older = olderTemplates('posts.index.json', (posts) => {
      posts.version = 5;
      delete posts.template.mappings.properties.passages;
    });
    const current = engineAt(prefix, templatesDir());
    try {
      await engineAt(prefix, older).admin.apply();
      const observed = parseObservation(postObs('older-author', { platform_id: 'older-p' }));
      if (!observed.ok || observed.value.kind !== 'post') throw new Error('fixture rejected');
      const unit = (i: number) => encodeVector(Array.from({ length: 384 }, (_, j) => (j === i ? 1 : 0)));
      const record = {
        ...applyPost(emptyPost(mintId('post', 'older-p'), 'older-p'), observed.value),
        embedding: { model: 'test', text_hash: 'test', vector: unit(0), passages: [unit(1), unit(2)] },
      };
      const write = () => current.intake.posts.merge([record.id], () => record);
      await expect(write()).rejects.toThrow(/strict_dynamic_mapping_exception|not allowed/);
      const added = (await current.admin.apply()).filter((l) => l.object.startsWith('mappings of'));
      expect(added).toEqual([expect.objectContaining({ action: 'updated' })]);
      expect((await write()).size).toBe(1);
      await stack.runtime.es.indices.refresh({ index: `${prefix}-posts` });
      // The passages are searchable at once: a vector equal to the second passage finds the post.
      const found = await stack.runtime.es.search({
        index: `${prefix}-posts`,
        query: {
          nested: {
            path: 'passages',
            query: {
              knn: {
                field: 'passages.vector',
                query_vector: Array.from({ length: 384 }, (_, j) => (j === 2 ? 1 : 0)),
                k: 1,
                num_candidates: 10,
              },
            },
          },
        },
      });
      expect(found.hits.hits.map((h) => h._id)).toEqual([record.id]);
    } finally {
      await current.admin.destroy();
      rmSync(older, { recursive: true, force: true });
    }
  });
});
