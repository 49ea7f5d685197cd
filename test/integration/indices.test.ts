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
import { emptyAccount, emptyPost, type PostRecord, type StoredEmbedding } from '../../src/domain/records.ts';
import { projectPost } from '../../src/engine/elasticsearch/documents/projection.ts';
import { engineVector } from '../../src/engine/elasticsearch/vectors.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { acquireRebuildLock } from '../../src/services/indices/rebuild-lock.ts';
import type { RebuildTransform } from '../../src/engine/index-admin.ts';
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

describe('indices rebuild of posts and their vectors', () => {
  const prefix = () => stack.config.INDEX_PREFIX;
  const unit = (i: number) => encodeVector(Array.from({ length: 384 }, (_, j) => (j === i ? 1 : 0)));
  /** Which posts get a vector during the rebuild: every third of this test's. */
  const embedded = (id: string) => Number(id.match(/vec-p(\d+)$/)?.[1] ?? 1) % 3 === 0;
  /** Gives every third post of the page a vector, as the embedding during a rebuild does. */
  const embedSome: RebuildTransform = async (records) =>
    records.map((record) =>
      embedded(record.platform_id)
        ? { ...record, embedding: { model: 'test-model', text_hash: 'h', vector: unit(0), passages: [unit(1)] } }
        : record,
    );
  const vectorIds = async (index: string) =>
    (await stack.runtime.es.search({ index, size: 100, query: { match_all: {} } })).hits.hits.map((h) => h._id).sort();

  it('builds a new post-vectors index from the records, swapped with the posts one; the posts keep no vector', async () => {
    const posts = Array.from({ length: 12 }, (_, i) => postObs('vec-a', { platform_id: `vec-p${i}` }));
    await stack.ingest([accountObs({ platform_id: 'vec-a', handle: 'vec.author' }), ...posts]);
    const vectors = `${prefix()}-post-vectors`;
    const before = await aliasTargets(vectors);
    expect(before).toHaveLength(1);

    // Cancelled after the copy, before the swap: neither new index stays, no alias moves.
    const concrete = async () =>
      Object.keys(
        await stack.runtime.es.indices.get({
          index: `${prefix()}-posts-v*,${prefix()}-post-vectors-v*`,
          allow_no_indices: true,
        }),
      ).sort();
    const indices = await concrete();
    const abort = new AbortController();
    await expect(
      stack.runtime.indexAdmin.rebuild('posts', {
        transform: embedSome,
        signal: abort.signal,
        onProgress: () => abort.abort(),
      }),
    ).rejects.toThrow();
    expect(await concrete()).toEqual(indices);
    expect(await aliasTargets(vectors)).toEqual(before);

    const result = await stack.runtime.indexAdmin.rebuild('posts', { transform: embedSome });
    const [vectorIndex] = await aliasTargets(vectors);
    expect(vectorIndex).toMatch(new RegExp(`^${prefix()}-post-vectors-v\\d+-`));
    expect(vectorIndex).not.toEqual(before[0]);
    expect(await aliasTargets(`${vectors}-write`)).toEqual([vectorIndex]);
    expect(await stack.runtime.es.indices.exists({ index: before[0]! })).toBe(false);
    // The vector documents of the posts with a vector, under the posts' ids, and nothing else.
    const allPosts = await stack.runtime.es.search({ index: result.to, size: 1000, _source: ['record.platform_id'] });
    const withVector = allPosts.hits.hits
      .filter((h) => embedded((h._source as { record: { platform_id: string } }).record.platform_id))
      .map((h) => h._id)
      .sort();
    expect(withVector.length).toBeGreaterThanOrEqual(4);
    expect(await vectorIds(vectors)).toEqual(withVector);
    // Searchable by vector: a query equal to the head vector finds them.
    const near = await stack.runtime.es.search({
      index: vectors,
      knn: {
        field: 'embedding',
        query_vector: Array.from({ length: 384 }, (_, j) => (j === 0 ? 1 : 0)),
        k: 50,
        num_candidates: 100,
      },
      size: 50,
    });
    expect(near.hits.hits.map((h) => h._id).sort()).toEqual(withVector);
    // The posts index holds no vector: not in its mapping, not in any document.
    const mapping = (await stack.runtime.es.indices.getMapping({ index: result.to }))[result.to]!.mappings;
    expect(Object.keys(mapping.properties ?? {})).not.toContain('embedding');
    expect(Object.keys(mapping.properties ?? {})).not.toContain('passages');
    const count = (query: object) => stack.runtime.es.count({ index: result.to, query }).then((c) => c.count);
    expect(await count({ exists: { field: 'embedding' } })).toBe(0);
    expect(await count({ exists: { field: 'embedding_model' } })).toBe(withVector.length);
    const status = (await stack.runtime.indexAdmin.status()).find((s) => s.name === 'posts')!;
    expect(status).toMatchObject({ up_to_date: true, indices: [result.to] });
    expect(status.companions).toEqual([
      expect.objectContaining({
        name: 'post-vectors',
        indices: [vectorIndex],
        docs: withVector.length,
        up_to_date: true,
      }),
    ]);
  });
  it('removing the orphans of posts removes those of their vectors too', async () => {
    const orphan = `${prefix()}-post-vectors-v999-orphan`;
    await stack.runtime.es.indices.create({ index: orphan });
    expect(await stack.runtime.indexAdmin.removeOrphans('posts')).toEqual([orphan]);
    expect(await stack.runtime.es.indices.exists({ index: orphan })).toBe(false);
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
  /** The version of a template file as this release installs it. */
  const currentVersion = (file: string) =>
    (JSON.parse(readFileSync(join(templatesDir(), file), 'utf8')) as { version: number }).version;
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

  it('names posts of template 8 as built before the Latin words in Japanese were stemmed, and a rebuild stems them', async () => {
    const prefix = `${stack.config.INDEX_PREFIX}-v8`;
    const es = stack.runtime.es;
    // Template 8's mappings are the current ones; what changed is what the service writes into them.
    const older = olderTemplates('posts.index.json', (posts) => {
      posts.version = 8;
    });
    const current = engineAt(prefix, templatesDir());
    try {
      await engineAt(prefix, older).admin.apply();
      const observed = parseObservation(
        postObs('v8-author', { platform_id: 'v8-p1', caption: '今日はsoy waxを使った' }),
      );
      if (!observed.ok || observed.value.kind !== 'post') throw new Error('fixture rejected');
      const post = applyPost(emptyPost(mintId('post', 'v8-p1'), 'v8-p1'), observed.value);
      // As template 8's service wrote it: the Latin word inside the Japanese run escaped on the stemmed side.
      const doc = projectPost(post);
      const escaped = { ...doc, caption_stemmed: String(doc.caption_stemmed).replace(/\bwax\b/, 'u77u61u78') };
      await es.index({ index: `${prefix}-posts-write`, id: post.id, document: escaped, refresh: true });
      const stemmedHits = async () =>
        (await es.search({ index: `${prefix}-posts`, query: { match: { caption_stemmed: 'wax' } } })).hits.hits.map(
          (h) => h._id,
        );
      expect(await stemmedHits()).toEqual([]);

      const lines = await current.admin.apply();
      expect(lines.find((l) => l.object.startsWith(`alias ${prefix}-posts `))?.detail).toBe(
        'built from an older template; run `social-search indices rebuild posts`',
      );
      expect((await current.admin.status()).find((s) => s.name === 'posts')).toMatchObject({
        template_version: 8,
        up_to_date: false,
      });

      await current.admin.rebuild('posts');
      expect(await stemmedHits()).toEqual([post.id]);
      expect((await current.admin.status()).find((s) => s.name === 'posts')).toMatchObject({
        template_version: currentVersion('posts.index.json'),
        up_to_date: true,
        docs: 1,
      });
    } finally {
      await current.admin.destroy();
      rmSync(older, { recursive: true, force: true });
    }
  });

  it('on a posts index of template v7 (vectors inside), apply adds post-vectors and a rebuild of posts fills it', async () => {
    const prefix = `${stack.config.INDEX_PREFIX}-v7`;
    const es = stack.runtime.es;
    const dense = { type: 'dense_vector', dims: 384, index: true, similarity: 'cosine' };
    // The posts template before the vector split: version 7, the vectors in the posts index.
    const older = olderTemplates('posts.index.json', (posts) => {
      posts.version = 7;
      delete posts.template.mappings.properties.embedding_model;
      posts.template.mappings.properties.embedding = dense;
      posts.template.mappings.properties.passages = { type: 'nested', properties: { vector: dense } };
    });
    const current = engineAt(prefix, templatesDir());
    try {
      await engineAt(prefix, older).admin.apply();
      // A v7 install had no post-vectors index nor template.
      const companions = Object.keys(await es.indices.get({ index: `${prefix}-post-vectors-v*` }));
      await es.indices.delete({ index: companions });
      await es.indices.deleteIndexTemplate({ name: `${prefix}-post-vectors` });
      const unit = (i: number) => encodeVector(Array.from({ length: 384 }, (_, j) => (j === i ? 1 : 0)));
      const record = (platformId: string, embedding?: StoredEmbedding) => {
        const observed = parseObservation(postObs('v7-author', { platform_id: platformId }));
        if (!observed.ok || observed.value.kind !== 'post') throw new Error('fixture rejected');
        const post = applyPost(emptyPost(mintId('post', platformId), platformId), observed.value);
        return embedding ? { ...post, embedding } : post;
      };
      const withVector = record('v7-p1', { model: 'test', text_hash: 'h', vector: unit(0), passages: [unit(1)] });
      // Documents as v7 wrote them: the vectors in the post's document, no `embedding_model`.
      for (const r of [withVector, record('v7-p2')]) {
        const { embedding_model: _model, ...doc } = projectPost(r);
        if (r.embedding)
          Object.assign(doc, {
            embedding: engineVector(r.embedding.vector!),
            passages: (r.embedding.passages ?? []).map((p) => ({ vector: engineVector(p) })),
          });
        await es.index({ index: `${prefix}-posts-write`, id: r.id, document: doc, refresh: true });
      }

      const lines = await current.admin.apply();
      expect(lines.find((l) => l.object === `index template ${prefix}-posts`)).toMatchObject({
        action: 'updated',
        detail: expect.stringMatching(/indices rebuild posts/),
      });
      expect(lines).toContainEqual({ object: `index template ${prefix}-post-vectors`, action: 'created' });
      expect(lines.filter((l) => l.object.startsWith('mappings of'))).toEqual([
        expect.objectContaining({ object: expect.stringContaining(`${prefix}-posts-v7-`), action: 'updated' }),
      ]);
      expect(lines.find((l) => l.object.startsWith(`alias ${prefix}-posts `))?.detail).toBe(
        'built from an older template; run `social-search indices rebuild posts`',
      );
      expect(lines).toContainEqual({
        object: expect.stringMatching(
          new RegExp(
            `^index ${prefix}-post-vectors-v1-\\d+ behind ${prefix}-post-vectors, ${prefix}-post-vectors-write$`,
          ),
        ),
        action: 'created',
      });
      const stale = (await current.admin.status()).find((s) => s.name === 'posts')!;
      expect(stale).toMatchObject({ template_version: 7, up_to_date: false, docs: 2 });
      expect(stale.companions).toEqual([
        expect.objectContaining({ name: 'post-vectors', template_version: 1, up_to_date: true, docs: 0 }),
      ]);

      const rebuilt = await current.admin.rebuild('posts');
      expect(rebuilt.copied).toBe(2);
      const ids = (await es.search({ index: `${prefix}-post-vectors`, query: { match_all: {} } })).hits.hits;
      expect(ids.map((h) => h._id)).toEqual([withVector.id]);
      // The rebuilt post's record keeps which model embedded which text; its vectors are in its vector document.
      const rebuiltRecord = (await es.get<{ record: PostRecord }>({ index: `${prefix}-posts`, id: withVector.id }))
        ._source!.record;
      expect(rebuiltRecord.embedding).toEqual({ model: 'test', text_hash: 'h' });
      const vectorDocument = await es.search({
        index: `${prefix}-post-vectors`,
        query: { ids: { values: [withVector.id] } },
        docvalue_fields: ['embedding'],
        _source: false,
      });
      expect((vectorDocument.hits.hits[0]!.fields!['embedding'] as number[][])[0]).toEqual(
        Array.from({ length: 384 }, (_, j) => (j === 0 ? 1 : 0)),
      );
      const mapping = (await es.indices.getMapping({ index: rebuilt.to }))[rebuilt.to]!.mappings.properties ?? {};
      expect(Object.keys(mapping)).not.toContain('embedding');
      const status = (await current.admin.status()).find((s) => s.name === 'posts')!;
      expect(status).toMatchObject({ template_version: currentVersion('posts.index.json'), up_to_date: true, docs: 2 });
      expect(status.companions).toEqual([expect.objectContaining({ up_to_date: true, docs: 1 })]);
    } finally {
      await current.admin.destroy();
      rmSync(older, { recursive: true, force: true });
    }
    // Nothing of the prefix is left: the post-vectors index and template went with the others.
    expect(Object.keys(await es.indices.get({ index: `${prefix}-*`, allow_no_indices: true }))).toEqual([]);
    expect(await es.indices.existsIndexTemplate({ name: `${prefix}-post-vectors` })).toBe(false);
  });
});
