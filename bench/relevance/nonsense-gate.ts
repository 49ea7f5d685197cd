/**
 * Whether a model's cosines tell nonsense from relevant posts (bench/relevance.md, "Other models:
 * e5-small-v2 and bge-small-en-v1.5"), offline on a social set already loaded by
 * `social.ts` (its vector index): for the set's meaning queries (intents, topics, questions, the
 * held-out questions), the cosines of their relevant posts among their 50 nearest; for its nonsense
 * queries, their nearest post's. Three readings of the same vectors:
 *
 * - `raw`: the cosine the similarity floor reads (`SEARCH_SIMILARITY_FLOOR`);
 * - `centered`: both vectors less the corpus's mean post vector, then normalised (a fix for models
 *   whose vectors share one direction, "all-but-the-top");
 * - `z`: the nearest post's cosine as a z-score among the query's cosines to every post (how far the
 *   best stands out), per query.
 *
 * A reading separates when the nonsense's values sit below nearly all relevant ones. Beside them,
 * how many queries of each kind no post carries a content word of, even corrected (the service's
 * own reading, query-terms.ts `planLexicalSide`): the queries `SEARCH_SIMILARITY_FLOOR_UNMATCHED`
 * holds to a higher floor.
 *
 *   MODEL_DIR=… npx tsx bench/relevance/nonsense-gate.ts --prefix relevance-social-5-1500 [--seed 5 --posts 1500 --accounts 150]
 */
import { Client } from '@elastic/elasticsearch';
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { planLexicalSide } from '../../src/engine/elasticsearch/queries/query-terms.ts';
import { analyzeQuery } from '../../src/text/languages.ts';
import { generateObservations, seedPostLabels } from '../../src/seed/generator.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';
import { MODEL_DIR } from '../lib/model.ts';
import { socialQuerySet } from './social-set.ts';

const args = cli({
  options: {
    prefix: { type: 'string' },
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
    seed: { type: 'int', default: 5, min: 0 },
  },
});
const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
const prefix = args.prefix ?? `relevance-social-${size.seed}-${size.posts}`;
const MEANING = new Set(['intent', 'topic', 'question', 'paraphrase', 'paraphrase-topic']);
const WINDOW = 50;

const config = loadConfig({ ...process.env, MODEL_DIR, EMBEDDINGS: 'on' });
const es = new Client({ node: config.ELASTICSEARCH_URL });

/** Every post vector of the prefix's vector index, by post ID. */
async function postVectors(): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  let page = await es.search({
    index: `${prefix}-post-vectors`,
    size: 1000,
    scroll: '1m',
    docvalue_fields: ['embedding'],
    _source: false,
  });
  while (page.hits.hits.length > 0) {
    for (const hit of page.hits.hits) {
      const vector = (hit.fields?.['embedding'] as number[][] | undefined)?.[0];
      if (vector) out.set(hit._id!, Float32Array.from(vector));
    }
    page = await es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
  }
  await es.clearScroll({ scroll_id: page._scroll_id! });
  return out;
}

/** Whether the service finds no word of `text` in any post, even corrected (query-terms.ts, the unmatched floor's test). */
async function unmatched(text: string): Promise<boolean> {
  const plan = await planLexicalSide(es, `${prefix}-posts`, text, analyzeQuery(text).language);
  return plan.unmatched === true;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, j) => sum + value * b[j]!, 0);

/** `v` less `mean`, normalised. */
function centered(v: Float32Array, mean: Float64Array): Float32Array {
  const out = Float32Array.from(v, (value, j) => value - mean[j]!);
  const norm = Math.hypot(...out);
  return out.map((value) => value / norm);
}

const docs = await postVectors();
if (docs.size === 0) throw new Error(`no post vectors under ${prefix}: load it with social.ts first`);
const dimensions = docs.values().next().value!.length;
const mean = new Float64Array(dimensions);
for (const v of docs.values()) v.forEach((value, j) => (mean[j]! += value / docs.size));
const docsCentered = new Map([...docs].map(([id, v]) => [id, centered(v, mean)]));

const queries = socialQuerySet([...generateObservations(size)], new Set(docs.keys()), seedPostLabels(size)).filter(
  (q) => q.kind === 'nonsense' || MEANING.has(q.kind),
);
const NONSENSE_COUNT = queries.filter((q) => q.kind === 'nonsense').length;
const embedder = createEmbedder(config);
await embedder.ready();
const relevant = { raw: [] as number[], centered: [] as number[] };
const nonsense = { raw: [] as number[], centered: [] as number[] };
const z = { meaning: [] as number[], nonsense: [] as number[] };
const unmatchedQueries = { meaning: 0, nonsense: 0 };
let unreadable = 0;
for (const q of queries) {
  if (await unmatched(q.text)) unmatchedQueries[q.kind === 'nonsense' ? 'nonsense' : 'meaning']++;
  const vector = await embedder.embedQuery(q.text);
  if (vector.length === 0) {
    unreadable++;
    continue;
  }
  for (const reading of ['raw', 'centered'] as const) {
    const qv = reading === 'raw' ? vector : centered(vector, mean);
    const scored = [...(reading === 'raw' ? docs : docsCentered)]
      .map(([id, d]) => ({ id, cosine: dot(qv, d) }))
      .sort((a, b) => b.cosine - a.cosine);
    if (q.kind === 'nonsense') nonsense[reading].push(scored[0]!.cosine);
    else for (const hit of scored.slice(0, WINDOW)) if (q.judgments.has(hit.id)) relevant[reading].push(hit.cosine);
    if (reading === 'raw') {
      const all = scored.map((s) => s.cosine);
      const mu = all.reduce((a, b) => a + b, 0) / all.length;
      const sd = Math.sqrt(all.reduce((a, b) => a + (b - mu) ** 2, 0) / all.length);
      z[q.kind === 'nonsense' ? 'nonsense' : 'meaning'].push((all[0]! - mu) / sd);
    }
  }
}
await embedder.close();

const at = (xs: number[], qs: number[]) =>
  Object.fromEntries(qs.map((p) => [`p${Math.round(p * 100)}`, +quantile(xs, p).toFixed(3)]));
const report = {
  model: embedder.modelId,
  prefix,
  posts: docs.size,
  unreadable_queries: unreadable,
  raw: { relevant: at(relevant.raw, [0.01, 0.05, 0.1, 0.5]), nonsense_nearest: at(nonsense.raw, [0.5, 0.9, 1]) },
  centered: {
    relevant: at(relevant.centered, [0.01, 0.05, 0.1, 0.5]),
    nonsense_nearest: at(nonsense.centered, [0.5, 0.9, 1]),
  },
  nearest_z: { meaning_queries: at(z.meaning, [0.01, 0.05, 0.1, 0.5]), nonsense: at(z.nonsense, [0.5, 0.9, 1]) },
  unmatched_queries: unmatchedQueries,
  counts: {
    relevant_in_window: relevant.raw.length,
    meaning_queries: queries.length - NONSENSE_COUNT,
    nonsense: NONSENSE_COUNT,
  },
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
