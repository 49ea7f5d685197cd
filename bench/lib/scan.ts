import type { Client, estypes } from '@elastic/elasticsearch';

/**
 * Every hit of `request` on `index`, a page at a time, through a point in time in index order
 * (`_shard_doc`): for a bench that reads a whole index. The point in time closes when the loop
 * ends, also early.
 */
export async function* scanPages<T>(
  es: Client,
  index: string,
  request: Omit<estypes.SearchRequest, 'index'> = {},
  options: { size?: number; keepAlive?: string } = {},
): AsyncGenerator<Array<estypes.SearchHit<T>>> {
  const keepAlive = options.keepAlive ?? '5m';
  const pit = await es.openPointInTime({ index, keep_alive: keepAlive });
  try {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const page = await es.search<T>({
        ...request,
        pit: { id: pit.id, keep_alive: keepAlive },
        sort: [{ _shard_doc: 'asc' }],
        size: options.size ?? 5000,
        track_total_hits: false,
        ...(after ? { search_after: after } : {}),
      });
      const hits = page.hits.hits;
      if (hits.length === 0) return;
      yield hits;
      after = hits.at(-1)!.sort;
    }
  } finally {
    await es.closePointInTime({ id: pit.id }).catch(() => undefined);
  }
}
