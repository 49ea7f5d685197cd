/**
 * Relevance through the public product path: a BEIR collection goes in through the HTTP intake
 * (`POST /internal/v1/social/observations`), every test query comes back out through
 * `POST /v1/social/posts/search`, and nDCG@10 is computed exactly as pytrec_eval's `ndcg_cut.10`
 * (ndcg.ts). One API node per ranking mode (config `SEARCH_RANKING`) answers over the same data.
 *
 *   npx tsx bench/relevance/harness.ts [--modes lexical,semantic,hybrid] [--collection DIR]
 *                                      [--queries N] [--reingest] [--force-merge] [--prefix NAME]
 *   npx tsx bench/relevance/harness.ts --drop [--collection DIR] [--prefix NAME]
 *
 * The data stays under INDEX_PREFIX = REDIS_PREFIX = `relevance-harness-<collection>` (or
 * `--prefix`) and is reused while it holds the whole corpus; `--reingest` drops and reloads it,
 * `--drop` only drops it. `--force-merge` merges the posts index into one segment before measuring
 * (exact BM25 statistics; see deletedPosts in bench/lib/in-process-service.ts).
 * Embeddings use MODEL_DIR (default: the model `npm start` uses, bench/lib/model.ts; EMBEDDINGS=off
 * for BM25 only). Writes bench/results/relevance-<collection>.json; prints a table.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseObservation } from '../../src/contract/observations.ts';
import { askQueries, type BeirQuery } from './api-search.ts';
import { loadCorpus, loadQrels, loadQueries, REPO_ROOT, scifactDir, type BeirDoc } from './beir.ts';
import {
  authorObservations,
  DEFAULT_AUTHORS,
  postObservation,
  postServiceId,
  postShortcode,
} from './beir-observations.ts';
import {
  countPosts,
  deletedPosts,
  destroyPrefix,
  embeddingsServe,
  forceMergePosts,
  harnessRuntime,
  sendObservations,
  startApiNode,
  startLoader,
  waitForQueueIdle,
  type Loader,
  type RankingMode,
  benchLogger,
  harnessEnv,
} from '../lib/in-process-service.ts';
import { meanNdcgAtK, type Qrels } from './ndcg.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';

const MODES: readonly RankingMode[] = ['lexical', 'semantic', 'hybrid'];
/** Lines per intake request: a tenth of the contract's 5,000, one worker job each (OBSERVATIONS_PER_JOB). */
const BATCH = 500;
const K = 10;
const QUEUE_TIMEOUT_MS = 60 * 60_000;

const args = cli({
  options: {
    modes: { type: 'string', default: MODES.join(',') },
    collection: { type: 'string' },
    queries: { type: 'string' },
    reingest: { type: 'boolean' },
    prefix: { type: 'string' },
    drop: { type: 'boolean' },
    'force-merge': { type: 'boolean' },
  },
});
const modes = args.modes
  .split(',')
  .map((m) => m.trim())
  .filter(Boolean) as RankingMode[];
for (const mode of modes)
  if (!MODES.includes(mode)) throw new Error(`--modes: unknown mode ${mode} (expected ${MODES.join(', ')})`);
const queryLimit = args.queries === undefined ? Infinity : Number(args.queries);
if (queryLimit !== Infinity && !(Number.isInteger(queryLimit) && queryLimit >= 1))
  throw new Error('--queries: expected a positive integer');

const collectionDir = path.resolve(args.collection ?? scifactDir());
const collection = path
  .basename(collectionDir)
  .toLowerCase()
  .replace(/[^a-z0-9]+/g, '-')
  .replace(/^-+|-+$/g, '');
// Not `relevance-<collection>`: bench/relevance/api-harness.ts owns that prefix, and a --reingest
// here must never drop another script's data.
const prefix = args.prefix ?? `relevance-harness-${collection}`;
// Hundreds of queries per minute from one key are the point here, not abuse.
const env = harnessEnv(prefix, { RATE_LIMIT_SEARCH_PER_MINUTE: '1000000' });
const logger = benchLogger();
const say = (line: string) => process.stdout.write(`${line}\n`);
// Progress redraws one terminal line; piped into a file it would be thousands of lines of noise.
const progress = (line: string) => void (process.stderr.isTTY && process.stderr.write(`\r${line}\x1b[K`));
const seconds = (ms: number) => +(ms / 1000).toFixed(1);

// --- the collection ------------------------------------------------------------------------
const corpus = await loadCorpus(collectionDir);
const qrels = await loadQrels(collectionDir, 'test');
const queryTexts = await loadQueries(collectionDir);
const unknownQueries = [...qrels.keys()].filter((id) => !queryTexts.has(id));
if (unknownQueries.length > 0)
  say(`warning: ${unknownQueries.length} qrels queries are missing from queries.jsonl and are not asked`);
const queries: BeirQuery[] = [...queryTexts]
  .filter(([id]) => qrels.has(id))
  .slice(0, queryLimit)
  .map(([id, text]) => ({ id, text }));
// Only the asked queries are averaged: with --queries N the rest would otherwise count as zeros.
const askedQrels: Qrels = new Map(queries.map((q) => [q.id, qrels.get(q.id)!]));
const docOf = new Map(
  corpus.map((d) => [postServiceId(collection, d.id), { docId: d.id, shortcode: postShortcode(collection, d.id) }]),
);
if (docOf.size !== corpus.length) throw new Error('duplicate document ids in corpus.jsonl');

/** The observations of the collection, checked locally first so a bad line fails before any load. */
function observationsOf(docs: readonly BeirDoc[]) {
  const authors = authorObservations({ collection, authors: DEFAULT_AUTHORS });
  const posts = docs.map((doc) => postObservation(doc, { collection, authors: DEFAULT_AUTHORS }));
  for (const observation of [...authors, ...posts]) {
    const parsed = parseObservation(observation);
    if (!parsed.ok) throw new Error(`observation ${String(observation['platform_id'])} is invalid: ${parsed.detail}`);
  }
  return { authors, posts };
}

/**
 * Loads the corpus through the intake; resolves when every post is indexed and visible. Embedding
 * jobs stay held (see Loader.holdEmbeddings): the caller lets them run when it needs the vectors.
 */

/** One ranking mode's figures, as written to bench/results and printed. */
interface ModeResult {
  mode: string;
  ndcg_at_10: number;
  queries_evaluated: number;
  queries_asked: number;
  queries_truncated: number;
  api_p50_ms: number;
  api_p99_ms: number;
  bm25_fallback: boolean;
  readyz_embeddings: string;
}

async function ingest(loader: Loader, key: string): Promise<{ seconds: number; perSecond: number }> {
  const { authors, posts } = observationsOf(corpus);
  // Authors first and waited for, so every post is servable from its first write.
  await sendObservations(loader.node, key, authors, { wait: true });
  const started = performance.now();
  for (let i = 0; i < posts.length; i += BATCH) {
    // Queued only (202): the worker indexes while the rest is sent. No batch waits, because a
    // waited batch embeds its posts inline, on the critical path.
    await sendObservations(loader.node, key, posts.slice(i, i + BATCH), { wait: false });
    progress(`intake: sent ${Math.min(i + BATCH, posts.length)}/${posts.length} posts`);
  }
  await waitForQueueIdle(loader.node.runtime.queue, {
    timeoutMs: QUEUE_TIMEOUT_MS,
    onProgress: (n) => progress(`intake: ${n} observation job(s) pending`),
  });
  // The documented wait: a ?wait=true request answers once its job has refreshed the indices,
  // which makes every earlier (already completed) job visible too. An unchanged author is a no-op
  // merge, so the request costs one refresh.
  await sendObservations(loader.node, key, authors.slice(0, 1), { wait: true });
  const elapsed = performance.now() - started;
  if (process.stderr.isTTY) process.stderr.write('\n');
  return { seconds: seconds(elapsed), perSecond: Math.round(posts.length / (elapsed / 1000)) };
}

/** Waits until the worker has embedded what it queued (vectors are written behind the intake). */
async function awaitEmbeddings(loader: Loader, key: string): Promise<number> {
  if (!loader.embeddingQueue) return 0;
  await loader.holdEmbeddings(false);
  const started = performance.now();
  await waitForQueueIdle(loader.embeddingQueue, {
    timeoutMs: QUEUE_TIMEOUT_MS,
    onProgress: (n) =>
      progress(`embeddings: ${n} job(s) pending, ${Math.round((performance.now() - started) / 1000)} s`),
  });
  await sendObservations(loader.node, key, authorObservations({ collection }).slice(0, 1), { wait: true });
  if (process.stderr.isTTY) process.stderr.write('\n');
  return seconds(performance.now() - started);
}

function gitState(): { commit: string | null; dirty: boolean | null } {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty };
  } catch {
    return { commit: null, dirty: null };
  }
}

// --- load ----------------------------------------------------------------------------------
const base = harnessRuntime(env, logger);
if (args.drop) {
  await base.ready();
  await destroyPrefix(base);
  await base.close();
  say(`dropped the indices, templates and Redis keys under ${prefix}`);
  process.exit(0);
}
let keyId: string | null = null;
try {
  if (!(await base.ready()))
    throw new Error(`Redis at ${base.config.REDIS_URL} is unreachable (bash scripts/services.sh start)`);
  if (args.reingest) {
    say(`--reingest: dropping indices and Redis keys under ${prefix}`);
    await destroyPrefix(base);
  }
  await base.indexAdmin.apply();
  const created = await base.keys.create({
    owner: 'bench@example.com',
    name: 'relevance harness',
    scopes: ['ingest', 'search'],
  });
  keyId = created.id;
  const key = created.key;

  const before = await countPosts(base);
  if (before.total > corpus.length)
    throw new Error(
      `${prefix}-posts holds ${before.total} posts for ${corpus.length} documents; rerun with --reingest`,
    );
  const mustIngest = before.servable < corpus.length;
  const needVectors = modes.some((m) => m !== 'lexical');

  // Lexical-only runs hold embedding jobs throughout: they stay queued in Redis for the next run
  // that needs vectors, instead of competing with indexing and the measured searches for the CPU.
  const loader = await startLoader(base, logger, { holdEmbeddings: true });
  let ingestion: { seconds: number; perSecond: number } | null = null;
  let embeddingWait = 0;
  try {
    if (mustIngest) {
      say(
        `${collection}: loading ${corpus.length} documents through the intake under ${prefix} (${before.servable} already servable)`,
      );
      ingestion = await ingest(loader, key);
      say(
        `ingested ${corpus.length} posts in ${ingestion.seconds} s (${ingestion.perSecond} posts/s through the intake, indexed and visible)`,
      );
    } else {
      say(
        `${collection}: ${prefix} already holds all ${corpus.length} documents; not ingesting (--reingest to reload)`,
      );
    }
    if (needVectors) embeddingWait = await awaitEmbeddings(loader, key);
  } finally {
    await loader.close();
  }

  if (args['force-merge']) {
    const started = performance.now();
    await forceMergePosts(base);
    say(`force-merged ${prefix}-posts into one segment in ${seconds(performance.now() - started)} s`);
  }
  const deleted = await deletedPosts(base);
  if (deleted > 0) {
    say(
      `note: ${deleted} deleted post copies still count in BM25 statistics; lexical nDCG can differ by ~0.002 from a fresh load (--force-merge for exact statistics)`,
    );
  }
  const counts = await countPosts(base);
  if (counts.servable !== corpus.length)
    throw new Error(`${counts.servable} of ${corpus.length} posts are servable after loading`);
  say(`${counts.servable} servable posts, ${counts.withVectors} with vectors; ${queries.length} test queries`);
  if (needVectors && counts.withVectors < corpus.length) {
    say(
      `warning: only ${counts.withVectors}/${corpus.length} posts have vectors: semantic and hybrid see a partial index (--reingest with a model to fix)`,
    );
  }

  // --- measure -----------------------------------------------------------------------------
  const results: ModeResult[] = [];
  const perQuery: Record<string, Record<string, number>> = {};
  for (const mode of modes) {
    const runtime = harnessRuntime(env, logger, { SEARCH_RANKING: mode });
    try {
      const node = await startApiNode(runtime);
      try {
        const asked = await askQueries(node, key, queries, docOf, {
          limit: K,
          onProgress: (n) => progress(`${mode}: ${n}/${queries.length} queries`),
        });
        if (process.stderr.isTTY) process.stderr.write('\n');
        const ndcg = meanNdcgAtK(asked.run, askedQrels, { k: K, ignoreIdenticalIds: true });
        const sorted = [...asked.latenciesMs].sort((a, b) => a - b);
        const fallback = mode !== 'lexical' && !embeddingsServe(node.embeddings);
        if (fallback)
          say(`note: /readyz reports no embeddings (${node.embeddings}); the ${mode} numbers are BM25 fallbacks`);
        perQuery[mode] = Object.fromEntries([...ndcg.perQuery].map(([id, v]) => [id, +v.toFixed(6)]));
        results.push({
          mode,
          ndcg_at_10: +ndcg.mean.toFixed(4),
          queries_evaluated: ndcg.evaluated,
          queries_asked: queries.length,
          queries_truncated: asked.truncated,
          api_p50_ms: +quantile(sorted, 0.5).toFixed(1),
          api_p99_ms: +quantile(sorted, 0.99).toFixed(1),
          bm25_fallback: fallback,
          readyz_embeddings: node.embeddings,
        });
      } finally {
        await node.close();
      }
    } finally {
      await runtime.close();
    }
  }

  // --- report ------------------------------------------------------------------------------
  const file = path.join(REPO_ROOT, `bench/results/relevance-${collection}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        script: 'bench/relevance/harness.ts',
        git: gitState(),
        collection,
        collection_dir: collectionDir,
        protocol: `nDCG@${K} as pytrec_eval ndcg_cut.${K}; self-matches dropped; limit ${K}; scores = API rank order`,
        counts: {
          documents: corpus.length,
          authors: DEFAULT_AUTHORS,
          qrels_queries: qrels.size,
          queries_asked: queries.length,
          posts_servable: counts.servable,
          posts_with_vectors: counts.withVectors,
          // Lucene counts these in BM25 statistics until merged away (see --force-merge).
          deleted_post_copies: deleted,
        },
        ingestion: ingestion
          ? {
              skipped: false,
              seconds: ingestion.seconds,
              posts_per_second: ingestion.perSecond,
              embedding_wait_seconds: embeddingWait,
            }
          : { skipped: true, embedding_wait_seconds: embeddingWait },
        config: {
          index_prefix: prefix,
          force_merged: args['force-merge'],
          model_dir: base.config.MODEL_DIR ?? null,
          model_id: base.config.MODEL_ID ?? null,
          embeddings: base.config.EMBEDDINGS,
          dtype: base.config.EMBEDDING_DTYPE,
          node_env: base.config.NODE_ENV,
        },
        results,
        per_query_ndcg_at_10: perQuery,
      },
      null,
      2,
    )}\n`,
  );
  say('');
  say('| mode | nDCG@10 | queries evaluated | API p50 ms | API p99 ms |');
  say('|---|---:|---:|---:|---:|');
  for (const r of results) {
    say(
      `| ${r.mode}${r.bm25_fallback ? ' (BM25 fallback)' : ''} | ${r.ndcg_at_10.toFixed(4)} | ${r.queries_evaluated} | ${r.api_p50_ms} | ${r.api_p99_ms} |`,
    );
  }
  say(`\nwrote ${path.relative(REPO_ROOT, file)}`);
} catch (error) {
  process.exitCode = 1;
  process.stderr.write(`\nrelevance harness failed: ${(error as Error).stack ?? String(error)}\n`);
} finally {
  if (keyId) await base.keys.revoke(keyId).catch(() => undefined);
  await base.close();
}
