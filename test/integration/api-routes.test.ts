import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import type { Config } from '../../src/internal/config.ts';
import { createApi } from '../../src/start/api.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
const postId = mintId('post', 'routes-p1');

beforeAll(async () => {
  stack = await startStack('api-routes');
  await stack.ingest([
    accountObs({ platform_id: 'routes-a1', handle: 'routes.author' }),
    postObs('routes-a1', { platform_id: 'routes-p1' }),
  ]);
});
afterAll(async () => stack?.close());

/** An API node of this stack serving `routes` (config API_ROUTES). */
async function node(routes: Config['API_ROUTES']) {
  const { config, connections, engine, embedder } = stack.runtime;
  const api = createApi({ ...config, API_ROUTES: routes }, connections, { engine, embedder });
  await api.app.ready();
  return api;
}

const auth = () => ({ authorization: `Bearer ${stack.key}` });
/** One post observation sent to `api`'s intake route. */
const sendObservation = (api: Awaited<ReturnType<typeof node>>) =>
  api.app.inject({
    method: 'POST',
    url: '/internal/v1/social/observations',
    headers: { ...auth(), 'content-type': 'application/x-ndjson' },
    payload: JSON.stringify(postObs('routes-a1', { platform_id: 'routes-p2', observed_at: new Date().toISOString() })),
  });

describe('API_ROUTES: intake nodes apart from the nodes customers search', () => {
  it('a reads node answers the public API and not the intake', async () => {
    const api = await node('reads');
    try {
      const read = await api.app.inject({ method: 'GET', url: `/v1/social/posts/${postId}`, headers: auth() });
      expect(read.statusCode).toBe(200);
      expect(read.json<{ id: string }>().id).toBe(postId);
      const intake = await sendObservation(api);
      expect(intake.statusCode).toBe(404);
      expect(intake.json<{ type: string }>().type).toMatch(/\/problems\/not-found$/);
      expect((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('an intake node queues observations and answers nothing else of the API', async () => {
    const api = await node('intake');
    try {
      const intake = await sendObservation(api);
      expect(intake.statusCode).toBe(202);
      expect(intake.json<{ accepted: number }>().accepted).toBe(1);
      const read = await api.app.inject({ method: 'GET', url: `/v1/social/posts/${postId}`, headers: auth() });
      expect(read.statusCode).toBe(404);
      const search = await api.app.inject({
        method: 'POST',
        url: '/v1/social/posts/search',
        headers: auth(),
        payload: { limit: 1 },
      });
      expect(search.statusCode).toBe(404);
      expect((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await api.close();
    }
  });
});
