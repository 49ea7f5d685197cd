/**
 * What the word probes cost a hybrid search's lexical window, raw engine (bench/scaling.md,
 * "The word probes apart"). The service asks the window of BM25 hits (51) with its word probes in
 * a post filter (query-terms.ts: named clauses whose `matched_queries` tell which of the query's
 * words each hit carries). Three ways, built by the service's own builders for the same queries
 * (natural-language ones, each new), interleaved:
 *
 * - `post_filter`: the window with the probes in its post filter (the service since 2f1e181);
 * - `bare`: the window alone, no probes (what BM25-only asks);
 * - `apart`: the bare window, then a second request naming the probes of its hits alone (an `ids`
 *   filter beside them); its time is both requests'.
 *
 * Checks that `apart` names the same probes for every hit as `post_filter`, then prints p50/p99.
 *
 *   INDEX_PREFIX=bench npx tsx bench/search/probe-cost.ts [N]
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { cli } from '../lib/args.ts';
import { elasticsearchUrls, log } from '../lib/service-stack.ts';
import { quantile, round, writeResult } from '../lib/measure.ts';
import { distinctQueryText } from '../lib/query-texts.ts';
import { postSearchProbes, postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { planLexicalSide, probing, termProbes } from '../../src/engine/elasticsearch/queries/query-terms.ts';
import { analyzeQuery } from '../../src/text/languages.ts';

const { requests: N } = cli({ positionals: [{ name: 'requests', type: 'int', default: 200, min: 1 }] });
const prefix = process.env['INDEX_PREFIX'] ?? 'bench';
const index = `${prefix}-posts`;
const es = new Client({ node: elasticsearchUrls()[0]! });
const WINDOW = 51;
const sort: estypes.SortCombinations[] = [{ _score: { order: 'desc' } }, { id: 'asc' }];

interface Case {
  query: estypes.QueryDslQueryContainer;
  probes: estypes.QueryDslQueryContainer;
  probeList: estypes.QueryDslQueryContainer[];
}

async function caseFor(text: string): Promise<Case | null> {
  const plan = await planLexicalSide(es, index, text, analyzeQuery(text).language);
  if (!probing(plan)) return null;
  const search = { query: plan.text, filter: { kind: 'and' as const, children: [] }, sort: null };
  const probeList = termProbes(plan.terms);
  const probes = postSearchProbes(search, probeList);
  if (!probes) return null;
  return { query: postSearchQuery(search), probes, probeList };
}

const window = (c: Case, withProbes: boolean) =>
  es.search({
    index,
    query: c.query,
    ...(withProbes ? { post_filter: c.probes } : {}),
    sort,
    size: WINDOW,
    _source: false,
    track_total_hits: false,
  });

const names = (hit: estypes.SearchHit) =>
  JSON.stringify(
    [...(Array.isArray(hit.matched_queries) ? hit.matched_queries : Object.keys(hit.matched_queries ?? {}))].sort(),
  );

async function apart(c: Case): Promise<Map<string, string>> {
  const bare = await window(c, false);
  const ids = bare.hits.hits.map((h) => h._id!);
  if (ids.length === 0) return new Map();
  const probed = await es.search({
    index,
    query: { bool: { filter: [{ ids: { values: ids } }], should: c.probeList } },
    size: ids.length,
    _source: false,
    track_total_hits: false,
  });
  return new Map(probed.hits.hits.map((h) => [h._id!, names(h)]));
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const out = await fn();
  return [performance.now() - t0, out];
}

const cases: Case[] = [];
for (let i = 0; cases.length < N && i < N * 3; i++) {
  const c = await caseFor(distinctQueryText(i));
  if (c) cases.push(c);
}
log(`${cases.length} queries with probes on ${index}`);
// Warm-up: every query once each way.
for (const c of cases.slice(0, 20)) await Promise.all([window(c, true), window(c, false), apart(c)]);

const ms: Record<'post_filter' | 'bare' | 'apart', number[]> = { post_filter: [], bare: [], apart: [] };
let differ = 0;
for (const [i, c] of cases.entries()) {
  const order = [0, 1, 2].map((k) => (k + i) % 3);
  let filtered: estypes.SearchResponse | null = null;
  let split: Map<string, string> | null = null;
  for (const k of order) {
    if (k === 0) {
      const [t, r] = await timed(() => window(c, true));
      ms.post_filter.push(t);
      filtered = r;
    } else if (k === 1) ms.bare.push((await timed(() => window(c, false)))[0]);
    else {
      const [t, r] = await timed(() => apart(c));
      ms.apart.push(t);
      split = r;
    }
  }
  for (const hit of filtered!.hits.hits) if (split!.get(hit._id!) !== names(hit)) differ++;
}
const stats = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  return { p50_ms: round(quantile(sorted, 0.5)), p99_ms: round(quantile(sorted, 0.99)) };
};
const result = {
  index,
  queries: cases.length,
  hits_whose_probes_differ: differ,
  post_filter: stats(ms.post_filter),
  bare: stats(ms.bare),
  apart: stats(ms.apart),
};
writeResult(`probe-cost-${prefix}.json`, result);
console.log(JSON.stringify(result, null, 2));
await es.close();
