/**
 * Pseudo-relevance feedback and the other candidates of issue 31 part 4, offline on the indices the
 * two relevance benches load (bench/relevance.md, "Pseudo-relevance feedback on the query vector"):
 * each query's two windows are asked once with the service's own builders (BM25 51 long, kNN 50),
 * fused as the service fuses them (hybrid-windows.ts), and each candidate changes one side and
 * fuses again. Through the API the same rankings give the same social figures (0.8883 and 0.8966,
 * questions 0.7635 and 0.8087, with feedback off and on); SciFact differs by ~0.001 (0.7192 and
 * 0.7263 through the API, 0.7178 and 0.7275 here), the API asking kNN with the int8-quantized
 * query vector its cursors carry.
 *
 *   npx tsx bench/relevance/social.ts --modes hybrid        # loads relevance-social-5-1500
 *   npx tsx bench/relevance/harness.ts --modes hybrid       # loads relevance-harness-scifact (vectors)
 *   npx tsx bench/relevance/feedback.ts                     # → bench/results/feedback.json
 *   ONLY=Rocchio npx tsx bench/relevance/feedback.ts        # the baseline and the variants named so
 *   SCIFACT_AS_QUESTIONS=1 ONLY='questions only' npx tsx bench/relevance/feedback.ts   # claims asked as questions
 *   SCIFACT_INDEX=relevance-harness-passages-posts …        # another SciFact index (the harness's --prefix)
 *
 * p: two-sided paired sign-flip randomization test against the service's ranking (stats.ts).
 */
import { postHeadVectors } from '../lib/model-vectors.ts';
import { ENTITY_TIER, entityTier } from '../../src/engine/elasticsearch/queries/entity-query.ts';
import { FUSION_WINDOW } from '../../src/engine/elasticsearch/reads/fused-settings.ts';
import { hybridWindows } from '../../src/engine/elasticsearch/queries/hybrid-windows.ts';
import { withEntities } from '../../src/engine/elasticsearch/queries/entity-query.ts';
import { queryEntities } from '../../src/query/entities.ts';
import {
  POST_STEMMED_FIELDS,
  POST_TEXT_FIELDS,
  postSearchFilter,
  postSearchQuery,
} from '../../src/engine/elasticsearch/queries/post-query.ts';
import { usesVectorFeedback } from '../../src/engine/elasticsearch/reads/vector-feedback.ts';
import { fuseHybrid, type TieredFusedId } from '../../src/query/fusion.ts';
import { feedbackVector } from '../../src/query/relevance-feedback.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { stemmedText } from '../../src/text/analysis.ts';
import { functionWordsOf } from '../../src/text/function-words.ts';
import { analyzeIn, analyzeQuery } from '../../src/text/languages.ts';
import { pairedRandomizationP } from './stats.ts';
import { K, parsed, scifactQueries, socialQueries, windowsOn, type Hit, type JudgedQuery } from './windows.ts';
import { cli } from '../lib/args.ts';
import { openModel } from '../lib/model.ts';
import { writeResult } from '../lib/measure.ts';
import { relevanceFloors } from '../../src/embedding/model-floors.ts';

cli({});

const { config, embedder, es } = await openModel();

/** One query of either set, with its two windows as the service asks them. */
interface Case extends JudgedQuery {
  search: PostSearch & { query: string };
  vector: number[];
  lexical: Hit[];
  semantic: Hit[];
}

const { lexicalWindow, semanticWindow } = windowsOn(es);

async function makeCase(q: JudgedQuery): Promise<Case> {
  const search = parsed(q.text);
  const vector = Array.from(await embedder.embedQuery(q.text.slice(0, 2000)));
  const lexical = await lexicalWindow(q.index, postSearchQuery(search));
  return { ...q, search, vector, lexical, semantic: await semanticWindow(q.index, search, vector) };
}

/** The service's fusion of two windows (hybrid, the default floor), with another lexical weight if asked. */
function fuse(c: Case, lexical: Hit[], semantic: Hit[]): TieredFusedId[] {
  const readable = analyzeQuery(c.text).semanticReadable;
  return hybridWindows({
    mode: 'hybrid',
    window: FUSION_WINDOW,
    similarityFloor: relevanceFloors(config).similarity,
    semanticReadable: readable,
  }).fuse(lexical, semantic);
}

// ---- the documents' text and vectors, read once
const texts = new Map<string, string>();
const vectors = new Map<string, number[]>();
async function read(index: string, ids: string[]): Promise<void> {
  const missing = ids.filter((id) => !texts.has(id));
  if (missing.length === 0) return;
  const r = await es.mget<{
    record?: {
      raw?: { v?: { caption?: string } };
      enrichment?: { content_summary?: { v?: string } };
    };
  }>({
    index,
    ids: missing,
    _source: ['record.raw.v.caption', 'record.enrichment.content_summary.v'],
  });
  for (const d of r.docs) {
    if (!('_source' in d) || !d._source) continue;
    const record = d._source.record;
    // The two highest-weighted fields the lexical side searches: the caption and the enrichment's summary.
    texts.set(d._id, `${record?.raw?.v?.caption ?? ''}\n${record?.enrichment?.content_summary?.v ?? ''}`);
  }
  for (const [id, vector] of await postHeadVectors(es, index, missing)) vectors.set(id, vector);
}

// ---- RM3 on the lexical side (Lavrenko & Croft's relevance model, interpolated as in Anserini)
const WORD = /[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}\p{N}]+)*/gu;
const LATIN = /^[\p{Script=Latin}\p{M}']+$/u;
const FUNCTION_WORDS = functionWordsOf('en');
/** P(w | R) = Σ_D P(w | D) · P(D | Q) over the feedback documents, English stems, function words out. */
function relevanceModel(docs: Array<{ text: string; score: number }>): Map<string, number> {
  const total = docs.reduce((s, d) => s + Math.max(0, d.score), 0);
  const model = new Map<string, number>();
  if (total <= 0) return model;
  for (const d of docs) {
    const stems: string[] = [];
    for (const [word] of d.text.toLowerCase().matchAll(WORD)) {
      if (word.length < 2 || FUNCTION_WORDS.has(word) || /\p{N}/u.test(word) || !LATIN.test(word)) continue;
      const stem = stemmedText(word);
      if (stem.length > 1) stems.push(stem);
    }
    const tf = new Map<string, number>();
    for (const s of stems) tf.set(s, (tf.get(s) ?? 0) + 1);
    for (const [s, n] of tf) model.set(s, (model.get(s) ?? 0) + (n / stems.length) * (Math.max(0, d.score) / total));
  }
  return model;
}

/** Which queries a feedback variant touches: as the service decides (vector-feedback.ts). */
const eligible = (c: Case) => usesVectorFeedback(c.text, 'hybrid', analyzeQuery(c.text).semanticReadable, 'on');

type Variant = { name: string; rank(c: Case): Promise<string[]> };
const serviceRank = (c: Case) => Promise.resolve(fuse(c, c.lexical, c.semantic).map((f) => f.id));

function rm3(docs: number, terms: number, lambda: number): Variant {
  return {
    name: `RM3 on the lexical side: ${docs} fused docs, ${terms} terms, λ ${lambda}`,
    async rank(c) {
      if (!eligible(c)) return serviceRank(c);
      const top = fuse(c, c.lexical, c.semantic).slice(0, docs);
      await read(
        c.index,
        top.map((f) => f.id),
      );
      const queryStems = new Set(analyzeQuery(c.text).stemmed.split(' ').filter(Boolean));
      const model = relevanceModel(top.map((f) => ({ text: texts.get(f.id) ?? '', score: f.score })));
      const best = [...model].filter(([s]) => !queryStems.has(s)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const chosen = best.slice(0, terms);
      const mass = chosen.reduce((s, [, w]) => s + w, 0) || 1;
      // (1 − λ) for the query's terms, λ for the expansion's: each expansion term weighs
      // |q| · λ / (1 − λ) · P(w | R) against the query's terms at 1.
      const query = {
        bool: {
          must: [postSearchQuery(c.search)],
          should: chosen.map(([stem, w]) => ({
            multi_match: {
              query: stem,
              type: 'best_fields',
              fields: POST_STEMMED_FIELDS,
              boost: (queryStems.size * lambda * w) / ((1 - lambda) * mass),
            },
          })),
        },
      };
      return fuse(c, await lexicalWindow(c.index, query), c.semantic).map((f) => f.id);
    },
  };
}

/** The query's own words weighted by the relevance model of the first fused top (no new words). */
function termWeights(docs: number, lambda: number): Variant {
  return {
    name: `query-term weights from the fused top ${docs}'s relevance model, λ ${lambda}`,
    async rank(c) {
      const analysis = analyzeQuery(c.text);
      if (!eligible(c)) return serviceRank(c);
      const top = fuse(c, c.lexical, c.semantic).slice(0, docs);
      await read(
        c.index,
        top.map((f) => f.id),
      );
      const model = relevanceModel(top.map((f) => ({ text: texts.get(f.id) ?? '', score: f.score })));
      const words = [...new Set(analysis.content.split(' ').filter(Boolean))];
      const stems = words.map((w) => analyzeIn(w, 'en'));
      const mass = stems.reduce((s, st) => s + (model.get(st) ?? 0), 0);
      const clauses = words.map((word, i) => ({
        dis_max: {
          queries: [
            { multi_match: { query: word, type: 'best_fields', fields: POST_TEXT_FIELDS } },
            ...(stems[i]
              ? [{ multi_match: { query: stems[i], type: 'best_fields', fields: POST_STEMMED_FIELDS } }]
              : []),
          ],
          boost: 1 - lambda + lambda * (mass > 0 ? (stems.length * (model.get(stems[i]!) ?? 0)) / mass : 1),
        },
      }));
      const query = { bool: { should: clauses, minimum_should_match: 1, filter: postSearchFilter(c.search) } };
      return fuse(c, await lexicalWindow(c.index, query), c.semantic).map((f) => f.id);
    },
  };
}

/** Rocchio on the query vector (the service's SEARCH_VECTOR_FEEDBACK at 3 fused docs, β 0.75). */
function rocchio(docs: number, beta: number, from: 'fused' | 'kNN' = 'fused'): Variant {
  return {
    name: `Rocchio on the query vector: ${from} top ${docs}, β ${beta}`,
    async rank(c) {
      if (!eligible(c) || c.vector.length === 0) return serviceRank(c);
      const first = fuse(c, c.lexical, c.semantic);
      // As the service (vector-feedback.ts): no feedback when BM25 matched nothing.
      if (!first.some((f) => f.lexical !== null)) return first.map((f) => f.id);
      const ids = (from === 'fused' ? first.map((f) => f.id) : c.semantic.map((h) => h._id)).slice(0, docs);
      if (ids.length === 0) return first.map((f) => f.id);
      await read(c.index, ids);
      const docVectors = ids.map((id) => vectors.get(id)).filter((v): v is number[] => v !== undefined);
      if (docVectors.length === 0) return first.map((f) => f.id);
      const moved = feedbackVector(
        c.vector,
        docVectors.map((vector) => ({ vector })),
        beta,
      );
      return fuse(c, c.lexical, await semanticWindow(c.index, c.search, moved)).map((f) => f.id);
    },
  };
}

/** The vector of the query's content words (function words dropped for the model too). */
const contentEmbedded: Variant = {
  name: 'the model embeds the content words only (function words dropped)',
  async rank(c) {
    if (!eligible(c)) return serviceRank(c);
    const vector = Array.from(await embedder.embedQuery(analyzeQuery(c.text).content));
    return fuse(c, c.lexical, await semanticWindow(c.index, c.search, vector)).map((f) => f.id);
  },
};

/** Both changes of the semantic side: the content words embedded, then Rocchio (3 fused docs, β 0.75). */
const contentEmbeddedRocchio: Variant = {
  name: 'content words embedded, then Rocchio: fused top 3, β 0.75',
  async rank(c) {
    if (!eligible(c) || c.vector.length === 0) return serviceRank(c);
    const vector = Array.from(await embedder.embedQuery(analyzeQuery(c.text).content));
    const semantic = await semanticWindow(c.index, c.search, vector);
    const first = fuse(c, c.lexical, semantic);
    if (!first.some((f) => f.lexical !== null)) return first.map((f) => f.id);
    const ids = first.slice(0, 3).map((f) => f.id);
    if (ids.length === 0 || vector.length === 0) return first.map((f) => f.id);
    await read(c.index, ids);
    const docVectors = ids.map((id) => vectors.get(id)).filter((v): v is number[] => v !== undefined);
    if (docVectors.length === 0) return first.map((f) => f.id);
    return fuse(
      c,
      c.lexical,
      await semanticWindow(
        c.index,
        c.search,
        feedbackVector(
          vector,
          docVectors.map((v) => ({ vector: v })),
        ),
      ),
    ).map((f) => f.id);
  },
};

/** The same windows fused at another lexical weight (queries the model reads; the others keep 1). */
function weight(w: number): Variant {
  return {
    name: `lexical weight ${w} (one weight for every shape)`,
    rank: (c) => (analyzeQuery(c.text).semanticReadable ? Promise.resolve(fuseWithWeight(c, w)) : serviceRank(c)),
  };
}

/** fuseHybrid with the service's inputs (hybrid-windows.ts) at another lexical weight. */
function fuseWithWeight(c: Case, w: number): string[] {
  const text = (h: Hit) => h._score - ENTITY_TIER * entityTier(h);
  const lexical = c.lexical.slice(0, FUSION_WINDOW).map((h) => ({ id: h._id, score: text(h), tier: entityTier(h) }));
  const past = c.lexical[FUSION_WINDOW];
  const lowest = lexical.reduce((m, h) => Math.min(m, h.score), Infinity);
  return fuseHybrid(
    lexical,
    c.semantic.map((h) => ({ id: h._id, score: h._score, cosine: 2 * h._score - 1 })),
    {
      lexicalWeight: w,
      similarityFloor: relevanceFloors(config).similarity,
      semanticEvidence: true,
      lexicalFloor: past ? Math.max(0, Math.min(text(past), lowest)) : 0,
    },
  ).map((f) => f.id);
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};
/** The lexical query of the service with a boost per content word (English queries). */
function weightedQuery(c: Case, boost: (word: string) => number): unknown {
  const words = [...new Set(analyzeQuery(c.text).content.split(' ').filter(Boolean))];
  const side = (fields: string[], term: (w: string) => string) => ({
    dis_max: {
      queries: fields.map((weighted) => {
        const [field, w] = weighted.split('^');
        return {
          bool: {
            should: words
              .filter((word) => term(word).length > 0)
              .map((word) => ({ match: { [field!]: { query: term(word), boost: Number(w ?? 1) * boost(word) } } })),
          },
        };
      }),
    },
  });
  const match = {
    dis_max: { queries: [side(POST_TEXT_FIELDS, (w) => w), side(POST_STEMMED_FIELDS, (w) => analyzeIn(w, 'en'))] },
  };
  return withEntities(match, postSearchFilter(c.search), queryEntities(c.text));
}
const ASKING = new Set(
  'how what why which who whom whose where when is are was were am do does did can could should would will shall may might must has have had'.split(
    ' ',
  ),
);
/** A question as people type them (English): ends with "?" or opens with an interrogative or auxiliary. */
const isQuestion = (text: string) => /\?\s*$/.test(text) || ASKING.has(text.toLowerCase().match(/[a-z']+/)?.[0] ?? '');
/** Term weights (leave-one-out) and/or Rocchio, for question-shaped queries only. */
function questionsOnly(options: { lambda: number; rocchio: boolean }): Variant {
  const weights = semanticTermWeights('leave-one-out', options.lambda);
  return {
    name: `questions only: leave-one-out λ ${options.lambda}${options.rocchio ? ' + Rocchio top 3' : ''}`,
    async rank(c) {
      if (!isQuestion(c.text)) return serviceRank(c);
      const lexical = options.lambda > 0 ? ((await weights.lexical(c)) ?? c.lexical) : c.lexical;
      const first = fuse(c, lexical, c.semantic);
      if (!options.rocchio || !eligible(c) || c.vector.length === 0 || !first.some((f) => f.lexical !== null))
        return first.map((f) => f.id);
      const ids = first.slice(0, 3).map((f) => f.id);
      await read(c.index, ids);
      const docVectors = ids.map((id) => vectors.get(id)).filter((v): v is number[] => v !== undefined);
      if (docVectors.length === 0) return first.map((f) => f.id);
      return fuse(
        c,
        lexical,
        await semanticWindow(
          c.index,
          c.search,
          feedbackVector(
            c.vector,
            docVectors.map((v) => ({ vector: v })),
            0.75,
          ),
        ),
      ).map((f) => f.id);
    },
  };
}

/** Each content word weighted by how close the model puts it to the whole query (cosine or leave-one-out). */
function semanticTermWeights(
  source: 'cosine' | 'leave-one-out' | 'none',
  lambda: number,
): Variant & { lexical(c: Case): Promise<Hit[] | null> } {
  const v = {
    name: `query-term weights from the model (${source}), λ ${lambda}`,
    async rank(c: Case) {
      const lexical = await v.lexical(c);
      return lexical ? fuse(c, lexical, c.semantic).map((f) => f.id) : serviceRank(c);
    },
    async lexical(c: Case): Promise<Hit[] | null> {
      const analysis = analyzeQuery(c.text);
      const words = [...new Set(analysis.content.split(' ').filter(Boolean))];
      if (
        !eligible(c) ||
        analysis.language !== 'en' ||
        analysis.stemmed !== analyzeIn(analysis.content, 'en') ||
        c.vector.length === 0 ||
        words.length < 2
      )
        return null;
      const raw = await Promise.all(
        words.map(async (w, i) =>
          source === 'none'
            ? 1
            : source === 'cosine'
              ? Math.max(0, dot(await embedder.embedQuery(w), c.vector))
              : Math.max(0, 1 - dot(await embedder.embedQuery(words.filter((_, j) => j !== i).join(' ')), c.vector)),
        ),
      );
      const mean = raw.reduce((a, b) => a + b, 0) / raw.length;
      const weightOf = new Map(words.map((w, i) => [w, 1 - lambda + lambda * (mean > 0 ? raw[i]! / mean : 1)]));
      return lexicalWindow(
        c.index,
        weightedQuery(c, (w) => weightOf.get(w) ?? 1),
      );
    },
  };
  return v;
}

const variants: Variant[] = [
  questionsOnly({ lambda: 0, rocchio: true }),
  questionsOnly({ lambda: 0.5, rocchio: false }),
  questionsOnly({ lambda: 1, rocchio: false }),
  questionsOnly({ lambda: 0.5, rocchio: true }),
  questionsOnly({ lambda: 1, rocchio: true }),
  semanticTermWeights('none', 0),
  semanticTermWeights('cosine', 0.5),
  semanticTermWeights('cosine', 1),
  semanticTermWeights('leave-one-out', 0.5),
  semanticTermWeights('leave-one-out', 1),
  weight(0.3),
  weight(0.6),
  weight(0.7),
  contentEmbedded,
  rm3(10, 10, 0.5),
  rm3(3, 10, 0.5),
  termWeights(10, 0.5),
  rocchio(3, 0.75),
  rocchio(1, 0.75),
  rocchio(5, 0.75),
  rocchio(10, 0.75),
  rocchio(3, 0.5),
  rocchio(3, 1),
  rocchio(3, 0.75, 'kNN'),
  contentEmbeddedRocchio,
];

const cases: Case[] = [];
for (const q of [...(await socialQueries(es)), ...(await scifactQueries())]) cases.push(await makeCase(q));
process.stderr.write(`${cases.length} queries\n`);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const HEADLINE = new Set(['hashtag', 'handle', 'intent', 'language']);
const GROUPS: Array<[string, (c: Case) => boolean]> = [
  ['social (101 judged of the 121)', (c) => c.set === 'social' && HEADLINE.has(c.kind)],
  ['question', (c) => c.kind === 'question'],
  ['topic (noun phrase)', (c) => c.kind === 'topic'],
  ['question, other languages', (c) => c.kind === 'language-question'],
  ['SciFact', (c) => c.set === 'scifact'],
];

async function measure(rank: (c: Case) => Promise<string[]>) {
  const ndcg = new Map<string, number>();
  const off = new Map<string, number>();
  for (const c of cases) {
    const ids = (await rank(c)).slice(0, K);
    ndcg.set(`${c.set}:${c.id}`, c.ndcg(ids));
    off.set(`${c.set}:${c.id}`, ids.filter((id) => !c.judged(id)).length / Math.max(1, ids.length));
  }
  return { ndcg, off };
}
const base = await measure(serviceRank);
const rows: Array<Record<string, string | number>> = [];
// ONLY=<substring>: just the variants whose name contains it (the baseline always).
const only = process.env['ONLY'];
for (const variant of [
  { name: 'service (no feedback)', rank: serviceRank },
  ...variants.filter((v) => !only || v.name.includes(only)),
]) {
  const run = variant.rank === serviceRank ? base : await measure((c) => variant.rank(c));
  const row: Record<string, string | number> = { variant: variant.name };
  for (const [group, member] of GROUPS) {
    const keys = cases.filter(member).map((c) => `${c.set}:${c.id}`);
    const pick = (m: Map<string, number>) => new Map(keys.map((k) => [k, m.get(k)!]));
    row[group] = +mean(keys.map((k) => run.ndcg.get(k)!)).toFixed(4);
    if (variant.rank !== serviceRank)
      row[`${group} p`] = +pairedRandomizationP(pick(run.ndcg), pick(base.ndcg)).toFixed(4);
  }
  row['question / topic'] = +((row['question'] as number) / (row['topic (noun phrase)'] as number)).toFixed(4);
  const questions = cases.filter((c) => c.kind === 'question').map((c) => `social:${c.id}`);
  row['question off-niche'] = +mean(questions.map((k) => run.off.get(k)!)).toFixed(4);
  rows.push(row);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}
writeResult('feedback.json', { date: new Date().toISOString(), rows });
console.table(rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.endsWith(' p')))));
await embedder.close();
