/**
 * The cap on a posts scope's qualifying accounts, against the real engine at the cap's size: a scope
 * whose posts have more authors than the service can apply as one `terms` filter answers the
 * documented 422, never the engine's bucket-limit failure as a 500 (found on the 3M-post bench
 * index, bench/scaling.md). The authors' posts are written straight into the posts index (the
 * fields the scope's aggregation reads): 65,536 posts through the intake would take minutes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUALIFYING_ACCOUNTS } from '../../src/engine/elasticsearch/queries/account-query.ts';
import { accountEnrichmentObs, accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack('posts-scope-cap');
  // One real account and post through the intake, so the indices hold what the service writes.
  await stack.ingest(
    [
      accountObs({ platform_id: 'cap-real', handle: 'cap.real' }),
      accountEnrichmentObs('cap-real', { niches: ['rare_niche'] }),
      postObs('cap-real', { platform_id: 'cap-real-1' }),
    ],
    { vectors: false },
  );
  const es = stack.runtime.connections.elasticsearch();
  const authors = MAX_QUALIFYING_ACCOUNTS + 1;
  for (let start = 0; start < authors; start += 20_000) {
    const operations: object[] = [];
    for (let i = start; i < Math.min(authors, start + 20_000); i++)
      operations.push(
        { index: { _id: `cap-post-${i}` } },
        { id: `cap-post-${i}`, servable: true, author: { id: `cap-author-${i}` }, views: 500 },
      );
    const written = await es.bulk({ index: `${stack.config.INDEX_PREFIX}-posts`, operations });
    expect(written.errors).toBe(false);
  }
  await es.indices.refresh({ index: `${stack.config.INDEX_PREFIX}-posts` });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('a posts scope with more authors than the cap', () => {
  const tooBroad = {
    status: 422,
    type: expect.stringContaining('validation-failed'),
    detail: expect.stringContaining(
      `/account/posts/filters: matches the posts of more than ${MAX_QUALIFYING_ACCOUNTS} accounts`,
    ),
  };

  it('answers 422 asking to narrow the posts filters, in account search and account facets', async () => {
    const scope = { posts: { minimum_matching_posts: 1, filters: { views: { gte: 100 } } } };
    const searched = await stack.post('/v1/social/accounts/search', { account: scope, limit: 5 });
    expect(searched.statusCode).toBe(422);
    expect(searched.body).toMatchObject(tooBroad);
    const faceted = await stack.post('/v1/social/accounts/facets', { account: scope, facets: [{ field: 'niches' }] });
    expect(faceted.statusCode).toBe(422);
    expect(faceted.body).toMatchObject(tooBroad);
  });

  it('still answers a narrower scope over the same posts', async () => {
    const response = await stack.post('/v1/social/accounts/search', {
      account: { posts: { minimum_matching_posts: 2, filters: { views: { gte: 100 } } } },
      limit: 5,
    });
    expect(response.statusCode).toBe(200);
    expect(response.body.data).toEqual([]);
  });

  it('answers when the account filters narrow the authors: their niches are asked of the posts too', async () => {
    const response = await stack.post('/v1/social/accounts/search', {
      account: {
        filters: { niches: { contains_any: ['rare_niche'] } },
        posts: { minimum_matching_posts: 1, filters: { views: { gte: 100 } } },
      },
      limit: 5,
    });
    expect(response.statusCode).toBe(200);
    expect(response.body.data.map((a: { handle: string }) => a.handle)).toEqual(['cap.real']);
    const faceted = await stack.post('/v1/social/accounts/facets', {
      account: {
        filters: { niches: { contains_any: ['rare_niche'] } },
        posts: { minimum_matching_posts: 1, filters: { views: { gte: 100 } } },
      },
      facets: [{ field: 'niches' }],
    });
    expect(faceted.statusCode).toBe(200);
    expect(faceted.body.facets.niches).toEqual([{ value: 'rare_niche', count: 1 }]);
  });
});
