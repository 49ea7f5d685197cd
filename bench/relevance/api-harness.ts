/**
 * Relevance through the product: a BEIR collection ingested through the public intake, every test
 * query asked through `POST /v1/social/posts/search`, nDCG@10 as pytrec_eval computes it.
 *
 *   npx tsx bench/relevance/api-harness.ts [--modes lexical,semantic,hybrid] [--collection DIR]
 *                                          [--queries N] [--reingest]
 *
 * One post per document (caption = title, blank line, text), spread over 50 synthetic authors;
 * the data stays under INDEX_PREFIX/REDIS_PREFIX `relevance-<collection>` between runs. One API
 * node per ranking mode (config SEARCH_RANKING) answers over the same indices. The model comes
 * from MODEL_DIR (default: ../shared/models/all-MiniLM-L6-v2). Writes
 * bench/results/relevance-<collection>.json.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { mintId } from '../../src/contract/ids.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createRuntime, type Runtime } from '../../src/start/runtime.ts';
import { createServer } from '../../src/start/server.ts';
import { loadCorpus, loadQrels, loadQueries, REPO_ROOT, scifactDir } from './beir.ts';
import { meanNdcgAtK, type ScoredDoc } from './ndcg.ts';

const { values: args } = parseArgs({
  options: {
    modes: { type: 'string', default: 'lexical,semantic,hybrid' },
    collection: { type: 'string' },
    queries: { type: 'string' },
    reingest: { type: 'boolean', default: false },
  },
});
const collectionDir = args.collection ?? scifactDir();
const collection = path.basename(collectionDir);
const modes = args.modes!.split(',') as Array<Config['SEARCH_RANKING']>;
const prefix = `relevance-${collection.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
const env = {
  NODE_ENV: 'production',
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  MODEL_DIR: path.resolve(REPO_ROOT, '../shared/models/all-MiniLM-L6-v2'),
  LOG_LEVEL: 'warn',
  // Every intake request waits for inline embedding of its posts: ~250 word pieces each.
  INTAKE_WAIT_TIMEOUT_MS: '600000',
  ...process.env,
  INDEX_PREFIX: prefix,
  REDIS_PREFIX: prefix,
};
const logger = pino({ level: 'warn' });
const say = (line: string) => process.stdout.write(`${line}\n`);

const corpus = await loadCorpus(collectionDir);
const qrels = await loadQrels(collectionDir, 'test');
const allQueries = [...(await loadQueries(collectionDir))].map(([id, text]) => ({ id, text })).filter((q) => qrels.has(q.id));
const queries = args.queries ? allQueries.slice(0, Number(args.queries)) : allQueries;

// Ingestion: through the HTTP intake of a node that also runs the worker (which embeds).
const base = createRuntime(loadConfig(env), logger);
await base.ready();
if (args.reingest) await base.indexAdmin.destroy();
await base.indexAdmin.apply();
// The worker runs as its own process, as in production: its CPU-heavy merges must not stall
// this process's event loop (and its fail-fast Redis commands).
const worker = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/social-search.js'), 'worker'], {
  env: { ...process.env, ...env, WORKER_CONCURRENCY: '2' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const intakeApp = createServer(base);
await intakeApp.ready();
const { key } = await base.keys.create({ owner: 'bench@example.com', name: 'relevance harness', scopes: ['ingest', 'search'] });

const indexed = (await base.indexAdmin.status()).find((s) => s.name === 'posts')?.docs ?? 0;
const AUTHORS = 50;
const platformIdOf = (docId: string) => `beir-${collection}-${docId}`;
const authors: unknown[] = Array.from({ length: AUTHORS }, (_, a) => ({
    kind: 'account', platform_id: `beir-author-${a}`, status: 'active', observed_at: '2026-01-01T00:00:00Z',
    handle: `beir_author_${a}`, display_name: `Author ${a}`, web_url: `https://social.example/beir_author_${a}`,
    avatar_source_url: null, biography: 'Writes about research findings.', bio_links: [], account_type: 'creator', category_label: 'Science',
    declared_locations: [], is_verified: false, is_private: false, followers_count: 1000 + a, following_count: 10, posts_count: 100,
}));

async function ingest(observations: unknown[]): Promise<void> {
  const BATCH = 250;
  for (let i = 0; i < observations.length; i += BATCH) {
    const response = await intakeApp.inject({
      method: 'POST',
      // Every batch waits: inline embedding, so the corpus is fully searchable when this ends.
      url: '/internal/v1/social/observations?wait=true',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
      payload: observations.slice(i, i + BATCH).map((o) => JSON.stringify(o)).join('\n'),
    });
    const body = response.json() as { rejected?: unknown[] };
    if (response.statusCode !== 200 || (body.rejected?.length ?? 0) > 0) throw new Error(`intake answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
    process.stderr.write(`\ringested ${Math.min(i + BATCH, observations.length)}/${observations.length}`);
  }
  process.stderr.write('\n');
}

// Authors first (idempotent: cheap to resend), so every post is servable from its first write.
await ingest(authors);
if (indexed < corpus.length) {
  const started = Date.now();
  const observations: unknown[] = [];
  corpus.forEach((doc, i) => {
    const platformId = platformIdOf(doc.id);
    observations.push({
      kind: 'post', platform_id: platformId, status: 'available', observed_at: '2026-01-02T00:00:00Z',
      shortcode: `B${i.toString(36)}`, web_url: `https://social.example/p/B${i.toString(36)}`,
      author_platform_id: `beir-author-${i % AUTHORS}`, coauthor_platform_ids: [],
      posted_at: new Date(Date.parse('2025-01-01T00:00:00Z') + i * 60_000).toISOString(),
      format: 'image', caption: `${doc.title}\n\n${doc.text}`, caption_mentions: [], comments_enabled: true,
      views: null, likes: 0, comments: 0, audio: null,
      media: [{ platform_id: `${platformId}-m`, type: 'image', width: 1080, height: 1080, source_url: `https://cdn.social.example/${platformId}.jpg`, duration_seconds: null, thumbnail_source_url: null }],
    });
  });
  await ingest(observations);
  say(`ingested ${corpus.length} documents through the intake in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
const vectors = await base.es.count({ index: `${prefix}-posts`, query: { exists: { field: 'embedding' } } });
say(`${collection}: ${corpus.length} documents, ${vectors.count} with vectors; ${queries.length} test queries`);

const docOf = new Map(corpus.map((d) => [mintId('post', platformIdOf(d.id)), d.id]));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const results: Array<Record<string, unknown>> = [];
for (const mode of modes) {
  const runtime: Runtime = createRuntime(loadConfig({ ...env, SEARCH_RANKING: mode }), logger);
  await runtime.ready();
  await runtime.embedder().ready();
  const app = createServer(runtime);
  await app.ready();
  const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json() as { checks: { embeddings: string } };
  const run = new Map<string, ScoredDoc[]>();
  const latencies: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    const response = await app.inject({
      method: 'POST',
      url: '/v1/social/posts/search',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ post: { query: query.text.slice(0, 2000) }, limit: 10 }),
    });
    latencies.push(performance.now() - started);
    if (response.statusCode !== 200) throw new Error(`search answered ${response.statusCode}: ${response.body}`);
    const data = response.json().data as Array<{ id: string }>;
    // The API returns an order, not scores: descending ranks keep it.
    run.set(query.id, data.map((p, rank) => ({ id: docOf.get(p.id)!, score: data.length - rank })));
  }
  const ndcg = meanNdcgAtK(run, qrels, { ignoreIdenticalIds: true });
  const row = {
    mode, ndcg_at_10: +ndcg.mean.toFixed(4), queries: ndcg.evaluated,
    api_p50_ms: +quantile(latencies, 0.5).toFixed(1), api_p99_ms: +quantile(latencies, 0.99).toFixed(1),
    embeddings: ready.checks.embeddings,
  };
  results.push(row);
  say(JSON.stringify(row));
  await app.close();
  await runtime.close();
}

mkdirSync(path.join(REPO_ROOT, 'bench/results'), { recursive: true });
const file = path.join(REPO_ROOT, `bench/results/relevance-${collection.toLowerCase()}.json`);
writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), collection, documents: corpus.length, with_vectors: vectors.count, model_dir: env.MODEL_DIR, dtype: base.config.EMBEDDING_DTYPE, results }, null, 2));
console.table(results.map(({ embeddings: _e, ...r }) => r));
await intakeApp.close();
worker.kill('SIGTERM');
await base.close();
