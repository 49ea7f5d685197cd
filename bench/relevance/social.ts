/**
 * Relevance for social queries through the public API (bench/relevance.md, "Relevance for social
 * queries"): the demo generator's posts go in through the HTTP intake, the query set of
 * social-set.ts (entities, intents, every language, nonsense) comes back out through
 * `POST /v1/social/posts/search`, once per ranking mode.
 *
 *   npx tsx bench/relevance/social.ts [--posts 1500] [--accounts 150] [--seed 5]
 *                                     [--modes lexical,semantic,hybrid] [--reingest] [--drop]
 *                                     [--judge-enriched-only]
 *
 * Data under INDEX_PREFIX = REDIS_PREFIX = `relevance-social-<seed>-<posts>` (`--prefix` to
 * change), reused while it holds every post. Reports nDCG@10 per kind of query (and per language),
 * recall@10 of entity queries, the share of nonsense queries answered with an empty page, and the
 * cosine similarities that calibrate the relevance floor. Writes bench/results/relevance-social.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateObservations, seedPostLabels } from '../../src/seed/generator.ts';
import { rankScores } from './api-search.ts';
import { REPO_ROOT } from './beir.ts';
import {
  countPosts,
  destroyPrefix,
  forceMergePosts,
  harnessRuntime,
  startApiNode,
  loadObservations,
  type RankingMode,
  type Runtime,
  benchLogger,
  harnessEnv,
} from '../lib/in-process-service.ts';
import { ndcgAtK } from './ndcg.ts';
import { socialQuerySet, type SocialQuery } from './social-set.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';
import { relevanceFloors } from '../../src/embedding/model-floors.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
    seed: { type: 'int', default: 5, min: 0 },
    modes: { type: 'string', default: 'lexical,semantic,hybrid' },
    prefix: { type: 'string' },
    reingest: { type: 'boolean' },
    drop: { type: 'boolean' },
    'judge-enriched-only': { type: 'boolean' },
  },
});
const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
const modes = args.modes.split(',').map((m) => m.trim()) as RankingMode[];
const prefix = args.prefix ?? `relevance-social-${size.seed}-${size.posts}`;
const env = harnessEnv(prefix);
const logger = benchLogger();
const say = (line: string) => process.stdout.write(`${line}\n`);
const observations = [...generateObservations(size)];
// Posts still pending enrichment are judged by the topic their caption was written about (the
// generator's label); `--judge-enriched-only` judges them as before 2026-11-27: about nothing.
const labels = args['judge-enriched-only'] ? undefined : seedPostLabels(size);
const K = 10;

async function servableIds(base: Runtime): Promise<Set<string>> {
  const response = await base.es.search({
    index: `${prefix}-posts`,
    query: { term: { servable: true } },
    size: 10_000,
    _source: false,
  });
  return new Set(response.hits.hits.map((h) => h._id!));
}

/** Asks every query once through the API; the IDs of each answer, in order, and the latencies. */
async function ask(baseUrl: string, key: string, queries: readonly SocialQuery[]) {
  const answers = new Map<string, string[]>();
  const latencies: number[] = [];
  for (const q of queries) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/social/posts/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ post: { query: q.text }, limit: K }),
    });
    const body = (await response.json()) as { data: Array<{ id: string }> };
    latencies.push(performance.now() - started);
    if (response.status !== 200)
      throw new Error(`${q.id}: search answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
    answers.set(
      q.id,
      body.data.map((p) => p.id),
    );
  }
  return { answers, latencies: latencies.sort((a, b) => a - b) };
}

/** Kinds outside the headline nDCG: the question set and the noun phrases it is compared with. */
const ASKED_APART: ReadonlySet<SocialQuery['kind']> = new Set([
  'topic',
  'question',
  'language-question',
  'paraphrase',
  'paraphrase-topic',
  'dev',
]);

const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(4));

/** The numbers of one mode's answers. */
function score(queries: readonly SocialQuery[], answers: Map<string, string[]>) {
  const ndcg = (q: SocialQuery) => ndcgAtK(rankScores(answers.get(q.id)!), q.judgments, { k: K });
  const all = queries.filter((q) => q.kind !== 'nonsense' && q.judgments.size > 0);
  // The headline keeps its original kinds; the question set and its noun phrases are reported apart.
  const judged = all.filter((q) => !ASKED_APART.has(q.kind));
  const entities = judged.filter((q) => q.kind === 'hashtag' || q.kind === 'handle');
  const recall = (q: SocialQuery) =>
    answers.get(q.id)!.filter((id) => q.judgments.has(id)).length / Math.min(K, q.judgments.size);
  const nonsense = queries.filter((q) => q.kind === 'nonsense');
  const byKind = (kind: SocialQuery['kind']) => mean(all.filter((q) => q.kind === kind).map(ndcg));
  // Of the top-10 results of a kind's queries, the share judged nowhere near the query's niche.
  const offNiche = (kind: SocialQuery['kind']) => {
    let results = 0;
    let off = 0;
    for (const q of all.filter((x) => x.kind === kind)) {
      const ids = answers.get(q.id)!;
      results += ids.length;
      off += ids.filter((id) => !q.judgments.has(id)).length;
    }
    return results === 0 ? Number.NaN : +(off / results).toFixed(4);
  };
  const languages = [...new Set(judged.filter((q) => q.kind === 'language').map((q) => q.language!))];
  return {
    ndcg_at_10: mean(judged.map(ndcg)),
    ndcg_by_kind: {
      hashtag: byKind('hashtag'),
      handle: byKind('handle'),
      intent: byKind('intent'),
      language: byKind('language'),
    },
    questions: {
      ndcg_topic_as_noun_phrase: byKind('topic'),
      ndcg_topic_as_question: byKind('question'),
      ndcg_language_hook: byKind('language'),
      ndcg_language_question: byKind('language-question'),
      off_niche_share: {
        topic: offNiche('topic'),
        question: offNiche('question'),
        language: offNiche('language'),
        language_question: offNiche('language-question'),
      },
      ratio: +(byKind('question') / byKind('topic')).toFixed(3),
      worst_questions: all
        .filter((q) => q.kind === 'question')
        .map((q) => ({
          text: q.text,
          ndcg: +ndcg(q).toFixed(3),
          off: answers.get(q.id)!.filter((id) => !q.judgments.has(id)).length,
        }))
        .sort((a, b) => b.off - a.off)
        .slice(0, 8),
      queries: {
        question: all.filter((q) => q.kind === 'question').length,
        language_question: all.filter((q) => q.kind === 'language-question').length,
      },
    },
    // The held-out set (paraphrase-set.ts), never used to choose anything.
    paraphrases: {
      ndcg_question: byKind('paraphrase'),
      ndcg_noun_phrase: byKind('paraphrase-topic'),
      ratio: +(byKind('paraphrase') / byKind('paraphrase-topic')).toFixed(3),
      off_niche_share: { question: offNiche('paraphrase'), noun_phrase: offNiche('paraphrase-topic') },
      queries: all.filter((q) => q.kind === 'paraphrase').length,
    },
    // The development set (dev-question-set.ts): the same topics asked otherwise, for tuning.
    dev_questions: {
      ndcg_question: byKind('dev'),
      ratio: +(byKind('dev') / byKind('paraphrase-topic')).toFixed(3),
      off_niche_share: offNiche('dev'),
      queries: all.filter((q) => q.kind === 'dev').length,
    },
    ndcg_by_language: Object.fromEntries(
      languages.map((l) => [l, mean(judged.filter((q) => q.language === l && q.kind === 'language').map(ndcg))]),
    ),
    entity_recall_at_10: mean(entities.map(recall)),
    entity_queries_with_full_recall: `${entities.filter((q) => recall(q) === 1).length}/${entities.length}`,
    nonsense_empty_share: mean(nonsense.map((q) => (answers.get(q.id)!.length === 0 ? 1 : 0))),
    nonsense_results_mean: mean(nonsense.map((q) => answers.get(q.id)!.length)),
    queries: { judged: judged.length, entity: entities.length, nonsense: nonsense.length },
    // Per query, for paired tests between runs (bench/relevance/compare-runs.ts).
    per_query_ndcg_at_10: Object.fromEntries(all.map((q) => [q.id, +ndcg(q).toFixed(6)])),
    per_query_off_niche: Object.fromEntries(
      all
        .filter((q) => ASKED_APART.has(q.kind))
        .map((q) => [q.id, answers.get(q.id)!.filter((id) => !q.judgments.has(id)).length]),
    ),
  };
}

/**
 * The floor's calibration data: the cosine similarity of judged-relevant posts in each intent and
 * English-language query's kNN window, and the best neighbour's similarity for each nonsense query.
 */
async function calibration(runtime: Runtime, queries: readonly SocialQuery[]) {
  const relevant: number[] = [];
  const nonsenseTop: number[] = [];
  for (const q of queries) {
    if (!(q.kind === 'intent' || q.kind === 'nonsense' || (q.kind === 'language' && q.language === 'en'))) continue;
    const vector = Array.from(await runtime.embedder.embedQuery(q.text));
    // Unreadable to the model (src/embedding): no vector, no neighbour at all.
    if (vector.length === 0) {
      if (q.kind === 'nonsense') nonsenseTop.push(-1);
      continue;
    }
    // The posts' vectors (with `servable`) are in their own index.
    const response = await runtime.es.search({
      index: `${prefix}-post-vectors`,
      knn: {
        field: 'embedding',
        query_vector: vector,
        k: 50,
        num_candidates: 100,
        filter: [{ term: { servable: true } }],
      },
      size: 50,
      _source: false,
    });
    const cosines = response.hits.hits.map((h) => ({ id: h._id!, cosine: 2 * (h._score ?? 0) - 1 }));
    if (q.kind === 'nonsense') nonsenseTop.push(cosines[0]?.cosine ?? -1);
    else for (const c of cosines) if ((q.judgments.get(c.id) ?? 0) > 0) relevant.push(c.cosine);
  }
  relevant.sort((a, b) => a - b);
  nonsenseTop.sort((a, b) => a - b);
  const at = (xs: number[], p: number) => +xs[Math.floor(p * (xs.length - 1))]!.toFixed(3);
  return {
    relevant_in_knn_window: relevant.length,
    relevant_p01: at(relevant, 0.01),
    relevant_p05: at(relevant, 0.05),
    relevant_p50: at(relevant, 0.5),
    nonsense_top_cosine_max: at(nonsenseTop, 1),
    nonsense_top_cosine_p50: at(nonsenseTop, 0.5),
  };
}

/** Loads the dataset when the prefix lacks it, asks every mode, writes the report. */
async function measure(base: Runtime): Promise<void> {
  await base.indexAdmin.apply();
  const created = await base.keys.create({
    owner: 'bench@example.com',
    name: 'social relevance',
    scopes: ['ingest', 'search'],
  });
  try {
    const postCount = observations.filter((o) => o['kind'] === 'post').length;
    if ((await countPosts(base)).total < postCount) {
      say(`loading ${observations.length} observations (${postCount} posts, seed ${size.seed}) under ${prefix}`);
      await loadObservations(base, logger, created.key, observations);
      await forceMergePosts(base);
    }
    const counts = await countPosts(base);
    const queries = socialQuerySet(observations, await servableIds(base), labels);
    say(`${counts.servable} servable posts, ${counts.withVectors} with vectors; ${queries.length} queries`);

    const results: Array<Record<string, unknown>> = [];
    let floor: Awaited<ReturnType<typeof calibration>> | null = null;
    for (const mode of modes) {
      const runtime = harnessRuntime(env, logger, { SEARCH_RANKING: mode, RATE_LIMIT_SEARCH_PER_MINUTE: '1000000' });
      try {
        const node = await startApiNode(runtime);
        try {
          const { answers, latencies } = await ask(node.baseUrl, created.key, queries);
          results.push({
            mode,
            ...score(queries, answers),
            api_p50_ms: +quantile(latencies, 0.5).toFixed(1),
            readyz_embeddings: node.embeddings,
          });
          if (mode !== 'lexical' && !floor) floor = await calibration(runtime, queries);
        } finally {
          await node.close();
        }
      } finally {
        await runtime.close();
      }
    }
    const file = path.resolve(REPO_ROOT, process.env['SOCIAL_RESULTS'] ?? 'bench/results/relevance-social.json');
    mkdirSync(path.dirname(file), { recursive: true });
    const report = {
      date: new Date().toISOString(),
      script: 'bench/relevance/social.ts',
      dataset: size,
      prefix,
      similarity_floor: relevanceFloors(base.config),
      counts,
      results,
      floor_calibration: floor,
    };
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    const brief = results.map(({ per_query_ndcg_at_10: _n, per_query_off_niche: _o, ...rest }) => rest);
    say(JSON.stringify({ results: brief, floor_calibration: floor }, null, 2));
  } finally {
    await base.keys.revoke(created.id).catch(() => undefined);
  }
}

const base = harnessRuntime(env, logger);
try {
  if (!(await base.ready())) throw new Error('Redis is unreachable (bash scripts/services.sh start)');
  if (args.drop || args.reingest) await destroyPrefix(base);
  if (args.drop) say(`dropped the indices, templates and Redis keys under ${prefix}`);
  else await measure(base);
} catch (error) {
  process.exitCode = 1;
  process.stderr.write(`social relevance failed: ${(error as Error).stack ?? String(error)}\n`);
} finally {
  await base.close();
}
