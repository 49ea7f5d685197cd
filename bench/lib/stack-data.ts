/**
 * What a bench does with a running {@link ServiceStack}'s data: seed it through the intake as an
 * operator's collectors would, and list the ids its indices hold for reads.
 */
import { Pool } from 'undici';
import { until, type ServiceStack } from './service-stack.ts';

/**
 * Sends observations through the intake of `apiUrl` (NDJSON requests of `perRequest`, 202, two in
 * flight) until `posts` post observations have gone, then waits until the worker has indexed them
 * (observations and follow-ups queues empty; embeddings may go on) and refreshes.
 */
export async function seedThroughIntake(
  stack: ServiceStack,
  observations: Iterator<Record<string, unknown>>,
  posts: number,
  perRequest = 500,
): Promise<{ observations: number; posts: number }> {
  const pool = new Pool(stack.apis[0]!.url, { connections: 2 });
  let sentPosts = 0;
  let sent = 0;
  const nextBody = (): string | null => {
    const lines: string[] = [];
    while (lines.length < perRequest && sentPosts < posts) {
      const next = observations.next();
      if (next.done) break;
      if (next.value['kind'] === 'post') sentPosts++;
      lines.push(JSON.stringify(next.value));
    }
    sent += lines.length;
    return lines.length > 0 ? `${lines.join('\n')}\n` : null;
  };
  const lane = async () => {
    for (let body = nextBody(); body !== null; body = nextBody()) {
      const response = await pool.request({
        path: '/internal/v1/social/observations',
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
      });
      const text = await response.body.text();
      const answer = JSON.parse(text) as { rejected?: unknown[] };
      if (response.statusCode !== 202 || (answer.rejected?.length ?? 0) > 0)
        throw new Error(`seeding: intake answered ${response.statusCode}: ${text.slice(0, 500)}`);
    }
  };
  await Promise.race([Promise.all([lane(), lane()]), stack.failure]);
  await pool.close();
  await until(
    'the worker to index the seed',
    async () => {
      const depth = await stack.queueDepth();
      return depth.observations === 0 && depth['follow-ups'] === 0;
    },
    30 * 60_000,
    500,
  );
  await stack.es.indices.refresh({ index: `${stack.prefix}-posts,${stack.prefix}-accounts` });
  return { observations: sent, posts: sentPosts };
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
