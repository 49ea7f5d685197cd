import { expect } from 'vitest';
import type { Stack } from './stack.ts';

/** One post search page through the stack's API, asserted 200. */
export async function searchPage(stack: Stack, body: Record<string, unknown>) {
  const response = await stack.post('/v1/social/posts/search', body);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return response.body as { data: Array<{ id: string }>; has_more: boolean; next_cursor?: string };
}

/** Every post ID of a query's search, in order, walked page by page with its cursors. */
export async function pagedIds(stack: Stack, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let page = await searchPage(stack, { post: { query }, limit });
  for (;;) {
    ids.push(...page.data.map((p) => p.id));
    if (!page.has_more) break;
    page = await searchPage(stack, { cursor: page.next_cursor });
  }
  return ids;
}

/** The `total` of a query's post facets (the number of posts its search returns). */
export async function facetsTotal(stack: Stack, query: string): Promise<number> {
  const response = await stack.post('/v1/social/posts/facets', { post: { query }, facets: [{ field: 'format' }] });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return (response.body as { total: number }).total;
}

/** Every result of a post search body, paged with its cursors (100 a page). */
export async function allPosts(stack: Stack, body: Record<string, unknown>): Promise<Array<Record<string, any>>> {
  const out: Array<Record<string, any>> = [];
  let page = await searchPage(stack, { ...body, limit: 100 });
  for (;;) {
    out.push(...(page.data as Array<Record<string, any>>));
    if (!page.has_more) return out;
    page = await searchPage(stack, { cursor: page.next_cursor });
  }
}

/** A query's first page as the fixture's keys (`keyOf`: post ID → key; an unknown ID as itself), in order. */
export async function rankedKeys(
  stack: Stack,
  keyOf: ReadonlyMap<string, string>,
  query: string,
  limit = 20,
): Promise<string[]> {
  return (await searchPage(stack, { post: { query }, limit })).data.map((p) => keyOf.get(p.id) ?? p.id);
}

/** The rank of each of `keys` in `results` (results.length when absent). */
export function ranksOf(results: readonly string[], keys: readonly string[]): number[] {
  return keys.map((k) => (results.includes(k) ? results.indexOf(k) : results.length));
}
