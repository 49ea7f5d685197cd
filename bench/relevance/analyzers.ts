/**
 * Analyzer / stemming choice for post search, measured directly against Elasticsearch on BEIR
 * SciFact (nDCG@10, pytrec_eval semantics). Method and results: bench/relevance.md, "Stemming and
 * analyzer choice (SciFact, Elasticsearch directly)".
 *
 *   npx tsx bench/relevance/analyzers.ts
 *
 * Env: ELASTICSEARCH_URL (default http://127.0.0.1:9200), BEIR_SCIFACT_DIR (default
 * ../shared/eval/scifact), STEMMER_DIR (default /tmp/stemmer-scratch: a scratch npm folder holding
 * wink-porter2-stemmer@2.0.1 and stemmer@2.0.1, kept out of the project's package.json; without it the
 * client-side stemming variants are skipped). Throwaway indices `bench-analyzers-<run>-*` are deleted
 * at the end, also on failure or Ctrl-C. BENCH_RUN_DIR=dir also writes each variant's TREC run file.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadCorpus, loadQrels, loadQueries, REPO_ROOT, scifactDir, type BeirDoc } from './beir.ts';
import { clientAnalyze, loadStemmer, type ClientStemmer } from './client-analysis.ts';
import { meanNdcgAtK, type Qrels, type ScoredDoc } from './ndcg.ts';
import { median, pairedRandomizationP } from './stats.ts';
import { cli } from '../lib/args.ts';

cli({});

const ES_URL = process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200';
const STEMMER_DIR = process.env['STEMMER_DIR'] ?? '/tmp/stemmer-scratch';
const PREFIX = `bench-analyzers-${Date.now().toString(36)}-`;
const SIZE = 11; // 10 + the self-match that BEIR drops
const WARMUP_QUERIES = 50;
const BULK_DOCS = 1000;
const OUT_JSON = path.join(REPO_ROOT, 'bench/relevance/analyzers-results.json');
const RUN_DIR = process.env['BENCH_RUN_DIR']; // optional: TREC run files per variant, for cross-checking

type Query = estypes.QueryDslQueryContainer;
type Group = 'flat' | 'split' | 'bm25';

/** Index analysis shared by every throwaway index (unused analyzers cost nothing per document). */
const ANALYSIS = {
  filter: {
    en_stop: { type: 'stop', stopwords: '_english_' },
    // The client's typings demand `lang`, `language` and `locale` together (aliases of one setting).
    en_hunspell: { type: 'hunspell', locale: 'en_US', dedup: true } as unknown as estypes.AnalysisHunspellTokenFilter,
  },
  analyzer: {
    std: { type: 'custom', tokenizer: 'standard', filter: ['lowercase'] },
    std_stop: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'en_stop'] },
    hun: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'en_hunspell'] },
    hun_stop: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'en_stop', 'en_hunspell'] },
  },
} satisfies estypes.IndicesIndexSettingsAnalysis;
type EsAnalyzer = keyof typeof ANALYSIS.analyzer;

// ---------------------------------------------------------------------------------------------
// Variants: an index layout (analysis + mapping + document shape) and the queries run on it.

interface QueryVariant {
  readonly name: string;
  readonly group: Group;
  readonly build: (text: string) => Query;
}

interface IndexSpec {
  readonly key: string;
  readonly properties: Record<string, estypes.MappingProperty>;
  readonly doc: (d: BeirDoc) => Record<string, string>;
  readonly queries: readonly QueryVariant[];
  readonly bm25?: { readonly k1: number; readonly b: number };
}

const flatText = (d: BeirDoc): string => `${d.title}\n\n${d.text}`;
const textField = (analyzer: EsAnalyzer | 'whitespace'): estypes.MappingProperty => ({ type: 'text', analyzer });
const match = (field: string, query: string): Query => ({ match: { [field]: { query } } });

function flatEs(name: string, analyzer: EsAnalyzer): IndexSpec {
  return {
    key: name,
    properties: { body: textField(analyzer) },
    doc: (d) => ({ body: flatText(d) }),
    queries: [{ name, group: 'flat', build: (q) => match('body', q) }],
  };
}

function flatClient(name: string, s: ClientStemmer, stop: boolean): IndexSpec {
  return {
    key: name,
    properties: { body: textField('whitespace') },
    doc: (d) => ({ body: clientAnalyze(flatText(d), s.stem, stop) }),
    queries: [{ name, group: 'flat', build: (q) => match('body', clientAnalyze(q, s.stem, stop)) }],
  };
}

/** Unstemmed field plus an in-engine stemmed subfield, summed (most_fields = bool should of both). */
function flatSubfield(name: string, base: EsAnalyzer, stemmed: EsAnalyzer): IndexSpec {
  return {
    key: name,
    properties: { body: { type: 'text', analyzer: base, fields: { stemmed: textField(stemmed) } } },
    doc: (d) => ({ body: flatText(d) }),
    queries: [
      {
        name,
        group: 'flat',
        build: (q) => ({ multi_match: { query: q, type: 'most_fields', fields: ['body', 'body.stemmed'] } }),
      },
    ],
  };
}

/** Unstemmed field plus a client-stemmed sibling field (different query text each: bool should). */
function flatPlusClient(name: string, base: EsAnalyzer, s: ClientStemmer): IndexSpec {
  return {
    key: name,
    properties: { body: textField(base), body_stemmed: textField('whitespace') },
    doc: (d) => ({ body: flatText(d), body_stemmed: clientAnalyze(flatText(d), s.stem, true) }),
    queries: [
      {
        name,
        group: 'flat',
        build: (q) => ({ bool: { should: [match('body', q), match('body_stemmed', clientAnalyze(q, s.stem, true))] } }),
      },
    ],
  };
}

/** Title and text as separate fields: best_fields with tie 0.5 (the BEIR paper's Elasticsearch setup),
 *  most_fields (sum), combined_fields (BM25F: one term statistic over both fields). */
function split(name: string, analyzer: EsAnalyzer | ClientStemmer): IndexSpec {
  const client = typeof analyzer === 'string' ? null : analyzer;
  const prep = (t: string): string => (client ? clientAnalyze(t, client.stem, true) : t);
  const field = textField(client ? 'whitespace' : (analyzer as EsAnalyzer));
  const mm = (type: 'best_fields' | 'most_fields', q: string): Query => ({
    multi_match: {
      query: prep(q),
      type,
      fields: ['title', 'text'],
      ...(type === 'best_fields' ? { tie_breaker: 0.5 } : {}),
    },
  });
  const bm25f = (q: string): Query => ({ combined_fields: { query: prep(q), fields: ['title', 'text'] } });
  return {
    key: name,
    properties: { title: field, text: field },
    doc: (d) => ({ title: prep(d.title), text: prep(d.text) }),
    queries: [
      { name: `${name} best_fields`, group: 'split', build: (q) => mm('best_fields', q) },
      { name: `${name} most_fields`, group: 'split', build: (q) => mm('most_fields', q) },
      { name: `${name} combined_fields`, group: 'split', build: bm25f },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Elasticsearch plumbing.

const client = new Client({ node: ES_URL, requestTimeout: 120_000, maxRetries: 0, compression: false });
const created = new Set<string>();

async function cleanup(): Promise<void> {
  for (const index of [...created]) {
    await client.indices.delete({ index, ignore_unavailable: true }).then(
      () => created.delete(index),
      (error: Error) => console.error(`! could not delete ${index}: ${error.message}`),
    );
  }
}

/** Waits up to 3 minutes for the cluster (a shared dev node may be restarting). */
async function waitForEs(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.cluster.health({ wait_for_status: 'yellow', timeout: '5s' });
      return;
    } catch (error) {
      if (attempt >= 36) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  }
}

interface IndexStats {
  readonly indexMs: number;
  readonly sizeBytes: number;
}

async function buildIndex(index: string, spec: IndexSpec, corpus: readonly BeirDoc[]): Promise<IndexStats> {
  const similarity = spec.bm25
    ? { similarity: { default: { type: 'BM25' as const, k1: spec.bm25.k1, b: spec.bm25.b } } }
    : {};
  const started = performance.now();
  created.add(index);
  await client.indices.create({
    index,
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1', analysis: ANALYSIS, ...similarity },
    mappings: { dynamic: 'strict', properties: spec.properties },
  });
  for (let start = 0; start < corpus.length; start += BULK_DOCS) {
    const operations = corpus.slice(start, start + BULK_DOCS).flatMap((d) => [{ index: { _id: d.id } }, spec.doc(d)]);
    const response = await client.bulk({ index, operations, refresh: false });
    if (response.errors) {
      const failed = response.items.find((item) => item.index?.error)?.index?.error;
      throw new Error(`bulk into ${index} failed: ${JSON.stringify(failed)}`);
    }
  }
  await client.indices.refresh({ index });
  const indexMs = performance.now() - started;
  const count = await client.count({ index });
  if (count.count !== corpus.length) throw new Error(`${index}: ${count.count} documents, expected ${corpus.length}`);
  const stats = await client.indices.stats({ index, metric: 'store' });
  return { indexMs, sizeBytes: stats._all.primaries?.store?.size_in_bytes ?? 0 };
}

async function runQueries(index: string, variant: QueryVariant, queries: readonly [string, string][]) {
  const search = (text: string) =>
    client.search({ index, query: variant.build(text), size: SIZE, _source: false, track_total_hits: false });
  for (const [, text] of queries.slice(0, WARMUP_QUERIES)) await search(text);
  const run = new Map<string, ScoredDoc[]>();
  const took: number[] = [];
  const wall: number[] = [];
  for (const [id, text] of queries) {
    const t0 = performance.now();
    const response = await search(text);
    wall.push(performance.now() - t0);
    took.push(response.took);
    run.set(
      id,
      response.hits.hits.map((hit) => ({ id: hit._id!, score: hit._score ?? 0 })),
    );
  }
  return { run, tookP50: median(took), clientP50: median(wall) };
}

// ---------------------------------------------------------------------------------------------

interface Result {
  readonly name: string;
  readonly group: Group;
  readonly index: string;
  readonly ndcg: number;
  readonly perQuery: ReadonlyMap<string, number>;
  readonly stats: IndexStats;
  readonly tookP50: number;
  readonly clientP50: number;
}

async function evaluate(
  spec: IndexSpec,
  corpus: readonly BeirDoc[],
  queries: readonly [string, string][],
  qrels: Qrels,
  note = '',
): Promise<Result[]> {
  const index = `${PREFIX}${spec.key.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const stats = await buildIndex(index, spec, corpus);
  const results: Result[] = [];
  for (const variant of spec.queries) {
    const { run, tookP50, clientP50 } = await runQueries(index, variant, queries);
    const { mean, perQuery, evaluated } = meanNdcgAtK(run, qrels, { k: 10 });
    if (RUN_DIR && !note) {
      const lines = [...run].flatMap(([q, docs]) => docs.map((d, i) => `${q} Q0 ${d.id} ${i + 1} ${d.score} bench`));
      await mkdir(RUN_DIR, { recursive: true });
      await writeFile(path.join(RUN_DIR, `${variant.name.replace(/[^a-z0-9]+/gi, '_')}.run`), `${lines.join('\n')}\n`);
    }
    if (evaluated !== queries.length) throw new Error(`evaluated ${evaluated} queries, expected ${queries.length}`);
    results.push({
      name: variant.name,
      group: variant.group,
      index: spec.key,
      ndcg: mean,
      perQuery,
      stats,
      tookP50,
      clientP50,
    });
    console.log(
      `  ${(note + variant.name).padEnd(44)} nDCG@10 ${mean.toFixed(4)}  index ${(stats.indexMs / 1000).toFixed(1)} s  took p50 ${tookP50} ms  client p50 ${clientP50.toFixed(1)} ms`,
    );
  }
  await client.indices.delete({ index });
  created.delete(index);
  return results;
}

/** One retry after a connection failure (the node went away mid-variant); the variant is redone whole. */
async function withRetry<T>(task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    if ((error as Error).name !== 'ConnectionError') throw error;
    console.warn(`! ${(error as Error).message}: waiting for Elasticsearch, then redoing the variant`);
    await waitForEs();
    await cleanup();
    return task();
  }
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const dir = scifactDir();
  const [corpus, allQueries, qrels] = await Promise.all([loadCorpus(dir), loadQueries(dir), loadQrels(dir, 'test')]);
  const queries: [string, string][] = [...qrels.keys()].map((id) => {
    const text = allQueries.get(id);
    if (text === undefined) throw new Error(`query ${id} is in the qrels but not in queries.jsonl`);
    return [id, text];
  });
  await waitForEs();
  const nodes = await client.nodes.info({ node_id: '_local', metric: 'os' });
  const node = Object.values(nodes.nodes)[0];
  console.log(
    `SciFact: ${corpus.length} documents, ${queries.length} test queries; Elasticsearch ${node?.version} at ${ES_URL}`,
  );

  const porter2 = await loadStemmer(
    STEMMER_DIR,
    'porter2',
    'wink-porter2-stemmer@2.0.1',
    'wink-porter2-stemmer/src/wink-porter2-stemmer.js',
    'default',
  );
  const porter1 = await loadStemmer(STEMMER_DIR, 'porter1', 'stemmer@2.0.1', 'stemmer/index.js', 'stemmer');

  const specs: IndexSpec[] = [
    flatEs('standard', 'std'),
    flatEs('standard+stop', 'std_stop'),
    flatEs('hunspell', 'hun'),
    flatEs('hunspell+stop', 'hun_stop'),
    flatSubfield('standard & hunspell+stop subfield', 'std', 'hun_stop'),
    flatSubfield('standard+stop & hunspell+stop subfield', 'std_stop', 'hun_stop'),
    ...(porter2
      ? [
          flatClient('client porter2', porter2, false),
          flatClient('client porter2+stop', porter2, true),
          flatPlusClient('standard & client porter2+stop field', 'std', porter2),
          flatPlusClient('standard+stop & client porter2+stop field', 'std_stop', porter2),
        ]
      : []),
    ...(porter1 ? [flatClient('client porter1+stop', porter1, true)] : []),
    split('split standard+stop', 'std_stop'),
    split('split hunspell+stop', 'hun_stop'),
    ...(porter2 ? [split('split client porter2+stop', porter2)] : []),
  ];

  // JVM/JIT and hunspell dictionary warm-up, so the first measured variant is not penalized.
  await withRetry(() => evaluate(specs[0]!, corpus, queries, qrels, '(warm-up, discarded) '));
  const results: Result[] = [];
  for (const spec of specs) results.push(...(await withRetry(() => evaluate(spec, corpus, queries, qrels))));

  // BM25 parameters: the best one-field variant again with Anserini's BEIR setting.
  const best = results.filter((r) => r.group === 'flat').sort((a, b) => b.ndcg - a.ndcg)[0]!;
  const bestSpec = specs.find((s) => s.key === best.index)!;
  const alt = { k1: 0.9, b: 0.4 };
  const altName = `${best.name} (k1 ${alt.k1}, b ${alt.b})`;
  const altSpec = {
    ...bestSpec,
    key: `${bestSpec.key} bm25 alt`,
    bm25: alt,
    queries: bestSpec.queries.map((q) => ({ ...q, name: altName, group: 'bm25' as const })),
  };
  results.push(...(await withRetry(() => evaluate(altSpec, corpus, queries, qrels))));

  const baseline = results.find((r) => r.name === 'standard')!;
  const pVs = (r: Result, other: Result): number =>
    r.name === other.name ? 1 : pairedRandomizationP(r.perQuery, other.perQuery);
  const rows = results.map((r) => ({ ...r, delta: r.ndcg - baseline.ndcg, p: pVs(r, baseline), pBest: pVs(r, best) }));
  const fmtP = (p: number, self: boolean): string => (self ? '—' : p < 0.001 ? '<0.001' : p.toFixed(3));
  const table = [
    '| variant | group | nDCG@10 | Δ vs standard | p vs standard | p vs best one-field | index s | index MB | took p50 ms | client p50 ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.group} | ${r.ndcg.toFixed(4)} | ${r.name === baseline.name ? '—' : (r.delta >= 0 ? '+' : '') + r.delta.toFixed(4)} | ${fmtP(r.p, r.name === baseline.name)} | ${fmtP(r.pBest, r.name === best.name)} | ${(r.stats.indexMs / 1000).toFixed(1)} | ${(r.stats.sizeBytes / 1048576).toFixed(1)} | ${r.tookP50} | ${r.clientP50.toFixed(1)} |`,
    ),
  ].join('\n');
  console.log(`\n${table}\n`);

  const cpus = os.cpus();
  const output = {
    generated_at: new Date().toISOString(),
    script: 'bench/relevance/analyzers.ts',
    elasticsearch: node?.version ?? null,
    machine: {
      cpus: cpus.length,
      cpu_model: cpus[0]?.model ?? null,
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    },
    collection: { name: 'BEIR SciFact (test)', documents: corpus.length, queries: queries.length },
    protocol:
      'nDCG@10, pytrec_eval ndcg_cut.10 semantics, self-match dropped; size 11; document = title + "\\n\\n" + text unless split',
    stemmers: { porter2: porter2?.pkg ?? null, porter1: porter1?.pkg ?? null },
    p_value: 'two-sided paired sign-flip randomization test over the 300 per-query nDCG@10 values, 10,000 draws',
    best_one_field: best.name,
    results: Object.fromEntries(
      rows.map((r) => {
        const round = (value: number, digits: number): number => Number(value.toFixed(digits));
        const { group, tookP50: took_p50_ms } = r;
        return [
          r.name,
          {
            group,
            ndcg_at_10: round(r.ndcg, 5),
            delta_vs_standard: round(r.delta, 5),
            p_vs_standard: round(r.p, 4),
            p_vs_best_one_field: round(r.pBest, 4),
            index_seconds: round(r.stats.indexMs / 1000, 2),
            index_bytes: r.stats.sizeBytes,
            took_p50_ms,
            client_p50_ms: round(r.clientP50, 2),
          },
        ];
      }),
    ),
    runtime_seconds: Math.round((performance.now() - startedAt) / 1000),
  };
  await writeFile(OUT_JSON, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`wrote ${path.relative(REPO_ROOT, OUT_JSON)}; runtime ${output.runtime_seconds} s`);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    console.error(`\n${signal}: deleting ${created.size} throwaway index(es)`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  if (!interrupted) {
    console.error(error);
    process.exitCode = 1;
  }
} finally {
  if (!interrupted) await cleanup();
  await client.close();
}
