/**
 * How far a better order of what the service retrieves could take questions (bench/relevance.md,
 * "What the candidates allow"): for the held-out questions, the development questions and the noun
 * phrases both are compared with, the service's first 100 results (`limit: 100`: the fused window,
 * BM25's top 50 with the neighbours above the floor, then BM25's matches past it) and, beside
 * them, the query's 200 nearest posts with no floor (the kNN a wider window would see). For each:
 * nDCG@10 as served, of the nearest posts alone (the query's own vector), and the oracle's: the same candidates in the order of their judgments, the
 * best any re-ranking of them can do. If even the oracle's questions stay under 0.95× the oracle's
 * noun phrases, no fusion, weighting or re-ranking of these candidates meets issue 55's goal;
 * only retrieving other posts can.
 *
 *   npx tsx bench/relevance/pool-ceiling.ts [--seed 5 --posts 1500 --accounts 150]
 *
 * Reads the index social.ts loaded for the same options (`relevance-social-<seed>-<posts>`), through
 * an API node of this checkout (hybrid, the configured model). Appends to
 * bench/results/relevance-pool-ceiling.json.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { generateObservations, seedPostLabels } from '../../src/seed/generator.ts';
import { nearestPostsQuery } from '../../src/engine/elasticsearch/queries/nearest-query.ts';
import { postSearchFilter } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { postVectorsOf } from '../lib/sides.ts';
import { benchLogger, harnessEnv, harnessRuntime, startApiNode } from '../lib/in-process-service.ts';
import { cli } from '../lib/args.ts';
import { rankScores } from './api-search.ts';
import { REPO_ROOT } from './beir.ts';
import { ndcgAtK } from './ndcg.ts';
import { socialQuerySet, type SocialQuery } from './social-set.ts';
import { parsed } from './windows.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
    seed: { type: 'int', default: 5, min: 0 },
  },
});
const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
const prefix = `relevance-social-${size.seed}-${size.posts}`;
const K = 10;
const KINDS: ReadonlyArray<SocialQuery['kind']> = ['paraphrase', 'dev', 'paraphrase-topic', 'question', 'topic'];
/** The neighbours a wider semantic window would see. */
const WIDE = 200;

const runtime = harnessRuntime(harnessEnv(prefix), benchLogger(), {
  SEARCH_RANKING: 'hybrid',
  RATE_LIMIT_SEARCH_PER_MINUTE: '1000000',
  SEARCH_IN_FLIGHT_PER_KEY: '0',
});
type Row = {
  offBy: Record<'lexical' | 'semantic' | 'both', number>;
  served: number;
  nearest: number;
  oracle100: number;
  oracleWide: number;
  relevantIn100: number;
  relevantWide: number;
};
const rows = new Map<SocialQuery['kind'], Row[]>();
try {
  const node = await startApiNode(runtime);
  const key = await runtime.keys.create({ owner: 'bench@example.com', name: 'pool ceiling', scopes: ['search'] });
  try {
    const servable = await runtime.es.search({
      index: `${prefix}-posts`,
      query: { term: { servable: true } },
      size: 10_000,
      _source: false,
    });
    const queries = socialQuerySet(
      [...generateObservations(size)],
      new Set(servable.hits.hits.map((h) => h._id!)),
      seedPostLabels(size),
    ).filter((q) => KINDS.includes(q.kind) && q.judgments.size > 0);
    const ndcg = (q: SocialQuery, ids: readonly string[]) => ndcgAtK(rankScores(ids), q.judgments, { k: K });
    /** The candidates in the order of their judgments: what a perfect re-ranking of them would show. */
    const oracle = (q: SocialQuery, ids: Iterable<string>) =>
      [...new Set(ids)].sort((a, b) => (q.judgments.get(b) ?? 0) - (q.judgments.get(a) ?? 0));
    const best = (q: SocialQuery) => Math.max(...q.judgments.values());
    for (const q of queries) {
      const response = await fetch(`${node.baseUrl}/v1/social/posts/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ post: { query: q.text }, limit: 100, include: ['matches'] }),
      });
      const body = (await response.json()) as {
        data: Array<{ id: string }>;
        matches: Array<{ retrieved_by: 'lexical' | 'semantic' | 'both' | null }>;
      };
      if (response.status !== 200) throw new Error(`${q.id}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
      const served = body.data.map((p) => p.id);
      const vector = Array.from(await runtime.embedder.embedQuery(q.text));
      const near =
        vector.length === 0
          ? []
          : (
              await runtime.es.search({
                index: postVectorsOf(`${prefix}-posts`),
                ...nearestPostsQuery({
                  vector,
                  k: WIDE,
                  candidates: WIDE * 2,
                  filter: postSearchFilter(parsed(q.text)),
                }),
                size: WIDE,
                _source: false,
              })
            ).hits.hits.map((h) => h._id!);
      const top = best(q);
      // The first page's results off the query's niche, by the side that retrieved them.
      const offBy = { lexical: 0, semantic: 0, both: 0 };
      served.slice(0, K).forEach((id, i) => {
        const side = body.matches[i]?.retrieved_by;
        if (side && !q.judgments.has(id)) offBy[side] += 1;
      });
      const relevant = [...q.judgments].filter(([, grade]) => grade === top).length;
      const wide = new Set([...served, ...near]);
      const row: Row = {
        offBy,
        served: ndcg(q, served),
        nearest: ndcg(q, near),
        oracle100: ndcg(q, oracle(q, served)),
        oracleWide: ndcg(q, oracle(q, wide)),
        relevantIn100: served.filter((id) => q.judgments.get(id) === top).length / Math.min(100, relevant),
        relevantWide: [...wide].filter((id) => q.judgments.get(id) === top).length / relevant,
      };
      rows.set(q.kind, [...(rows.get(q.kind) ?? []), row]);
    }
  } finally {
    await runtime.keys.revoke(key.id).catch(() => undefined);
    await node.close();
  }
} finally {
  await runtime.close();
}

const mean = (xs: number[]) => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(4);
const summary = Object.fromEntries(
  KINDS.map((kind) => {
    const r = rows.get(kind) ?? [];
    return [
      kind,
      {
        queries: r.length,
        served: mean(r.map((x) => x.served)),
        nearest_alone: mean(r.map((x) => x.nearest)),
        oracle_top100: mean(r.map((x) => x.oracle100)),
        oracle_with_200_neighbours: mean(r.map((x) => x.oracleWide)),
        best_graded_in_top100: mean(r.map((x) => x.relevantIn100)),
        best_graded_with_200_neighbours: mean(r.map((x) => x.relevantWide)),
        off_niche_in_top10_by: Object.fromEntries(
          (['lexical', 'semantic', 'both'] as const).map((side) => [side, r.reduce((n, x) => n + x.offBy[side], 0)]),
        ),
      },
    ];
  }),
);
const ratio = (kind: SocialQuery['kind'], of: 'served' | 'oracle_top100' | 'oracle_with_200_neighbours') =>
  +(summary[kind]![of] / summary['paraphrase-topic']![of]).toFixed(3);
const ratios = Object.fromEntries(
  (['paraphrase', 'dev'] as const).map((kind) => [
    kind,
    {
      served: ratio(kind, 'served'),
      oracle_top100: ratio(kind, 'oracle_top100'),
      oracle_with_200_neighbours: ratio(kind, 'oracle_with_200_neighbours'),
    },
  ]),
);
console.table(summary);
for (const kind of KINDS)
  console.log(kind, 'off-niche in the top 10 by side:', JSON.stringify(summary[kind]!['off_niche_in_top10_by']));
console.log('against the noun phrases:', JSON.stringify(ratios));
const file = path.resolve(REPO_ROOT, 'bench/results/relevance-pool-ceiling.json');
mkdirSync(path.dirname(file), { recursive: true });
appendFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), dataset: size, summary, ratios })}\n`);
