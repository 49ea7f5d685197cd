/**
 * What vector feedback, the index's statistics of a query's words and a question's word weights
 * cost a hybrid first page through the API: two API nodes on one harness index, `off` (none
 * of them) and `on` (`--compare defaults`: the service's defaults; `feedback`, `terms`, `weights`:
 * SEARCH_VECTOR_FEEDBACK, SEARCH_QUERY_TERMS or SEARCH_QUESTION_WEIGHTS alone), the same query
 * texts interleaved (off, on, on, off, …). Warm (the
 * default): each text asked once per node unmeasured first, so the query vector comes from each
 * node's cache and the model's time is not in the figures. `--cold`: no query cache, every request
 * runs the model. Wall time per request, p50 and p90, and `on`'s p50 over each node's. `--off`
 * names the nodes `on` is compared with, a comma list: `all` (the default; feedback, word
 * statistics and question weights off: a bare hybrid search) and `weights` (the question weights
 * alone off: a question searched as the service searches any query that is not one), `feedback`
 * or `terms` (vector feedback or the words' statistics alone off).
 *
 *   npx tsx bench/relevance/feedback-latency.ts [--prefix relevance-harness-scifact] [--rounds 3]
 *   npx tsx bench/relevance/feedback-latency.ts --prefix relevance-social-5-1500 --queries questions \
 *     --compare defaults --cold [--off all,weights]
 *
 * `--queries scifact` (default; bench/relevance/harness.ts loads its index), `questions` / `topics`
 * (the social set's English questions or the same topics as noun phrases; social.ts),
 * `paraphrases` (the held-out questions, paraphrase-set.ts) or `dev` (dev-question-set.ts).
 */
import { generateObservations } from '../../src/seed/generator.ts';

import { loadQrels, loadQueries, scifactDir } from './beir.ts';
import { harnessRuntime, startApiNode, type ApiNode, benchLogger, harnessEnv } from '../lib/in-process-service.ts';
import { socialQuerySet, type SocialQuery } from './social-set.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';

const args = cli({
  options: {
    prefix: { type: 'string', default: 'relevance-harness-scifact' },
    rounds: { type: 'int', default: 3, min: 1 },
    queries: { type: 'string', default: 'scifact' },
    compare: { type: 'string', default: 'defaults' },
    off: { type: 'string', default: 'all' },
    cold: { type: 'boolean' },
    seed: { type: 'int', default: 5, min: 0 },
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
  },
});
const env = harnessEnv(args.prefix);
const logger = benchLogger();
async function queryTexts(): Promise<string[]> {
  if (args.queries === 'scifact') {
    const dir = scifactDir();
    const qrels = await loadQrels(dir, 'test');
    return [...(await loadQueries(dir))].filter(([id]) => qrels.has(id)).map(([, t]) => t.slice(0, 2000));
  }
  const kinds: Record<string, SocialQuery['kind']> = { questions: 'question', paraphrases: 'paraphrase', dev: 'dev' };
  const kind = kinds[args.queries] ?? 'topic';
  const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
  const observations = [...generateObservations(size)];
  return socialQuerySet(observations, new Set())
    .filter((q) => q.kind === kind)
    .map((q) => q.text);
}
const texts = await queryTexts();
const cache: Record<string, string> = args.cold ? { EMBEDDING_QUERY_CACHE_MB: '0' } : {};
const neither = { SEARCH_VECTOR_FEEDBACK: 'off', SEARCH_QUERY_TERMS: 'off', SEARCH_QUESTION_WEIGHTS: 'off' };
const COMPARED: Record<string, Record<string, string>> = {
  defaults: {},
  feedback: { ...neither, SEARCH_VECTOR_FEEDBACK: 'on' },
  terms: { ...neither, SEARCH_QUERY_TERMS: 'on' },
  weights: { ...neither, SEARCH_QUESTION_WEIGHTS: 'on' },
};
const compared = COMPARED[args.compare];
if (!compared) throw new Error(`--compare: one of ${Object.keys(COMPARED).join(', ')}`);
/**
 * The nodes `on` is compared with: `all`, every query-time addition off (a bare hybrid search);
 * `weights`, the question weights alone off (the search any query that is not a question gets);
 * `feedback`, `terms`: that addition alone off.
 */
const OFF: Record<string, Record<string, string>> = {
  all: neither,
  weights: { SEARCH_QUESTION_WEIGHTS: 'off' },
  feedback: { SEARCH_VECTOR_FEEDBACK: 'off' },
  terms: { SEARCH_QUERY_TERMS: 'off' },
};
const offNames = args.off.split(',').filter(Boolean);
for (const name of offNames) if (!OFF[name]) throw new Error(`--off: a list of ${Object.keys(OFF).join(', ')}`);
const modes = [...offNames.map((name) => `off:${name}`), 'on'];

const base = harnessRuntime(env, logger);
if (!(await base.ready())) throw new Error('Redis is unreachable');
const created = await base.keys.create({ owner: 'bench@example.com', name: 'feedback latency', scopes: ['search'] });
const nodes: Record<string, ApiNode> = {};
for (const name of offNames)
  nodes[`off:${name}`] = await startApiNode(
    harnessRuntime(env, logger, { SEARCH_RANKING: 'hybrid', ...cache, ...OFF[name] }),
  );
nodes['on'] = await startApiNode(harnessRuntime(env, logger, { SEARCH_RANKING: 'hybrid', ...cache, ...compared }));
async function ask(node: ApiNode, query: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${node.baseUrl}/v1/social/posts/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ post: { query }, limit: 10 }),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`search answered ${response.status}`);
  return performance.now() - started;
}
try {
  // Warm-up: every text once per node (its vector is then cached on that node, unless --cold).
  for (const text of texts) for (const node of Object.values(nodes)) await ask(node, text);
  const times: Record<string, number[]> = Object.fromEntries(modes.map((mode) => [mode, []]));
  for (let round = 0; round < args.rounds; round++) {
    for (const [i, text] of texts.entries()) {
      // Each text to every node, the order rotated from text to text (off, on; on, off; …).
      const shift = (i + round) % modes.length;
      const order = [...modes.slice(shift), ...modes.slice(0, shift)];
      for (const mode of order) times[mode]!.push(await ask(nodes[mode]!, text));
    }
  }
  const sortedOf = (mode: string) => [...times[mode]!].sort((a, b) => a - b);
  const onP50 = quantile(sortedOf('on'), 0.5);
  const row = (mode: string) => {
    const sorted = sortedOf(mode);
    return {
      mode,
      requests: sorted.length,
      p50_ms: +quantile(sorted, 0.5).toFixed(2),
      p90_ms: +quantile(sorted, 0.9).toFixed(2),
      on_p50_over_this: +(onP50 / quantile(sorted, 0.5)).toFixed(3),
    };
  };
  console.table(modes.map(row));
} finally {
  await base.keys.revoke(created.id).catch(() => undefined);
  for (const node of Object.values(nodes)) {
    await node.close();
    await node.runtime.close();
  }
  await base.close();
}
