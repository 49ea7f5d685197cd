import { postHeadVectors } from './model-vectors.ts';
import type { Client, estypes } from '@elastic/elasticsearch';
import { decodeVector } from '../../src/text/vector-codec.ts';

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

/**
 * The stored vectors of `n` random records of `index` that have `field` (the same ones each run):
 * an account's lookalike vector, else a record's own embedding; on a posts' vector index
 * (`<prefix>-post-vectors`), which keeps no `_source`, the doc values of `field`. The query
 * vectors of the engine-only kNN benches.
 */
export async function sampleVectors(es: Client, index: string, field: string, n: number): Promise<number[][]> {
  type Stored = { record: { lookalike?: { vector: string }; embedding?: { vector: string | null } } };
  // Asked of the mapping, not the answer: a `_source` filter on an index without `_source` is an error.
  const mappings = Object.values(await es.indices.getMapping({ index }));
  const sourceless = mappings.some((m) => m.mappings._source?.enabled === false);
  const sample = await es.search<Stored>({
    index,
    size: n,
    query: {
      function_score: { query: { exists: { field } }, functions: [{ random_score: { seed: 7, field: '_seq_no' } }] },
    },
    ...(sourceless
      ? { _source: false, docvalue_fields: [field] }
      : { _source: ['record.lookalike.vector', 'record.embedding.vector'] }),
  });
  // A post's record keeps no vectors since 2026-11-30: its vector document does.
  const apart = sourceless
    ? new Map<string, number[]>()
    : await postHeadVectors(
        es,
        index,
        sample.hits.hits.filter((h) => !h._source?.record.lookalike?.vector).map((h) => h._id!),
      );
  return sample.hits.hits.flatMap((h) => {
    const encoded = h._source?.record.lookalike?.vector ?? h._source?.record.embedding?.vector;
    if (encoded) return [decodeVector(encoded)];
    const held = apart.get(h._id!);
    if (held) return [held];
    // A dense_vector's doc values: one array of floats per document.
    const stored = h.fields?.[field] as unknown[] | undefined;
    return Array.isArray(stored?.[0]) ? [stored[0] as number[]] : [];
  });
}
