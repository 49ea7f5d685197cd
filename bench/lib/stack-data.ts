/**
 * What a bench does with a running {@link ServiceStack}'s data: seed it through the intake as an
 * operator's collectors would, and list the ids its indices hold for reads.
 */
import path from 'node:path';
import { sendLoad, writeLoad } from './intake-load.ts';
import type { ServiceStack } from './service-stack.ts';

/**
 * Sends observations through the stack's intake (NDJSON requests of `perRequest`, 202, two in
 * flight) until `posts` post observations have gone, then waits until the worker has indexed them
 * (observations and follow-ups queues empty; embeddings may go on) and refreshes. The rest of
 * `observations` is left for the caller.
 */
export async function seedThroughIntake(
  stack: ServiceStack,
  observations: Iterator<Record<string, unknown>>,
  posts: number,
  perRequest = 500,
): Promise<{ observations: number; posts: number }> {
  function* seed(): Generator<Record<string, unknown>> {
    for (let sent = 0; sent < posts;) {
      const next = observations.next();
      if (next.done) return;
      if (next.value['kind'] === 'post') sent++;
      yield next.value;
    }
  }
  const load = writeLoad(seed(), perRequest, path.join(stack.scratch, 'seed.ndjson'));
  await Promise.race([sendLoad(load, { baseUrl: stack.apis[0]!.url, key: stack.key, inFlight: 2 }), stack.failure]);
  await stack.drained(30 * 60_000, { what: 'the worker to index the seed', queues: ['observations', 'follow-ups'] });
  return { observations: load.observations, posts: load.kinds['post'] ?? 0 };
}

/** Ids and alternate keys of what the stack's indices hold, for GETs (up to `max` of each). */
export async function readTargets(
  stack: ServiceStack,
  max = 10_000,
): Promise<{
  posts: Array<{ id: string; shortcode: string | null }>;
  accounts: Array<{ id: string; handle: string | null }>;
}> {
  const ids = async (index: string, field: string) => {
    const response = await stack.es.search({
      index,
      size: max,
      _source: false,
      fields: [field],
      query: { term: { servable: true } },
    });
    return response.hits.hits.map((h) => ({
      id: h._id!,
      value: ((h.fields?.[field] as string[] | undefined) ?? [null])[0] ?? null,
    }));
  };
  const posts = await ids(`${stack.prefix}-posts`, 'shortcode');
  const accounts = await ids(`${stack.prefix}-accounts`, 'handle');
  return {
    posts: posts.map((p) => ({ id: p.id, shortcode: p.value })),
    accounts: accounts.map((a) => ({ id: a.id, handle: a.value })),
  };
}
