/**
 * Typeahead latency (bench/suggest.md): `GET /v1/social/suggest` through the API against the same
 * engine request sent straight to Elasticsearch (the service's own multi-search, built by
 * name-suggestions.ts) and through a bare proxy route (the floor any service in front of the engine
 * pays), interleaved request by request; then, with `--alternatives`, the designs
 * not taken, each on the same names: a dictionary index kept by a worker, read by a keyword
 * `prefix` query or by the completion suggester, and whether `search_as_you_type` exists.
 *
 *   INDEX_PREFIX=sugg1m REDIS_PREFIX=sugg1m npx tsx bench/search/suggest-latency.ts [rounds] [--alternatives]
 *
 * The queries are what a person types: for each of 40 names (the most followed accounts' handles
 * and display names, the most used hashtags, topic labels), every prefix of 1 to 8 characters, one
 * request per keystroke, all kinds asked, limit 5. Prints p50/p99 by prefix length and in all and
 * writes bench/results/suggest-latency.json. The scratch dictionary index is deleted at the end.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { createNameSuggester } from '../../src/engine/elasticsearch/reads/name-suggestions.ts';
import { NAME_SEPARATOR } from '../../src/engine/elasticsearch/documents/projection.ts';
import { labelOf } from '../../src/query/taxonomies.ts';
import { foldName } from '../../src/text/name-keys.ts';
import { cli } from '../lib/args.ts';
import { interleave, quantile, round, writeResult } from '../lib/measure.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';

const args = cli({
  positionals: [{ name: 'rounds', type: 'int', default: 3, min: 1 }],
  options: { alternatives: { type: 'boolean' } },
});
const ROUNDS = args.rounds;
const ALTERNATIVES = args.alternatives;
const KINDS = ['account', 'hashtag', 'mention', 'topic', 'niche'] as const;

const node = await startInProcessApi({
  name: 'suggest bench',
  defaults: { RATE_LIMIT_READ_PER_MINUTE: '10000000' },
  ...(process.env.API_URL ? { apiUrl: process.env.API_URL } : {}),
});
const { config, address, key } = node;
const es = new Client({ node: config.ELASTICSEARCH_URL });
const posts = `${config.INDEX_PREFIX}-posts`;
const accounts = `${config.INDEX_PREFIX}-accounts`;
const raw = createNameSuggester({ client: es, postsIndex: posts, accountsIndex: accounts });
const pool = new Pool(address, { connections: 1 });

/** The names a person starts typing: popular ones, as people look for what exists. */
async function targets(): Promise<string[]> {
  const top = await es.search({
    index: accounts,
    size: 10,
    sort: [{ followers_count: 'desc' }],
    _source: ['record.profile.v.handle', 'record.profile.v.display_name'],
    query: { bool: { filter: [{ term: { servable: true } }, { term: { is_private: false } }] } },
  });
  const people = top.hits.hits.flatMap((h) => {
    const p = (h._source as { record: { profile: { v: { handle: string; display_name: string } } } }).record.profile.v;
    return [p.handle, p.display_name];
  });
  const terms = async (field: string, size: number) => {
    const r = await es.search({ index: posts, size: 0, aggs: { t: { terms: { field, size } } } });
    return ((r.aggregations?.t as estypes.AggregationsStringTermsAggregate).buckets as Array<{ key: string }>).map(
      (b) => b.key,
    );
  };
  const tags = (await terms('hashtag_names', 10)).map((k) => `#${k.slice(k.indexOf(NAME_SEPARATOR) + 1)}`);
  const topics = (await terms('topics', 10)).map((id) => labelOf('classification', id));
  return [...people, ...tags, ...topics];
}

const names = await targets();
const queries = names.flatMap((name) => {
  const chars = [...name.replace(/^[#@]/, '')];
  return Array.from({ length: Math.min(8, chars.length) }, (_, i) => chars.slice(0, i + 1).join(''));
});

// The floor any HTTP service in front of the engine pays here: a bare Fastify route (no key,
// validation, rate limit or rendering) that folds the prefix and sends the raw side's request.
const floorApp = Fastify({ logger: false });
floorApp.get<{ Querystring: { q: string } }>('/floor', async (request) => ({
  data: await raw.suggest(foldName(request.query.q), KINDS, 5),
}));
const floorPool = new Pool(await floorApp.listen({ host: '127.0.0.1', port: 0 }), { connections: 1 });

async function get(on: Pool, path: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await on.request({ method: 'GET', path, headers });
  await response.body.json();
  if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}`);
}

// One warm-up pass, then the rounds; the three sides interleaved request by request, which goes
// first rotating, so none always meets a warmer cache.
const times = await interleave({
  n: ROUNDS * queries.length,
  warmup: queries.length,
  request: (i) => queries[i % queries.length]!,
  sides: [
    ['api', (q) => get(pool, `/v1/social/suggest?q=${encodeURIComponent(q)}`, { authorization: `Bearer ${key}` })],
    ['raw', (q) => raw.suggest(foldName(q), KINDS, 5)],
    ['floor', (q) => get(floorPool, `/floor?q=${encodeURIComponent(q)}`)],
  ],
});
const lengths = times.api.map((_, j) => [...queries[(j + queries.length) % queries.length]!].length);

function row(label: string, keep: (length: number) => boolean) {
  const side = (name: keyof typeof times) => times[name].filter((_, j) => keep(lengths[j]!));
  const [api, rawTimes, floor] = [side('api'), side('raw'), side('floor')];
  const q = (xs: number[], at: number) => quantile(xs, at);
  return {
    label,
    n: api.length,
    api_p50: round(q(api, 0.5)),
    raw_p50: round(q(rawTimes, 0.5)),
    ratio_p50: round(q(api, 0.5) / q(rawTimes, 0.5)),
    floor_ratio_p50: round(q(floor, 0.5) / q(rawTimes, 0.5)),
    api_p99: round(q(api, 0.99)),
    raw_p99: round(q(rawTimes, 0.99)),
    ratio_p99: round(q(api, 0.99) / q(rawTimes, 0.99)),
    floor_ratio_p99: round(q(floor, 0.99) / q(rawTimes, 0.99)),
  };
}

const rows = [
  row('all', () => true),
  row('1 character', (n) => n === 1),
  row('2 characters', (n) => n === 2),
  row('3+ characters', (n) => n >= 3),
];
console.table(rows);

const counts = await Promise.all([es.count({ index: posts }), es.count({ index: accounts })]);
const result: Record<string, unknown> = {
  at: new Date().toISOString(),
  prefix: config.INDEX_PREFIX,
  posts: counts[0].count,
  accounts: counts[1].count,
  names: names.length,
  queries: queries.length,
  rounds: ROUNDS,
  rows,
};
if (ALTERNATIVES) result.alternatives = await alternatives();

writeResult('suggest-latency.json', result);
await pool.close();
await floorPool.close();
await floorApp.close();
await node.close();
process.exit(0);

/**
 * The designs not taken, raw engine times on the same prefixes: a dictionary index a worker would
 * keep (one document per name with its count, built here once from the live indices), read by a
 * keyword `prefix` query sorted by count, or by the completion suggester (the count as weight, the
 * kind as a category context); and whether this build maps `search_as_you_type` at all.
 */
async function alternatives() {
  const index = `${config.INDEX_PREFIX}-suggest-scratch`;
  const out: Record<string, unknown> = {};
  try {
    await es.indices.create({
      index: `${index}-sayt`,
      mappings: { properties: { n: { type: 'search_as_you_type' } } },
    });
    out.search_as_you_type = 'mapped';
    await es.indices.delete({ index: `${index}-sayt` });
  } catch (error) {
    out.search_as_you_type = `refused: ${(error as Error).message.slice(0, 160)}`;
  }
  await es.indices.delete({ index, ignore_unavailable: true });
  await es.indices.create({
    index,
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
    mappings: {
      properties: {
        kind: { type: 'keyword' },
        keys: { type: 'keyword' },
        count: { type: 'long' },
        value: { type: 'keyword', index: false },
        complete: {
          type: 'completion',
          analyzer: 'keyword',
          contexts: [{ name: 'kind', type: 'category', path: 'kind' }],
        },
      },
    },
  });
  const started = performance.now();
  let docs = 0;
  const bulk = async (body: object[]) => {
    if (body.length > 0) await es.bulk({ index, operations: body });
  };
  // Names with their counts, as a dictionary would hold them (composite aggregations over the live indices).
  for (const [kind, field, idx] of [
    ['hashtag', 'hashtag_names', posts],
    ['mention', 'mention_names', posts],
    ['topic', 'topics', posts],
    ['niche', 'niches', accounts],
  ] as const) {
    let after: Record<string, string | number | null> | undefined;
    for (;;) {
      const r = await es.search({
        index: idx,
        size: 0,
        query: { term: { servable: true } },
        aggs: {
          n: { composite: { size: 5000, sources: [{ k: { terms: { field } } }], ...(after ? { after } : {}) } },
        },
      });
      const agg = r.aggregations?.n as estypes.AggregationsCompositeAggregate;
      const buckets = agg.buckets as estypes.AggregationsCompositeBucket[];
      const body: object[] = [];
      for (const b of buckets) {
        const name = String(b.key.k);
        const folded = name.includes(NAME_SEPARATOR) ? name.slice(0, name.indexOf(NAME_SEPARATOR)) : name;
        body.push(
          { index: {} },
          {
            kind,
            keys: [folded],
            count: b.doc_count,
            value: name,
            complete: { input: [folded], weight: Math.min(b.doc_count, 2 ** 31 - 1), contexts: { kind: [kind] } },
          },
        );
        docs++;
      }
      await bulk(body);
      if (!agg.after_key || buckets.length < 5000) break;
      after = agg.after_key as Record<string, string>;
    }
  }
  let afterId: estypes.SortResults | undefined;
  for (;;) {
    const r = await es.search({
      index: accounts,
      size: 5000,
      sort: [{ id: 'asc' }],
      _source: false,
      docvalue_fields: ['name_keys', 'followers_count'],
      query: { bool: { filter: [{ term: { servable: true } }, { term: { is_private: false } }] } },
      ...(afterId ? { search_after: afterId } : {}),
    });
    const body: object[] = [];
    for (const h of r.hits.hits) {
      const keysOf = (h.fields?.name_keys as string[]) ?? [];
      const count = (h.fields?.followers_count as number[])?.[0] ?? 0;
      body.push(
        { index: {} },
        {
          kind: 'account',
          keys: keysOf,
          count,
          complete: { input: keysOf, weight: Math.min(count, 2 ** 31 - 1), contexts: { kind: ['account'] } },
        },
      );
      docs++;
    }
    await bulk(body);
    if (r.hits.hits.length < 5000) break;
    afterId = r.hits.hits.at(-1)!.sort;
  }
  await es.indices.refresh({ index });
  await es.indices.forcemerge({ index, max_num_segments: 1 });
  out.dictionary = { docs, build_seconds: +((performance.now() - started) / 1000).toFixed(1) };

  const keyword = async (prefix: string) => {
    const t = performance.now();
    await es.msearch({
      searches: KINDS.flatMap((kind) => [
        { index },
        {
          query: { bool: { filter: [{ term: { kind } }, { prefix: { keys: prefix } }] } },
          sort: [{ count: 'desc' }],
          size: 5,
          track_total_hits: false,
        },
      ]),
    });
    return performance.now() - t;
  };
  const completion = async (prefix: string) => {
    const t = performance.now();
    await es.search({
      index,
      size: 0,
      suggest: Object.fromEntries(
        KINDS.map((kind) => [
          kind,
          { prefix, completion: { field: 'complete', size: 5, skip_duplicates: true, contexts: { kind: [kind] } } },
        ]),
      ),
    });
    return performance.now() - t;
  };
  const live = async (q: string) => {
    const t = performance.now();
    await raw.suggest(foldName(q), KINDS, 5);
    return performance.now() - t;
  };
  const times: Record<string, number[]> = { live_indices: [], dictionary_prefix: [], dictionary_completion: [] };
  for (const q of queries) {
    await keyword(foldName(q));
    await completion(foldName(q));
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of queries) {
      const prefix = foldName(q);
      times.live_indices!.push(await live(q));
      times.dictionary_prefix!.push(await keyword(prefix));
      times.dictionary_completion!.push(await completion(prefix));
    }
  }
  for (const [name, xs] of Object.entries(times)) {
    out[name] = { p50: round(quantile(xs, 0.5)), p99: round(quantile(xs, 0.99)) };
  }
  await es.indices.delete({ index, ignore_unavailable: true });
  console.log(out);
  return out;
}
