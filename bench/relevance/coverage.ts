/**
 * Candidates of issue 55 part 1, offline on the indices the relevance benches load: how much of a
 * query's information a lexical hit covers (the IDF-weighted share of its content words the hit
 * matches, from the corpus's own statistics), and what the fusion does with it. Each query's
 * windows are asked with the service's builders, as bench/relevance/feedback.ts does, and every
 * candidate fuses them again.
 *
 *   SOCIAL_PREFIX=r55-social-5-1500 SCIFACT_INDEX=r55-scifact-posts npx tsx bench/relevance/coverage.ts
 *
 * Groups: the social set's headline kinds, its questions and their noun phrases (the tuning set),
 * SciFact, and the held-out paraphrased questions (paraphrase-set.ts), which are reported only.
 * `--only TEXT` runs the first variant (the baseline of every p) and those whose name has TEXT:
 * `--only "S, "` the service and the latency candidates of 2026-11-30 (bench/relevance.md, "A
 * question's first page, stage by stage").
 */
import { writeFileSync } from 'node:fs';
import { ENTITY_TIER, entityTier } from '../../src/engine/elasticsearch/queries/entity-query.ts';
import { FUSION_WINDOW, KNN_CANDIDATES } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { nearestPostsQuery } from '../../src/engine/elasticsearch/queries/nearest-query.ts';
import {
  POST_STEMMED_FIELDS,
  POST_TEXT_FIELDS,
  postSearchFilter,
  postSearchQuery,
} from '../../src/engine/elasticsearch/queries/post-query.ts';
import { usesVectorFeedback } from '../../src/engine/elasticsearch/reads/vector-feedback.ts';
import { byScoreThenId } from '../../src/query/fusion.ts';
import { queryEntities } from '../../src/query/entities.ts';
import { feedbackVector } from '../../src/query/relevance-feedback.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { analyzeIn, analyzeQuery } from '../../src/text/languages.ts';
import { isQuestion } from '../../src/text/question-weights.ts';
import { pairedRandomizationP } from './stats.ts';
import { cli } from '../lib/args.ts';
import { openModel } from '../lib/model.ts';
import { postVectorsOf } from '../lib/sides.ts';
import { postHeadVectors } from '../lib/model-vectors.ts';
import { K, parsed, scifactQueries, socialQueries, windowsOn, type Hit, type JudgedQuery } from './windows.ts';
import { writeResult } from '../lib/measure.ts';
import { relevanceFloors } from '../../src/embedding/model-floors.ts';

const args = cli({
  options: {
    only: { type: 'string' },
    seed: { type: 'int', default: 5, min: 0 },
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
    scifact: { type: 'boolean', default: true },
    'no-scifact': { type: 'boolean' },
    kinds: { type: 'string' },
    dump: { type: 'string' },
  },
});
const { config, embedder, es } = await openModel();
const FLOOR = relevanceFloors(config).similarity ?? -1;

interface Case extends JudgedQuery {
  search: PostSearch & { query: string };
  vector: number[];
  question: boolean;
  readable: boolean;
  /** Distinct content words, their English stems and their IDF (corpus statistics). */
  words: string[];
  idf: number[];
  df: number[];
  /** The lexical window as the service asks it (question weights when a question), and without weights. */
  lexical: Hit[];
  plainLexical: Hit[];
  semantic: Hit[];
  /** The first kNN window asked twice as deep (k 100, 200 candidates). */
  wide: Hit[];
  /** Hit id → indices of the content words it matches. */
  matched: Map<string, Set<number>>;
}

/**
 * The question weights the service used before 2026-11-29 (each content word's leave-one-out loss
 * of the model's similarity, λ 0.5), kept here to compare with: the lexical side of a question.
 */
async function leaveOneOutQuery(search: PostSearch & { query: string }, vector: number[]): Promise<unknown> {
  const { words, stems } = contentWords(search.query);
  if (!isQuestion(search.query) || words.length < 2 || words.length > 12 || vector.length === 0) return null;
  const analysis = analyzeQuery(search.query);
  if (analysis.language !== 'en' || analysis.stemmed !== analyzeIn(analysis.content, 'en')) return null;
  const without = await Promise.all(
    words.map((_, i) => embedder.embedQuery(words.filter((__, j) => j !== i).join(' '))),
  );
  const loss = without.map((v) => Math.max(0, 1 - v.reduce((s, x, i) => s + x * vector[i]!, 0)));
  const mean = loss.reduce((a, b) => a + b, 0) / loss.length;
  if (!(mean > 0)) return null;
  const weights = loss.map((l) => Math.round((0.5 + (0.5 * l) / mean) * 1000) / 1000);
  const side = (fields: string[], terms: string[]) => ({
    dis_max: {
      queries: fields.map((weighted) => {
        const [field, w] = weighted.split('^');
        return {
          bool: {
            should: terms.flatMap((t, i) =>
              t ? [{ match: { [field!]: { query: t, boost: Number(w ?? 1) * weights[i]! } } }] : [],
            ),
          },
        };
      }),
    },
  });
  return {
    bool: {
      filter: postSearchFilter(search),
      must: [{ dis_max: { queries: [side(POST_TEXT_FIELDS, words), side(POST_STEMMED_FIELDS, stems)] } }],
    },
  };
}

const { lexicalWindow, semanticWindow } = windowsOn(es);

/** The distinct content words of a query and their English stems. */
function contentWords(text: string): { words: string[]; stems: string[] } {
  const words = [...new Set(analyzeQuery(text).content.split(' ').filter(Boolean))].slice(0, 32);
  return { words, stems: words.map((w) => analyzeIn(w, 'en')) };
}

const STAT_FIELDS = [
  ['caption', 'caption_stemmed'],
  ['content_text', 'content_text_stemmed'],
] as const;
/**
 * Each content word's IDF in the corpus, as BM25 computes it (Lucene: ln(1 + (N − df + 0.5) / (df +
 * 0.5))), with df the most documents any of the two main fields has the word (or its stem) in, and
 * N the most documents with that field: a word in no post has the highest IDF.
 */
async function idfOf(index: string, words: string[], stems: string[]): Promise<{ idf: number[]; df: number[] }> {
  if (words.length === 0) return { idf: [], df: [] };
  const doc: Record<string, string> = {};
  for (const [exact, stemmed] of STAT_FIELDS) {
    doc[exact] = words.join(' ');
    doc[stemmed] = stems.filter(Boolean).join(' ');
  }
  const r = (await es.termvectors({
    index,
    doc,
    fields: STAT_FIELDS.flat(),
    term_statistics: true,
    field_statistics: true,
    positions: false,
    offsets: false,
  })) as unknown as {
    term_vectors?: Record<
      string,
      { field_statistics?: { doc_count: number }; terms?: Record<string, { doc_freq?: number }> }
    >;
  };
  const tv = r.term_vectors ?? {};
  let n = 1;
  for (const f of STAT_FIELDS.flat()) n = Math.max(n, tv[f]?.field_statistics?.doc_count ?? 0);
  const dfs = words.map((w, i) => {
    let df = 0;
    for (const [exact, stemmed] of STAT_FIELDS) {
      df = Math.max(df, tv[exact]?.terms?.[w]?.doc_freq ?? 0);
      if (stems[i]) df = Math.max(df, tv[stemmed]?.terms?.[stems[i]]?.doc_freq ?? 0);
    }
    return df;
  });
  return { idf: dfs.map((df) => Math.log(1 + (n - df + 0.5) / (df + 0.5))), df: dfs };
}

/** Which content words each of `ids` matches, on the exact fields or its stem on the stemmed ones. */
async function matchedWords(index: string, ids: string[], words: string[], stems: string[]) {
  const out = new Map<string, Set<number>>();
  if (ids.length === 0 || words.length === 0) return out;
  const probes = words.map((w, i) => ({
    bool: {
      should: [
        { multi_match: { query: w, fields: POST_TEXT_FIELDS.map((f) => f.split('^')[0]!) } },
        ...(stems[i]
          ? [{ multi_match: { query: stems[i], fields: POST_STEMMED_FIELDS.map((f) => f.split('^')[0]!) } }]
          : []),
      ],
      _name: `w${i}`,
    },
  }));
  const r = await es.search({
    index,
    query: { bool: { filter: [{ ids: { values: ids } }], should: probes } },
    size: ids.length,
    _source: false,
  });
  for (const h of r.hits.hits) {
    const names = Array.isArray(h.matched_queries) ? h.matched_queries : Object.keys(h.matched_queries ?? {});
    out.set(h._id!, new Set(names.filter((n) => /^w\d+$/.test(n)).map((n) => Number(n.slice(1)))));
  }
  return out;
}

async function makeCase(base: JudgedQuery): Promise<Case> {
  const search = parsed(base.text);
  const vector = Array.from(await embedder.embedQuery(base.text.slice(0, 2000)));
  const question = isQuestion(base.text) && queryEntities(base.text).length === 0;
  const readable = analyzeQuery(base.text).semanticReadable;
  const weighted = question ? await leaveOneOutQuery(search, vector) : null;
  const plainLexical = await lexicalWindow(base.index, postSearchQuery(search));
  const lexical = weighted ? await lexicalWindow(base.index, weighted) : plainLexical;
  const { words, stems } = contentWords(base.text);
  const { idf, df } = await idfOf(base.index, words, stems);
  const ids = [...new Set([...lexical, ...plainLexical].map((h) => h._id))];
  const matched = await matchedWords(base.index, ids, words, stems);
  const semantic = await semanticWindow(base.index, search, vector);
  const wide =
    vector.length === 0
      ? []
      : (
          await es.search({
            index: postVectorsOf(base.index),
            ...nearestPostsQuery({
              vector,
              k: 2 * FUSION_WINDOW,
              candidates: 2 * KNN_CANDIDATES,
              filter: postSearchFilter(search),
            }),
            size: 2 * FUSION_WINDOW,
            _source: false,
          })
        ).hits.hits.map((h) => ({ _id: h._id!, _score: h._score ?? 0 }));
  return {
    ...base,
    search,
    vector,
    question,
    readable,
    words,
    idf,
    df,
    lexical,
    plainLexical,
    semantic,
    wide,
    matched,
  };
}

// ---- fusion with a coverage factor (the service's fuseHybrid, with g(coverage) on the lexical share)
const cosineOf = (score: number) => 2 * score - 1;
type Coverage = (c: number) => number;
/** The share of the query's information carried by words some post has (the same for every hit). */
function knownShare(c: Case): number {
  const total = c.idf.reduce((a, b) => a + b, 0);
  if (total <= 0) return 1;
  return c.idf.reduce((a, w, i) => a + (c.df[i]! > 0 ? w : 0), 0) / total;
}
let KNOWN_ONLY = false;
function coverageOf(c: Case, id: string): number {
  if (KNOWN_ONLY) return knownShare(c);
  const total = c.idf.reduce((a, b) => a + b, 0);
  if (total <= 0) return 1;
  const m = c.matched.get(id);
  if (!m) return 0;
  let sum = 0;
  for (const i of m) sum += c.idf[i]!;
  return sum / total;
}
function fuse(
  c: Case,
  lexicalHits: Hit[],
  semanticHits: Hit[],
  g: Coverage | null,
  agreement = false,
): Array<{ id: string; score: number; lexical: number | null }> {
  const w = c.readable ? 0.5 : 1;
  const text = (h: Hit) => h._score - ENTITY_TIER * entityTier(h);
  const lexical = lexicalHits.slice(0, FUSION_WINDOW).map((h) => ({ id: h._id, score: text(h), tier: entityTier(h) }));
  const past = lexicalHits[FUSION_WINDOW];
  const lowest = lexical.reduce((m, h) => Math.min(m, h.score), Infinity);
  const floor = past ? Math.max(0, Math.min(text(past), lowest)) : 0;
  let lexMax = -Infinity;
  for (const h of lexical) lexMax = Math.max(lexMax, h.score);
  let sMin = Infinity;
  let sMax = -Infinity;
  for (const h of semanticHits) {
    sMin = Math.min(sMin, h._score);
    sMax = Math.max(sMax, h._score);
  }
  const semNorm = (s: number) => (sMax - sMin > 0 ? (s - sMin) / (sMax - sMin) : 1);
  const sem = new Map(semanticHits.map((h) => [h._id, semNorm(h._score)]));
  const out = new Map<string, { id: string; score: number; lexical: number | null; tier: number }>();
  const applies = g !== null && c.readable && queryEntities(c.text).length === 0;
  for (const h of lexical) {
    let l = lexMax > floor ? (h.score - floor) / (lexMax - floor) : 1;
    const s = sem.get(h.id) ?? null;
    // With `agreement`, the meaning side vouches for a hit as much as its normalized similarity.
    if (applies) l *= agreement ? Math.max(g(coverageOf(c, h.id)), s ?? 0) : g(coverageOf(c, h.id));
    out.set(h.id, { id: h.id, score: w * l + (1 - w) * (s ?? 0), lexical: l, tier: h.tier });
  }
  if (c.readable) {
    for (const h of semanticHits) {
      if (out.has(h._id) || cosineOf(h._score) < FLOOR) continue;
      out.set(h._id, { id: h._id, score: (1 - w) * sem.get(h._id)!, lexical: null, tier: 0 });
    }
  }
  return [...out.values()].sort((a, b) => b.tier - a.tier || byScoreThenId(a, b));
}

const vectors = new Map<string, number[]>();
async function docVectors(index: string, ids: string[]): Promise<number[][]> {
  const missing = ids.filter((id) => !vectors.has(id));
  for (const [id, vector] of await postHeadVectors(es, index, missing)) vectors.set(id, vector);
  return ids.map((id) => vectors.get(id)).filter((v): v is number[] => v !== undefined);
}

interface Options {
  /** Question weights (the model's leave-one-out) on the lexical side of questions. */
  weights: boolean;
  /** Vector feedback: for questions (the default), every readable query, or none. */
  feedback: 'questions' | 'on' | 'off';
  /** The coverage factor on the lexical share; null: none. */
  coverage: Coverage | null;
  /** Apply coverage to questions only. */
  coverageQuestionsOnly?: boolean;
  /** Feedback documents weighted by their fused score (RM3's P(D|Q)) instead of equally. */
  weightedFeedback?: boolean;
  /** Only feedback documents with lexical evidence. */
  lexicalFeedback?: boolean;
  /** A hit's coverage factor is at least its normalized similarity (the meaning side agrees). */
  agreement?: boolean;
  /** Coverage is the query's known share (information of words some post carries), the same for every hit. */
  knownOnly?: boolean;
  /** The final semantic window from the moved vector's cosine to the first windows' posts instead of a second kNN. */
  rescore?: 'knn' | 'union' | 'wide' | 'wide-union';
  /** The first fusion (the feedback's) from the unweighted lexical window; the final one from the weighted. */
  plainFirst?: boolean;
}
const DEBUG = new Set((process.env['DEBUG_IDS'] ?? '').split(',').filter(Boolean));
function debug(
  c: Case,
  label: string,
  lexical: Hit[],
  semantic: Hit[],
  fused: Array<{ id: string; score: number; lexical: number | null }>,
) {
  if (!DEBUG.has(`${c.set}:${c.id}`)) return;
  const sem = new Map(semantic.map((h) => [h._id, cosineOf(h._score)]));
  const lex = new Map(lexical.map((h, i) => [h._id, i]));
  process.stderr.write(
    `--- ${label} ${c.id}: ${c.text}\n  words ${c.words.map((w, i) => `${w}:${c.idf[i]!.toFixed(2)}`).join(' ')}\n`,
  );
  for (const f of fused.slice(0, 12))
    process.stderr.write(
      `  ${f.score.toFixed(3)} lex#${lex.get(f.id) ?? '-'} l=${f.lexical?.toFixed(2) ?? '-'} cov=${coverageOf(c, f.id).toFixed(2)} cos=${sem.get(f.id)?.toFixed(3) ?? '-'} ${c.judged(f.id) ? 'J' : '.'} ${f.id.slice(-6)} [${[...(c.matched.get(f.id) ?? [])].map((i) => c.words[i]).join(',')}]\n`,
    );
}
async function rank(c: Case, o: Options): Promise<string[]> {
  KNOWN_ONLY = o.knownOnly === true;
  const lexical = o.weights && c.question ? c.lexical : c.plainLexical;
  const g = o.coverage && (!o.coverageQuestionsOnly || c.question) ? o.coverage : null;
  const first = fuse(c, o.plainFirst ? c.plainLexical : lexical, c.semantic, g, o.agreement);
  debug(c, 'first', lexical, c.semantic, first);
  const fb =
    o.feedback !== 'off' && usesVectorFeedback(c.text, 'hybrid', c.readable, o.feedback) && c.vector.length > 0;
  if (!fb || !first.some((f) => f.lexical !== null)) return first.map((f) => f.id);
  const top = (o.lexicalFeedback ? first.filter((f) => f.lexical !== null) : first).slice(0, 3);
  await docVectors(
    c.index,
    top.map((f) => f.id),
  );
  const withVectors = top.filter((f) => vectors.has(f.id));
  if (withVectors.length === 0) return first.map((f) => f.id);
  // Weighted by the fused scores (the service since 2026-11-29) or equally (before).
  const moved = feedbackVector(
    c.vector,
    withVectors.map((f) => ({ vector: vectors.get(f.id)!, weight: o.weightedFeedback ? f.score : 1 })),
  );
  const semantic = o.rescore
    ? await rescored(c, lexical, moved, o.rescore)
    : await semanticWindow(c.index, c.search, moved);
  const final = fuse(c, lexical, semantic, g, o.agreement);
  debug(c, 'feedback', lexical, semantic, final);
  return final.map((f) => f.id);
}

async function rescored(
  c: Case,
  lexical: Hit[],
  moved: number[],
  how: NonNullable<Options['rescore']>,
): Promise<Hit[]> {
  const knn = how.startsWith('wide') ? c.wide : c.semantic;
  const pool = [
    ...new Set([
      ...knn.map((h) => h._id),
      ...(how.endsWith('union') ? lexical.slice(0, FUSION_WINDOW).map((h) => h._id) : []),
    ]),
  ];
  await docVectors(c.index, pool);
  const qn = Math.hypot(...moved);
  const out: Hit[] = [];
  for (const id of pool) {
    const v = vectors.get(id);
    if (!v || v.length !== moved.length) continue;
    let dot = 0;
    for (let i = 0; i < v.length; i++) dot += v[i]! * moved[i]!;
    out.push({ _id: id, _score: (1 + dot / (qn * Math.hypot(...v))) / 2 });
  }
  return out.sort((a, b) => b._score - a._score || (a._id < b._id ? -1 : 1)).slice(0, FUSION_WINDOW);
}

const linear: Coverage = (x) => x;
const half: Coverage = (x) => Math.min(1, 2 * x);
const H: Options = { weights: true, feedback: 'questions', coverage: half };
const S: Options = { ...H, feedback: 'on', weightedFeedback: true, agreement: true };
const variants: Array<{ name: string; o: Options }> = [
  { name: 'S: the service (A)', o: S },
  { name: 'S, the feedback from the unweighted lexical window', o: { ...S, plainFirst: true } },
  { name: 'S, rescore the first kNN window', o: { ...S, rescore: 'knn' } },
  { name: 'S, rescore the first kNN window and the lexical window', o: { ...S, rescore: 'union' } },
  { name: 'S, rescore a first kNN window of 100', o: { ...S, rescore: 'wide' } },
  { name: 'S, rescore a first kNN window of 100 and the lexical window', o: { ...S, rescore: 'wide-union' } },
  { name: 'H = coverage min(1, 2c) + weights + feedback', o: H },
  { name: 'H, feedback weighted by fused score', o: { ...H, weightedFeedback: true } },
  { name: 'H, feedback from lexical hits only', o: { ...H, lexicalFeedback: true } },
  { name: 'H, no weights, feedback weighted', o: { ...H, weights: false, weightedFeedback: true } },
  { name: 'H, feedback weighted, for every query', o: { ...H, feedback: 'on', weightedFeedback: true } },
  {
    name: 'H, no weights, feedback weighted for every query',
    o: { ...H, weights: false, feedback: 'on', weightedFeedback: true },
  },
  { name: 'H, feedback uniform, for every query', o: { ...H, feedback: 'on' } },
  {
    name: 'K: known share, weights, feedback weighted for every query',
    o: { ...H, feedback: 'on', weightedFeedback: true, knownOnly: true },
  },
  {
    name: 'K: known share or agreement, weights, feedback weighted for every query',
    o: { ...H, feedback: 'on', weightedFeedback: true, knownOnly: true, agreement: true },
  },
  {
    name: 'A: coverage or agreement, weights, feedback weighted for every query',
    o: { ...H, feedback: 'on', weightedFeedback: true, agreement: true },
  },
  {
    name: 'A: coverage or agreement, no weights, feedback weighted for every query',
    o: { ...H, weights: false, feedback: 'on', weightedFeedback: true, agreement: true },
  },
  {
    name: 'A: coverage or agreement, no weights, feedback weighted for questions',
    o: { ...H, weights: false, feedback: 'questions', weightedFeedback: true, agreement: true },
  },
  {
    name: 'A: linear coverage or agreement, no weights, feedback weighted for every query',
    o: { ...H, coverage: linear, weights: false, feedback: 'on', weightedFeedback: true, agreement: true },
  },
  {
    name: 'no weights, feedback weighted for every query, no coverage',
    o: { weights: false, feedback: 'on', coverage: null, weightedFeedback: true },
  },
  {
    name: 'no weights, feedback for questions, coverage',
    o: { weights: false, feedback: 'questions', coverage: half, weightedFeedback: true },
  },
  {
    name: 'no coverage, feedback weighted for every query, weights',
    o: { weights: true, feedback: 'on', coverage: null, weightedFeedback: true },
  },
  {
    name: 'H linear c, feedback weighted for every query, weights',
    o: { ...H, coverage: linear, feedback: 'on', weightedFeedback: true },
  },
  {
    name: 'service (LOO weights + feedback for questions)',
    o: { weights: true, feedback: 'questions', coverage: null },
  },
  { name: 'no question handling', o: { weights: false, feedback: 'off', coverage: null } },
  { name: 'feedback for questions, no weights', o: { weights: false, feedback: 'questions', coverage: null } },
  {
    name: 'coverage min(1, 2c), every query; weights + feedback',
    o: { weights: true, feedback: 'questions', coverage: half },
  },
  {
    name: 'coverage c, every query; weights + feedback',
    o: { weights: true, feedback: 'questions', coverage: linear },
  },
  {
    name: 'coverage min(1, 2c), every query; feedback, no weights',
    o: { weights: false, feedback: 'questions', coverage: half },
  },
  {
    name: 'coverage c, every query; feedback, no weights',
    o: { weights: false, feedback: 'questions', coverage: linear },
  },
  {
    name: 'coverage min(1, 2c), questions; feedback, no weights',
    o: { weights: false, feedback: 'questions', coverage: half, coverageQuestionsOnly: true },
  },
  {
    name: 'coverage c, questions; feedback, no weights',
    o: { weights: false, feedback: 'questions', coverage: linear, coverageQuestionsOnly: true },
  },
];

const kinds = args.kinds ? new Set(args.kinds.split(',')) : null;
const cases: Case[] = [];
for (const q of [
  ...(await socialQueries(es, { posts: args.posts, accounts: args.accounts, seed: args.seed })),
  ...(args['no-scifact'] ? [] : await scifactQueries()),
])
  if (q.set === 'scifact' || !kinds || kinds.has(q.kind)) cases.push(await makeCase(q));
process.stderr.write(`${cases.length} queries\n`);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const HEADLINE = new Set(['hashtag', 'handle', 'intent', 'language']);
const GROUPS: Array<[string, (c: Case) => boolean]> = [
  ['social', (c) => c.set === 'social' && HEADLINE.has(c.kind)],
  ['question', (c) => c.kind === 'question'],
  ['topic', (c) => c.kind === 'topic'],
  ['lang-question', (c) => c.kind === 'language-question'],
  ['SciFact', (c) => c.set === 'scifact'],
  ['held-out question', (c) => c.kind === 'paraphrase'],
  ['held-out noun phrase', (c) => c.kind === 'paraphrase-topic'],
];
async function measure(o: Options) {
  const ndcg = new Map<string, number>();
  const off = new Map<string, number>();
  const ranked = new Map<string, string[]>();
  for (const c of cases) {
    const ids = (await rank(c, o)).slice(0, K);
    ranked.set(`${c.set}:${c.id}`, ids);
    ndcg.set(`${c.set}:${c.id}`, c.ndcg(ids));
    off.set(`${c.set}:${c.id}`, ids.filter((id) => !c.judged(id)).length / Math.max(1, ids.length));
  }
  return { ndcg, off, ranked };
}
const rows: Array<Record<string, string | number>> = [];
let base: Awaited<ReturnType<typeof measure>> | null = null;
const dumps: Record<string, unknown> = {};
for (const v of variants.filter((x, i) => i === 0 || !args.only || x.name.includes(args.only))) {
  const run = await measure(v.o);
  base ??= run;
  const row: Record<string, string | number> = { variant: v.name };
  for (const [group, member] of GROUPS) {
    const keys = cases.filter(member).map((c) => `${c.set}:${c.id}`);
    if (keys.length === 0) continue;
    const pick = (m: Map<string, number>) => new Map(keys.map((k) => [k, m.get(k)!]));
    row[group] = +mean(keys.map((k) => run.ndcg.get(k)!)).toFixed(4);
    if (run !== base) row[`${group} p`] = +pairedRandomizationP(pick(run.ndcg), pick(base.ndcg)).toFixed(3);
  }
  row['q/t'] = +((row['question'] as number) / (row['topic'] as number)).toFixed(3);
  row['q off'] = +mean(cases.filter((c) => c.kind === 'question').map((c) => run.off.get(`${c.set}:${c.id}`)!)).toFixed(
    3,
  );
  row['held-out q/t'] = +((row['held-out question'] as number) / (row['held-out noun phrase'] as number)).toFixed(3);
  row['held-out off'] = +mean(
    cases.filter((c) => c.kind === 'paraphrase').map((c) => run.off.get(`${c.set}:${c.id}`)!),
  ).toFixed(3);
  rows.push(row);
  if (args.dump) dumps[v.name] = Object.fromEntries(run.ranked);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}
writeResult('coverage.json', { date: new Date().toISOString(), rows });
if (args.dump) writeFileSync(args.dump, JSON.stringify(dumps));
console.table(rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.endsWith(' p')))));
await embedder.close();
