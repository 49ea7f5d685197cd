/**
 * The similarity floor as a question's search vector meets it (bench/relevance.md, "The floor of a
 * question read as a sentence"): for every weightable question of the social set (its templated
 * questions, the development set and the held-out set), the vector the service searches with
 * (src/text/question-weights.ts, readQuestion: the first of the weighing run's vectors) and its
 * nearest posts' cosines down to 0.4 (k 400, servable heads), each marked on topic or not by the
 * query's judgments. Runs on an index social.ts loaded; one JSON file per run, so two builds of the
 * service (two ways of reading a question) are compared on the same index and questions:
 *
 *   npx tsx bench/relevance/question-floor.ts --seed 5 --out A.json   # on one build
 *   npx tsx bench/relevance/question-floor.ts --seed 5 --out B.json   # on the other
 *   npx tsx bench/relevance/question-floor.ts --compare A.json B.json [--floor 0.55]
 *
 * The comparison gives each reading's 2nd percentile of on-topic cosines in the first 50 (the rule
 * the model's floor was calibrated by, src/embedding/model-floors.ts) on the tuning questions
 * (templated and development sets), the floor for B at which it sits where A's floor sits in that
 * distribution, and for every set the posts above each floor and the on-topic share of them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { generateObservations, seedPostLabels } from '../../src/seed/generator.ts';
import { readQuestion, weightableTerms } from '../../src/text/question-weights.ts';
import { benchLogger, countPosts, harnessEnv, harnessRuntime } from '../lib/in-process-service.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';
import { socialQuerySet } from './social-set.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
    seed: { type: 'int', default: 5, min: 0 },
    out: { type: 'string' },
    compare: { type: 'boolean' },
    floor: { type: 'number', default: 0.55 },
  },
  positionals: [
    { name: 'fileA', type: 'string', optional: true },
    { name: 'fileB', type: 'string', optional: true },
  ],
});

/** Per question: its kind and the cosines of its nearest posts, each with whether it is on topic. */
type Neighbours = Record<string, { kind: string; near: Array<[number, 0 | 1]> }>;

const KINDS = new Set(['question', 'dev', 'paraphrase']);
const TUNING = new Set(['question', 'dev']);

async function collect(out: string): Promise<void> {
  const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
  const prefix = `relevance-social-${size.seed}-${size.posts}`;
  const runtime = harnessRuntime(harnessEnv(prefix), benchLogger());
  try {
    await runtime.ready();
    await runtime.embedder.ready();
    const observations = [...generateObservations(size)];
    const servable = await runtime.es.search({
      index: `${prefix}-posts`,
      query: { term: { servable: true } },
      size: 10_000,
      _source: false,
    });
    if ((await countPosts(runtime)).servable === 0) throw new Error(`no servable posts under ${prefix}: run social.ts`);
    const ids = new Set(servable.hits.hits.map((h) => h._id!));
    const queries = socialQuerySet(observations, ids, seedPostLabels(size)).filter(
      (q) => KINDS.has(q.kind) && weightableTerms(q.text) !== null,
    );
    const result: Neighbours = {};
    for (const q of queries) {
      const read = await readQuestion(q.text, (texts) => runtime.embedder.embedQueriesTogether(texts));
      if (!read) continue;
      const response = await runtime.es.search({
        index: `${prefix}-post-vectors`,
        knn: {
          field: 'embedding',
          query_vector: Array.from(read.vector),
          k: 400,
          num_candidates: 800,
          filter: [{ term: { servable: true } }],
        },
        size: 400,
        _source: false,
      });
      const near = response.hits.hits
        .map(
          (h) => [+(2 * (h._score ?? 0) - 1).toFixed(4), (q.judgments.get(h._id!) ?? 0) > 0 ? 1 : 0] as [number, 0 | 1],
        )
        .filter(([c]) => c >= 0.4);
      result[q.id] = { kind: q.kind, near };
    }
    writeFileSync(out, `${JSON.stringify({ seed: size.seed, prefix, questions: result })}\n`);
    process.stdout.write(`${Object.keys(result).length} questions → ${out}\n`);
  } finally {
    await runtime.close();
  }
}

/** The 2nd percentile of on-topic cosines within each question's first 50, over the tuning questions. */
function onTopicP02(n: Neighbours): number {
  const xs = Object.values(n)
    .filter((q) => TUNING.has(q.kind))
    .flatMap((q) =>
      q.near
        .slice(0, 50)
        .filter(([, on]) => on === 1)
        .map(([c]) => c),
    )
    .sort((a, b) => a - b);
  return quantile(xs, 0.02);
}

function above(n: Neighbours, kinds: ReadonlySet<string>, floor: number) {
  const qs = Object.values(n).filter((q) => kinds.has(q.kind));
  const counts = qs.map((q) => q.near.filter(([c]) => c >= floor).length).sort((a, b) => a - b);
  const all = qs.flatMap((q) => q.near.filter(([c]) => c >= floor));
  const on = all.filter(([, o]) => o === 1).length;
  return {
    questions: qs.length,
    median: quantile(counts, 0.5),
    posts: all.length,
    on_topic: on,
    share: +(on / all.length).toFixed(4),
  };
}

function compare(fileA: string, fileB: string): void {
  const a = (JSON.parse(readFileSync(fileA, 'utf8')) as { questions: Neighbours }).questions;
  const b = (JSON.parse(readFileSync(fileB, 'utf8')) as { questions: Neighbours }).questions;
  const floorA = args.floor;
  const pA = onTopicP02(a);
  const pB = onTopicP02(b);
  const floorB = +(floorA + (pB - pA)).toFixed(3);
  const sets = { tuning: TUNING, 'held-out': new Set(['paraphrase']) };
  const report = {
    p02_on_topic_tuning: { A: pA, B: pB },
    floor: { A: floorA, B_same_place: floorB },
    sets: Object.fromEntries(
      Object.entries(sets).map(([name, kinds]) => [
        name,
        { A: above(a, kinds, floorA), B_at_A_floor: above(b, kinds, floorA), B_at_its_floor: above(b, kinds, floorB) },
      ]),
    ),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

if (args.compare) {
  const { fileA, fileB } = args;
  if (!fileA || !fileB) throw new Error('--compare A.json B.json');
  compare(fileA, fileB);
} else {
  if (!args.out) throw new Error('--out FILE');
  await collect(args.out);
}
