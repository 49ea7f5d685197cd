import { expect } from 'vitest';
import type { Stack } from './stack.ts';

// Facets must count exactly what paging through the matching search returns: the facet tests
// page through the search and count the rendered results themselves.

export type Post = Record<string, any>;
export type Counts = Map<string, number>;

/** Every result of a search, paged with cursors. */
export async function pageAll(
  s: Stack,
  operation: 'posts' | 'accounts',
  body: Record<string, unknown>,
): Promise<Post[]> {
  const out: Post[] = [];
  let response = await s.post(`/v1/social/${operation}/search`, { ...body, limit: 100 });
  for (;;) {
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    out.push(...response.body.data);
    if (!response.body.has_more) return out;
    response = await s.post(`/v1/social/${operation}/search`, { cursor: response.body.next_cursor });
  }
}

/** Counts per value as facets spell them (`null`: results without a value). */
export function tally(items: Post[], values: (item: Post) => unknown[] | null): Counts {
  const counts: Counts = new Map();
  const add = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const item of items) {
    const found = [...new Set((values(item) ?? []).map((v) => JSON.stringify(v)))];
    if (found.length === 0) add('null');
    for (const v of found) add(v);
  }
  return counts;
}

export function bucketsOf(buckets: Array<{ value: unknown; count: number }>): Counts {
  return new Map(buckets.map((b) => [JSON.stringify(b.value), b.count]));
}
