import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import type { FusedRanking, PostPage } from '../../src/engine/search.ts';
import { FUSION_WINDOW } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// The engine's fused ranking with hand-made vectors (the model's own test is embedding.test.ts):
// which documents a query finds, in which order, and that paging through them is exact.
let stack: Stack;
const DIMS = 384;
// More lexical matches than one fused window holds, so paging continues past it.
const LEXICAL_ONLY = 120;
const SEMANTIC_ONLY = 10;

/** A unit vector at `degrees` from the query (axis 0), towards axis `k`. */
function axis(k: number, degrees = 90): number[] {
  const v = new Array<number>(DIMS).fill(0);
  v[0] = Math.cos((degrees * Math.PI) / 180);
  v[k] = Math.sin((degrees * Math.PI) / 180);
  return v;
}
const QUERY = axis(1, 0);
const id = (platformId: string) => mintId('post', platformId);

beforeAll(async () => {
  stack = await startStack('fused');
  const posts = [
    ...Array.from({ length: LEXICAL_ONLY }, (_, i) =>
      postObs('f-a', { platform_id: `lex-${i}`, caption: `kite festival number ${i}` }),
    ),
    ...Array.from({ length: SEMANTIC_ONLY }, (_, i) =>
      postObs('f-a', { platform_id: `sem-${i}`, caption: `paper flyer on a windy beach ${i}` }),
    ),
    postObs('f-a', { platform_id: 'both', caption: 'kite kite festival' }),
    postObs('f-a', { platform_id: 'filtered-out', caption: 'kite on a windy beach', format: 'carousel' }),
  ];
  await stack.ingest([accountObs({ platform_id: 'f-a', handle: 'fused.author' }), ...posts]);
  const vectors = new Map<string, number[]>([
    ...Array.from({ length: LEXICAL_ONLY }, (_, i) => [id(`lex-${i}`), axis(5)] as const),
    // Nearer the query the lower their number (well apart: the index quantizes to int8).
    ...Array.from({ length: SEMANTIC_ONLY }, (_, i) => [id(`sem-${i}`), axis(10 + i, 10 + 6 * i)] as const),
    [id('both'), axis(1, 0)],
    [id('filtered-out'), axis(2, 0)],
  ]);
  await stack.runtime.engine.intake.posts.merge([...vectors.keys()], (postId, current) =>
    current
      ? { ...current, embedding: { model: 'test', text_hash: 'test', vector: encodeVector(vectors.get(postId)!) } }
      : null,
  );
  // Refresh, then advance the visibility epoch.
  await stack.runtime.engine.intake.publish();
});
afterAll(async () => stack?.close());

function searchOf(body: unknown): PostSearch {
  const request = parsePostSearchRequest(body);
  if (request.kind !== 'initial') throw new Error('initial only');
  return request.search;
}

/** How a first page ranks with the query's embedding (continuations carry it in their state). */
type SemanticQuery = Pick<FusedRanking, 'vector' | 'mode'>;

async function walk(search: PostSearch, semantic: SemanticQuery, limit: number, during?: () => Promise<void>) {
  const ids: string[] = [];
  let page: PostPage = { limit, keepAliveSeconds: 60, state: null, ranking: { kind: 'fused', ...semantic } };
  let pages = 0;
  for (;;) {
    const result = await stack.runtime.engine.search.searchPosts(search, page);
    ids.push(...result.records.map((r) => r.id));
    pages++;
    if (pages === 2) await during?.();
    expect(result.hasMore).toBe(result.state !== null);
    if (!result.hasMore) return { ids, pages };
    page = { limit, keepAliveSeconds: 60, state: result.state! };
  }
}

const reels = { post: { query: 'kite', filters: { format: { in: ['reel'] } } } };

describe('fused post search', () => {
  it('hybrid: what both retrievers agree on first, then what either found; filters bind both', async () => {
    const { ids } = await walk(searchOf(reels), { vector: QUERY, mode: 'hybrid' }, 100);
    expect(ids[0]).toBe(id('both'));
    // Every vector neighbour without a single matching word is found, within the fused window.
    const firstWindow = ids.slice(0, 2 * FUSION_WINDOW);
    for (let i = 0; i < SEMANTIC_ONLY; i++) expect(firstWindow).toContain(id(`sem-${i}`));
    expect(ids).not.toContain(id('filtered-out'));
  });

  it('hybrid pages past the window in BM25 order, never repeating or skipping, on one snapshot', async () => {
    const expected = [
      id('both'),
      ...Array.from({ length: LEXICAL_ONLY }, (_, i) => id(`lex-${i}`)),
      ...Array.from({ length: SEMANTIC_ONLY }, (_, i) => id(`sem-${i}`)),
    ].sort();
    const { ids, pages } = await walk(searchOf(reels), { vector: QUERY, mode: 'hybrid' }, 7, async () => {
      // Indexed and made visible mid-walk: a new search sees it, this one must not.
      await stack.ingest([postObs('f-a', { platform_id: 'late-kite', caption: 'kite festival late entry' })]);
    });
    expect(pages).toBe(Math.ceil(expected.length / 7));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(expected);
    const fresh = await walk(searchOf(reels), { vector: QUERY, mode: 'hybrid' }, 100);
    expect(fresh.ids).toContain(id('late-kite'));
  });

  it('the same search gives the same order whatever the page size', async () => {
    const one = await walk(searchOf(reels), { vector: QUERY, mode: 'hybrid' }, 100);
    const many = await walk(searchOf(reels), { vector: QUERY, mode: 'hybrid' }, 9);
    expect(many.ids).toEqual(one.ids);
  });

  it('semantic: the vector neighbours alone, nearest first, ending with the window', async () => {
    const { ids } = await walk(searchOf(reels), { vector: QUERY, mode: 'semantic' }, 25);
    expect(ids.slice(0, SEMANTIC_ONLY + 1)).toEqual([
      id('both'),
      ...Array.from({ length: SEMANTIC_ONLY }, (_, i) => id(`sem-${i}`)),
    ]);
    expect(ids.length).toBeLessThanOrEqual(FUSION_WINDOW);
    expect(ids).not.toContain(id('filtered-out'));
  });
});
