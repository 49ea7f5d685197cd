import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseKey } from '../../src/services/keys/key-format.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const exec = promisify(execFile);
let stack: Stack;

/** Runs the real executable with this file's prefixes; resolves with exit code and output. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWith({}, ...args);
}

async function cliWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/social-search.js', ...args], {
      env: {
        ...process.env,
        INDEX_PREFIX: stack.config.INDEX_PREFIX,
        REDIS_PREFIX: stack.config.REDIS_PREFIX,
        LOG_LEVEL: 'warn',
        ...env,
      },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error: any) {
    return { code: error.code ?? 1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' };
  }
}

beforeAll(async () => {
  stack = await startStack('cli');
});
afterAll(async () => stack?.close());

describe('social-search keys', () => {
  it('creates (printing the secret once), lists without secrets, and revokes', async () => {
    const created = await cli(
      'keys',
      'create',
      '--owner',
      'Ops@Example.com',
      '--name',
      'pipeline',
      '--scopes',
      'search,ingest',
      '--json',
    );
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(Object.keys(key).sort()).toEqual(['id', 'key', 'name', 'owner', 'scopes']);
    expect(key).toMatchObject({ owner: 'ops@example.com', name: 'pipeline', scopes: ['search', 'ingest'] });
    expect((await stack.get(`/v1/social/accounts/nobody`, `Bearer ${key.key}`)).statusCode).toBe(404);

    const listed = await cli('keys', 'list', '--owner', 'ops@example.com', '--json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(parseKey(key.key)!.secret);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([key.id]);

    expect((await cli('keys', 'revoke', key.id)).code).toBe(0);
    expect((await stack.get(`/v1/social/accounts/nobody`, `Bearer ${key.key}`)).statusCode).toBe(401);
    expect((await cli('keys', 'revoke', 'key_doesnotexist0000')).code).toBe(1);
  });

  it('needs only Redis: keys commands work while Elasticsearch is unreachable', async () => {
    const down = { ELASTICSEARCH_URL: 'http://127.0.0.1:1' };
    const created = await cliWith(
      down,
      'keys',
      'create',
      '--owner',
      'redis-only@example.com',
      '--name',
      'no engine',
      '--json',
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const listed = await cliWith(down, 'keys', 'list', '--owner', 'redis-only@example.com', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).id).toBe(JSON.parse(created.stdout).id);
  });

  it('rejects bad input with a message and a non-zero exit', async () => {
    const bad = await cli('keys', 'create', '--owner', 'not-an-email', '--name', 'x');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/email/);
    const missing = await cli('keys', 'create', '--name', 'x');
    expect(missing.code).toBe(2);
  });
});

describe('social-search keys limit, holders invite', () => {
  it("sets a key's own search limit that the API applies on its next request, and restores the default", async () => {
    const key = JSON.parse(
      (await cli('keys', 'create', '--owner', 'limits@example.com', '--name', 'limited', '--json')).stdout,
    );
    const search = () =>
      stack.inject({
        method: 'POST',
        url: '/v1/social/posts/search',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        payload: '{"post":{"query":"kite"}}',
      });
    expect((await search()).headers['ratelimit-policy']).toBe('"search";q=100000;w=60');
    const set = await cli('keys', 'limit', key.id, '--search', '7');
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toContain('search 7/min');
    expect((await search()).headers['ratelimit-policy']).toBe('"search";q=7;w=60');
    expect(JSON.parse((await cli('keys', 'list', '--owner', 'limits@example.com', '--json')).stdout).limits).toEqual({
      search: 7,
      read: null,
    });
    expect((await cli('keys', 'limit', key.id, '--search', 'default')).code).toBe(0);
    expect((await search()).headers['ratelimit-policy']).toBe('"search";q=100000;w=60');

    expect((await cli('keys', 'limit', key.id, '--search', 'lots')).code).toBe(2);
    expect((await cli('keys', 'limit', key.id)).code).toBe(2);
    expect((await cli('keys', 'limit', 'key_doesnotexist0000', '--search', '5')).code).toBe(1);
  });

  it('prints a one-time invitation and its sign-up link; an invitation for a holder made by `keys create --owner` lets them claim it', async () => {
    await cli('keys', 'create', '--owner', 'Claim@Example.com', '--name', 'operator made');
    const invited = await cliWith(
      { PUBLIC_BASE_URL: 'https://cli.example.test/' },
      'holders',
      'invite',
      '--email',
      'claim@example.com',
      '--days',
      '3',
      '--json',
    );
    expect(invited.code).toBe(0);
    const invitation = JSON.parse(invited.stdout);
    expect(invitation).toMatchObject({ email: 'claim@example.com', code: expect.stringMatching(/^inv_/) });
    expect(invitation.sign_up_url).toBe(`https://cli.example.test/dashboard/sign-up?invitation=${invitation.code}`);
    const holders = (await import('../../src/start/core.ts')).openHolders(stack.config, stack.runtime.connections);
    await expect(holders.signUp({ email: 'claim@example.com', password: 'long enough password' })).rejects.toThrow(
      /No account could be created/,
    );
    await expect(
      holders.signUp({ email: 'claim@example.com', password: 'long enough password', invitation: invitation.code }),
    ).resolves.toEqual({ email: 'claim@example.com' });
    expect((await cli('holders', 'invite', '--days', '0')).code).not.toBe(0);
  });
});

describe('social-search ingest', () => {
  it('streams a file through the intake, reports bad lines with their numbers, and waits for indexing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ingest-'));
    const file = join(dir, 'obs.ndjson');
    const lines = [
      JSON.stringify(accountObs({ platform_id: 'cli-a', handle: 'cli.author' })),
      '{"kind":"post","platform_id":"broken","status":"available","observed_at":"2026-06-01T00:00:00Z"}',
      '',
      'not json',
      JSON.stringify(postObs('cli-a', { platform_id: 'cli-p' })),
    ];
    await writeFile(file, lines.join('\n') + '\n');
    const result = await cli('ingest', file, '--wait');
    expect(result.code).toBe(1); // some lines were rejected
    expect(JSON.parse(result.stdout)).toMatchObject({ accepted: 2, rejected: 2 });
    const rejected = result.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(rejected.map((r) => r.line)).toEqual([2, 4]);
    // Fields missing for one reason are named together.
    expect(rejected[0].detail).toMatch(/\/shortcode, [^:]*: required/);
    // --wait: visible as soon as the command returns.
    const post = await stack.get(`/v1/social/posts/${mintId('post', 'cli-p')}`);
    expect(post.statusCode).toBe(200);
    expect(post.body.author.handle).toBe('cli.author');
  });
});

describe('social-search seed', () => {
  it('anchors the dataset at the present, so the last 30 days count it; a bad --now is a usage error', async () => {
    const seeded = await cli('seed', '--posts', '12', '--accounts', '3', '--seed', '9', '--wait');
    expect(seeded.code).toBe(0);
    expect(JSON.parse(seeded.stdout)).toMatchObject({ rejected: 0 });
    // Counts cover the last 30 days by default: the demo's posts are in them.
    const counts = await stack.post('/v1/social/posts/counts', { post: {}, interval: 'week' });
    expect(counts.statusCode).toBe(200);
    expect(counts.body.total).toBeGreaterThanOrEqual(1);

    const bad = await cli('seed', '--posts', '1', '--accounts', '1', '--now', 'yesterday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/'--now <time>' argument 'yesterday' is invalid/);
  });
});

describe('social-search indices', () => {
  it('apply reports unchanged objects on an installed prefix; status reports counts', async () => {
    const apply = await cli('indices', 'apply');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toMatch(/^unchanged\s+index template/m);
    const status = await cli('indices', 'status', '--json');
    expect(status.code).toBe(0);
    const parsed = JSON.parse(status.stdout);
    expect(parsed.indices.map((i: { name: string }) => i.name)).toEqual(['posts', 'accounts']);
    expect(parsed.queue).toHaveProperty('failed');
  });

  it('status shows the depth of every queue that writes to the indices, embeddings and follow-ups too', async () => {
    const embeddings = stack.runtime.queues.find((q) => q.name === 'embeddings')!;
    // Delayed a minute, so no worker takes it while the command looks.
    const job = await embeddings.add('embed', { posts: ['p1'], accounts: [] }, { delay: 60_000 });
    try {
      const json = JSON.parse((await cli('indices', 'status', '--json')).stdout);
      expect(Object.keys(json.queues)).toEqual(['observations', 'embeddings', 'follow-ups']);
      expect(json.queues.embeddings).toMatchObject({ delayed: 1, failed: 0, paused: 0 });
      expect(json.queue).toEqual(json.queues.observations);
      const text = (await cli('indices', 'status')).stdout;
      expect(text).toMatch(/^queue observations\twaiting=\d+ active=\d+ delayed=\d+ failed=\d+ paused=0$/m);
      expect(text).toMatch(/^queue embeddings\twaiting=0 active=0 delayed=1 failed=0 paused=0$/m);
      expect(text).toMatch(/^queue follow-ups\t/m);
    } finally {
      await job.remove();
    }
  });

  it('status names the one command that brings an index up to date', async () => {
    const missing = await cliWith({ INDEX_PREFIX: `${stack.config.INDEX_PREFIX}-none` }, 'indices', 'status');
    expect(missing.code).toBe(0);
    expect(missing.stdout).toMatch(
      /^posts\t.*\(missing\).*\ttemplate=- \(missing: run `social-search indices apply`\)$/m,
    );

    const current = await cli('indices', 'status');
    expect(current.stdout).toMatch(/^posts\t.*\ttemplate=v\d+\tshards=/m);

    // An index whose mapping came from another template than the one installed now.
    const [index] = JSON.parse((await cli('indices', 'status', '--json')).stdout).indices[0].indices as string[];
    const es = stack.runtime.es;
    const meta = (await es.indices.getMapping({ index: index! }))[index!]!.mappings._meta!;
    await es.indices.putMapping({ index: index!, _meta: { ...meta, template_hash: 'an-older-template' } });
    try {
      const stale = await cli('indices', 'status');
      expect(stale.stdout).toMatch(
        /^posts\t.*\ttemplate=v\d+ \(built from an older template: run `social-search indices rebuild posts`\)\t/m,
      );
      expect(stale.stdout).toMatch(/^accounts\t.*\ttemplate=v\d+\tshards=/m);
    } finally {
      await es.indices.putMapping({ index: index!, _meta: meta });
    }
  });
});
