import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * The OpenAPI document is usable, not only valid: TypeScript types generated from the served
 * document (openapi-typescript) compile a small client (openapi-fetch) under strict settings,
 * reject a call the contract forbids, and the client then talks to the running API.
 */

const dir = path.join(import.meta.dirname, `../.typed-client-${randomUUID().slice(0, 8)}`);
let stack: Stack;
let baseUrl: string;
beforeAll(async () => {
  stack = await startStack('typed-client');
  await stack.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
  const ingest = await stack.ingest([
    accountObs({ platform_id: 'tc-a', handle: 'typed.client' }),
    postObs('tc-a', { platform_id: 'tc-p', caption: 'Typed clients for skincare searches' }),
  ]);
  expect(ingest.statusCode).toBe(200);
});
afterAll(async () => {
  if (!process.env.KEEP_TYPED_CLIENT) rmSync(dir, { recursive: true, force: true });
  await stack?.close();
});

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

export async function smoke(baseUrl: string, key: string, postId: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } });
  const search = await client.POST('/v1/social/posts/search', { body: { post: { query: 'skincare' }, limit: 5 } });
  const ids: string[] = (search.data?.data ?? []).map((post) => post.id);
  // The additive members are typed too: what was searched, and what may have been meant.
  const searchedAs: string | null = search.data?.corrected_query ?? search.data?.suggested_query ?? null;
  const got = await client.GET('/v1/social/posts/{id}', { params: { path: { id: postId } } });
  const handle: string | undefined = got.data?.author.handle;
  const problem = await client.GET('/v1/social/posts/{id}', { params: { path: { id: 'not-a-tracked-post' } } });
  const problemType: string | undefined = problem.error?.type;
  const looked = await client.POST('/v1/social/accounts/lookup', {
    body: { handles: ['@typed.client', 'nobody.here'] },
  });
  const lookedUp: string[] = (looked.data?.data ?? []).map((account) => account.handle);
  const notFound: string[] = looked.data?.not_found ?? [];
  const posts = await client.POST('/v1/social/posts/lookup', { body: { ids: [postId] } });
  const postsLookedUp: string[] = (posts.data?.data ?? []).map((post) => post.caption);
  const suggested = await client.GET('/v1/social/suggest', {
    params: { query: { q: 'typed', kinds: 'accounts,hashtags', limit: 3 } },
  });
  const suggestions = (suggested.data?.data ?? []).map((s) => \`\${s.kind} \${s.value} \${s.count}\`);
  const topics = await client.GET('/v1/social/taxonomies/{name}', { params: { path: { name: 'topics' } } });
  const counted: 'accounts' | 'posts' | undefined = topics.data?.counted;
  return { ids, searchedAs, handle, status: got.response.status, problemType, lookedUp, notFound, postsLookedUp, suggestions, counted };
}

/** Never called: it only has to fail to compile where the contract says so. */
export function forbidden(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  // @ts-expect-error limit is an integer in the contract, not a string
  void client.POST('/v1/social/posts/search', { body: { limit: 'ten' } });
  // @ts-expect-error no such operation
  void client.GET('/v1/social/posts/{id}/comments', {});
  // @ts-expect-error a lookup takes lists
  void client.POST('/v1/social/accounts/lookup', { body: { handles: 'one' } });
  // @ts-expect-error no such dictionary
  void client.GET('/v1/social/taxonomies/{name}', { params: { path: { name: 'brands' } } });
}
`;

describe('a typed client generated from /openapi.json', () => {
  it('compiles strictly, rejects what the contract forbids, and works against the API', async () => {
    const doc = (await stack.inject({ method: 'GET', url: '/openapi.json' })).body;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'api.ts'), astToString(await openapiTS(doc)));
    writeFileSync(path.join(dir, 'client.ts'), CLIENT);
    const tsc = path.join(import.meta.dirname, '../../node_modules/typescript/bin/tsc');
    const compile = () =>
      execFileSync(
        process.execPath,
        [
          tsc,
          '--noEmit',
          '--strict',
          '--target',
          'es2022',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--skipLibCheck',
          path.join(dir, 'client.ts'),
        ],
        { encoding: 'utf8', stdio: 'pipe' },
      );
    expect(compile).not.toThrow();

    const { smoke } = (await import(path.join(dir, 'client.ts'))) as {
      smoke: (baseUrl: string, key: string, postId: string) => Promise<Record<string, unknown>>;
    };
    const result = await smoke(baseUrl, stack.key, mintId('post', 'tc-p'));
    expect(result).toEqual({
      ids: [mintId('post', 'tc-p')],
      searchedAs: null,
      handle: 'typed.client',
      status: 200,
      problemType: 'https://api.example.test/problems/not-tracked',
      lookedUp: ['typed.client'],
      notFound: ['nobody.here'],
      postsLookedUp: ['Typed clients for skincare searches'],
      suggestions: ['account @typed.client 12000'],
      counted: 'posts',
    });
  });
});
