/**
 * Asks BEIR queries through `POST /v1/social/posts/search` and turns the answers into a TREC-style
 * run, timing every request as a client sees it.
 */
import { apiClient } from '../lib/sides.ts';
import type { ScoredDoc } from './ndcg.ts';

/** Spec 4.1 / 8: the longest `post.query` the API accepts. */
export const MAX_QUERY_CHARS = 2000;

/** One query to ask. */
export interface BeirQuery {
  readonly id: string;
  readonly text: string;
}

/** What one mode's pass over the queries produced. */
export interface ApiRun {
  /** Query id -> BEIR doc ids with descending rank scores (the API order; see {@link rankScores}). */
  readonly run: Map<string, ScoredDoc[]>;
  /** Milliseconds per request, in query order. */
  readonly latenciesMs: number[];
  /** Queries cut to {@link MAX_QUERY_CHARS} before sending. */
  readonly truncated: number;
}

/** A post summary as far as the harness reads it (spec 2.4). */
interface PostHit {
  readonly id: string;
  readonly shortcode: string;
}

/**
 * Scores that encode the API's order: n, n−1, …, 1. They are distinct, so trec_eval's re-sort
 * (score descending, ties by doc id descending; `trecOrder` in ndcg.ts) keeps the order exactly.
 */
export function rankScores(docIds: readonly string[]): ScoredDoc[] {
  return docIds.map((id, rank) => ({ id, score: docIds.length - rank }));
}

/**
 * Asks every query once, in order, one at a time. `docOf` maps a returned post ID to its BEIR doc
 * (and the shortcode it was ingested with); a result outside the collection is an error, not a
 * silent zero. A few warm-up requests with texts outside the query set go first, so connection
 * set-up and JIT do not land in the first measured latencies (and no real query gets cached).
 */
export async function askQueries(
  node: { baseUrl: string },
  key: string,
  queries: readonly BeirQuery[],
  docOf: ReadonlyMap<string, { docId: string; shortcode: string }>,
  options: { limit: number; warmup?: number; onProgress?: (done: number) => void },
): Promise<ApiRun> {
  // One keep-alive connection, as the latency benches' API side: timings measure the service.
  const client = apiClient(node.baseUrl, key);
  const ask = async (text: string) =>
    (
      (await client.post('/v1/social/posts/search', { post: { query: text }, limit: options.limit })) as {
        data: PostHit[];
      }
    ).data;
  try {
    for (let i = 0; i < (options.warmup ?? 5); i++) await ask(`warm-up request ${i} of the relevance harness`);
    const run = new Map<string, ScoredDoc[]>();
    const latenciesMs: number[] = [];
    let truncated = 0;
    for (const [n, query] of queries.entries()) {
      let text = query.text;
      if (text.length > MAX_QUERY_CHARS) {
        text = text.slice(0, MAX_QUERY_CHARS);
        truncated++;
      }
      const started = performance.now();
      const data = await ask(text);
      latenciesMs.push(performance.now() - started);
      const docIds = data.map((hit) => {
        const doc = docOf.get(hit.id);
        if (!doc) throw new Error(`query ${query.id}: result ${hit.id} is not a post of this collection`);
        if (doc.shortcode !== hit.shortcode)
          throw new Error(`query ${query.id}: ${hit.id} has shortcode ${hit.shortcode}, ingested as ${doc.shortcode}`);
        return doc.docId;
      });
      if (new Set(docIds).size !== docIds.length) throw new Error(`query ${query.id}: the same post twice in one page`);
      run.set(query.id, rankScores(docIds));
      options.onProgress?.(n + 1);
    }
    return { run, latenciesMs, truncated };
  } finally {
    await client.close();
  }
}
