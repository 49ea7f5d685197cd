import type { Client } from '@elastic/elasticsearch';
import type { SearchTimes } from '../../../internal/write-pacing.ts';
import { engineCall } from '../errors.ts';

/**
 * The cluster's search totals since its nodes started: shard-level query phases and their summed
 * time, over every node (the writes' pacing reads them each second: src/internal/write-pacing.ts).
 * One small request; the response carries the two numbers per node and nothing else.
 */
export async function readSearchTimes(client: Client): Promise<SearchTimes> {
  const response = await engineCall(() =>
    client.nodes.stats({
      metric: 'indices',
      index_metric: 'search',
      filter_path: ['nodes.*.indices.search.query_total', 'nodes.*.indices.search.query_time_in_millis'],
    }),
  );
  let queries = 0;
  let millis = 0;
  for (const node of Object.values(response.nodes ?? {})) {
    queries += node.indices?.search?.query_total ?? 0;
    millis += node.indices?.search?.query_time_in_millis ?? 0;
  }
  return { queries, millis };
}
