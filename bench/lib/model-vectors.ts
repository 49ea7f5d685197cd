/**
 * Vectors for raw-engine benches: the model's own vectors, read from an index the service loaded
 * with embeddings, and as many distinct copies of them as a bench needs (each moved by Gaussian
 * noise, σ = 0.01 a dimension, renormalized: cosine ≈ 0.98 to its original, as
 * bench/search/backfill-vectors.ts does), plus the engine's merge settling the benches wait for.
 */
import type { Client } from '@elastic/elasticsearch';
import { Rng } from '../../src/seed/random.ts';
import { decodeVector } from '../../src/text/vector-codec.ts';
import { storedPostVectors } from '../../src/engine/elasticsearch/queries/post-vectors.ts';

/**
 * The stored vectors of posts index `from` (one the service loaded with embeddings): from its
 * vector documents (`<prefix>-post-vectors`, doc values: they keep no `_source`), or from the
 * records of an index loaded before the records stopped carrying them.
 */
export async function modelVectors(es: Client, from: string): Promise<number[][]> {
  const out: number[][] = [];
  const vectors = from.replace(/-posts$/, '-post-vectors');
  const apart = vectors !== from && (await es.indices.exists({ index: vectors }));
  let after: unknown[] | undefined;
  for (;;) {
    const r = await es.search<{ record: { embedding?: { vector?: string } } }>({
      index: apart ? vectors : from,
      size: 1000,
      sort: [{ id: 'asc' }],
      ...(apart ? { _source: false, docvalue_fields: ['embedding'] } : { _source: ['record.embedding.vector'] }),
      ...(after ? { search_after: after as never } : {}),
    });
    const hits = r.hits.hits;
    if (hits.length === 0) break;
    for (const h of hits) {
      const v = h._source?.record.embedding?.vector;
      const values = h.fields?.['embedding'] as number[][] | undefined;
      if (typeof v === 'string') out.push(decodeVector(v));
      else if (values?.[0]) out.push(values[0]);
    }
    after = hits.at(-1)!.sort;
  }
  if (out.length === 0) throw new Error(`${from} holds no vectors`);
  return out;
}

/** Document `id`'s vector: a model vector moved by seeded Gaussian noise, unit length; the same at every call. */
export function vectorOf(base: readonly number[][], id: number): number[] {
  const rng = new Rng(id);
  const out = base[id % base.length]!.map((x) => x + 0.01 * rng.normal());
  const norm = Math.hypot(...out);
  return out.map((x) => x / norm);
}

/** An index's indexing, refresh and merge times (ms, primaries) and its merges running now. */
export async function indexTimes(es: Client, index: string) {
  const s = await es.indices.stats({ index, metric: ['indexing', 'refresh', 'merge'] });
  const p = s._all.primaries!;
  return {
    indexing: p.indexing?.index_time_in_millis ?? 0,
    refresh: p.refresh?.total_time_in_millis ?? 0,
    merge: p.merges?.total_time_in_millis ?? 0,
    merging: p.merges?.current ?? 0,
  };
}

/** Waits until no merge has run on `index` for three polls a second apart. */
export async function mergesSettled(es: Client, index: string): Promise<void> {
  let quiet = 0;
  let last = -1;
  while (quiet < 3) {
    await new Promise((r) => setTimeout(r, 1000));
    const t = await indexTimes(es, index);
    quiet = t.merging === 0 && t.merge === last ? quiet + 1 : 0;
    last = t.merge;
  }
}

/**
 * The head vectors of posts `ids` of posts index (or alias) `index`, from their vector documents
 * (`<prefix>-post-vectors`; a post's record keeps none since 2026-11-30), or from the records of an
 * index loaded before that.
 */
export async function postHeadVectors(
  es: Client,
  index: string,
  ids: readonly string[],
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (ids.length === 0) return out;
  const vectors = index.replace(/-posts(-v\d+-\d+)?$/, '-post-vectors');
  if (vectors !== index && (await es.indices.exists({ index: vectors })))
    for (const [id, stored] of await storedPostVectors(es, vectors, ids)) out.set(id, stored.vector);
  const missing = ids.filter((id) => !out.has(id));
  if (missing.length > 0) {
    const r = await es.mget<{ record?: { embedding?: { vector?: string } } }>({
      index,
      ids: [...missing],
      _source: ['record.embedding.vector'],
    });
    for (const d of r.docs) {
      const v = '_source' in d ? d._source?.record?.embedding?.vector : undefined;
      if (v) out.set(d._id, decodeVector(v));
    }
  }
  return out;
}
