/**
 * Lookalike quality on a judged set (bench/relevance.md, "Lookalikes"): the demo generator gives
 * every account a primary niche and a latent style within it (a pair of the niche's topics most of
 * its posts there are about), which the service never sees. The dataset goes in through the HTTP
 * intake with embeddings; each judged reference account is asked for through
 * `POST /v1/social/accounts/search` with `account.similar_to`, and its first page of ten is scored
 * by the labels: precision@10 of the same primary niche and of the same style (same niche and
 * style). Baselines and alternative weights in the same run, over the same candidates:
 * - same-niche random: ten random accounts of the reference's primary niche;
 * - biography vector alone: the nearest accounts by the account's own text's vector;
 * - the lookalike vector with other weights (computed here from the posts' stored vectors, exact
 *   search): posts only, half text, no recency weighting, and the service's own weights (a check
 *   that the service's approximate search loses little against the exact one).
 *
 *   npx tsx bench/relevance/lookalikes.ts [--posts 40000] [--accounts 2000] [--seed 11]
 *                                         [--references 300] [--reingest] [--drop]
 *
 * Data under INDEX_PREFIX = REDIS_PREFIX = `relevance-lookalikes-<seed>-<posts>`, reused while it
 * holds every post (`--reingest`: dropped and loaded again). Writes bench/results/relevance-lookalikes.json.
 */
import { postHeadVectors } from '../lib/model-vectors.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { estypes } from '@elastic/elasticsearch';
import {
  LOOKALIKE_WEIGHTS,
  lookalikeVector,
  topicText,
  type LookalikeWeights,
  type PostVector,
} from '../../src/domain/lookalike.ts';
import { mintId } from '../../src/contract/ids.ts';
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { generateObservations, seedAccountLabels, type SeedAccountLabel } from '../../src/seed/generator.ts';
import { Rng } from '../../src/seed/random.ts';
import { decodeVector } from '../../src/text/vector-codec.ts';
import { REPO_ROOT } from './beir.ts';
import {
  countPosts,
  destroyPrefix,
  harnessRuntime,
  startApiNode,
  loadObservations,
  type Runtime,
  benchLogger,
  harnessEnv,
} from '../lib/in-process-service.ts';
import { cli } from '../lib/args.ts';
import { scanPages } from '../lib/scan.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 40000, min: 1 },
    accounts: { type: 'int', default: 2000, min: 1 },
    seed: { type: 'int', default: 11, min: 0 },
    references: { type: 'int', default: 300, min: 1 },
    'min-posts': { type: 'int', default: 5, min: 1 },
    prefix: { type: 'string' },
    reingest: { type: 'boolean' },
    drop: { type: 'boolean' },
  },
});
const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
const prefix = args.prefix ?? `relevance-lookalikes-${size.seed}-${size.posts}`;
const env = harnessEnv(prefix);
const logger = benchLogger();
const say = (line: string) => process.stdout.write(`${line}\n`);
const K = 10;
/** A judged reference has published at least this many posts (a creator someone would look up). */
const MIN_REFERENCE_POSTS = args['min-posts'];

/** Every hit of `request` (the indices are larger than one page). */
async function scan<T>(
  runtime: Runtime,
  index: string,
  request: Omit<estypes.SearchRequest, 'index'>,
): Promise<estypes.SearchHit<T>[]> {
  const out: estypes.SearchHit<T>[] = [];
  for await (const hits of scanPages<T>(runtime.es, index, request, { keepAlive: '2m' })) out.push(...hits);
  return out;
}

/** What the engine holds for the exact comparisons: candidates' own vectors, every post's vector. */
interface Held {
  /** Accounts an account search can return (servable, public), with their own text's vector. */
  candidates: Map<string, number[] | null>;
  /** Author → its available posts' vectors. */
  posts: Map<string, PostVector[]>;
  /** Account → its niches (account enrichment), publishing languages, and its posts' topics with counts. */
  niches: Map<string, string[]>;
  languages: Map<string, string[]>;
  topics: Map<string, Map<string, number>>;
}

async function held(runtime: Runtime): Promise<Held> {
  const accounts = await scan<{ record: { embedding?: { vector: string } } }>(runtime, `${prefix}-accounts`, {
    docvalue_fields: ['niches', 'publishing_languages'],
    query: {
      bool: {
        filter: [
          { exists: { field: 'handle_observed_at' } },
          { term: { servable: true } },
          { term: { is_private: false } },
        ],
      },
    },
    _source: ['record.embedding'],
  });
  const candidates = new Map(
    accounts.map((h) => [h._id!, h._source?.record.embedding ? decodeVector(h._source.record.embedding.vector) : null]),
  );
  const niches = new Map(accounts.map((h) => [h._id!, (h.fields?.['niches'] as string[] | undefined) ?? []]));
  const languages = new Map(
    accounts.map((h) => [h._id!, (h.fields?.['publishing_languages'] as string[] | undefined) ?? []]),
  );
  // Posts with a vector: those with a vector document (a post's record may not name it yet).
  const embedded = new Set(
    (await scan(runtime, `${prefix}-post-vectors`, { query: { match_all: {} }, _source: false })).map((h) => h._id!),
  );
  const hits = (
    await scan<{ record: { raw: { v: { posted_at: string } } } }>(runtime, `${prefix}-posts`, {
      query: { bool: { filter: [{ term: { status: 'available' } }] } },
      _source: ['record.raw.v.posted_at'],
      docvalue_fields: ['author.id', 'topics'],
    })
  ).filter((h) => embedded.has(h._id!));
  const headVectors = await postHeadVectors(
    runtime.es,
    `${prefix}-posts`,
    hits.map((h) => h._id!),
  );
  const posts = new Map<string, PostVector[]>();
  const topics = new Map<string, Map<string, number>>();
  for (const h of hits) {
    const author = (h.fields?.['author.id'] as string[] | undefined)?.[0];
    const vector = headVectors.get(h._id!);
    if (!author || !h._source || !vector) continue;
    const counts = topics.get(author) ?? new Map<string, number>();
    const postTopics = (h.fields?.['topics'] as string[] | undefined) ?? [];
    for (const t of postTopics) counts.set(t, (counts.get(t) ?? 0) + 1);
    topics.set(author, counts);
    const list = posts.get(author) ?? [];
    list.push({ postedAt: h._source.record.raw.v.posted_at, vector, topics: postTopics });
    posts.set(author, list);
  }
  return { candidates, posts, niches, languages, topics };
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Jaccard overlap of two sets (0 when both are empty). */
function jaccard(a: readonly string[], b: readonly string[]): number {
  const A = new Set(a);
  const B = new Set(b);
  let both = 0;
  for (const x of A) if (B.has(x)) both++;
  const union = A.size + B.size - both;
  return union === 0 ? 0 : both / union;
}

/** Cosine of two sparse count vectors. */
function sparseCosine(a: Map<string, number> | undefined, b: Map<string, number> | undefined): number {
  if (!a || !b) return 0;
  let d = 0;
  let na = 0;
  let nb = 0;
  for (const [k, v] of a) {
    na += v * v;
    d += v * (b.get(k) ?? 0);
  }
  for (const v of b.values()) nb += v * v;
  return na > 0 && nb > 0 ? d / Math.sqrt(na * nb) : 0;
}

/** Ways of ranking candidates by their lookalike vectors' cosine and what else the service knows of them. */
function likeness(data: Held): Record<string, (ref: string, id: string, cosine: number) => number> {
  const niches = (id: string) => data.niches.get(id) ?? [];
  return {
    'cosine, accounts sharing a niche first': (ref, id, cos) => (jaccard(niches(ref), niches(id)) > 0 ? 2 : 0) + cos,
    'cosine + niche Jaccard': (ref, id, cos) => cos + jaccard(niches(ref), niches(id)),
    'cosine + ½ niche Jaccard': (ref, id, cos) => cos + 0.5 * jaccard(niches(ref), niches(id)),
    '½ cosine + ½ topic-profile cosine': (ref, id, cos) =>
      0.5 * cos + 0.5 * sparseCosine(data.topics.get(ref), data.topics.get(id)),
    'cosine + niche Jaccard + topic-profile cosine': (ref, id, cos) =>
      cos + jaccard(niches(ref), niches(id)) + sparseCosine(data.topics.get(ref), data.topics.get(id)),
  };
}

/** Each reference's ten best candidates by `score` (over every candidate with a vector). */
function rankedBy(
  references: readonly string[],
  vectors: Map<string, ArrayLike<number>>,
  score: (ref: string, id: string, cosine: number) => number,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const ref of references) {
    const v = vectors.get(ref);
    if (!v) {
      out.set(ref, []);
      continue;
    }
    const scored: Array<[string, number]> = [];
    for (const [id, u] of vectors) if (id !== ref) scored.push([id, score(ref, id, dot(v, u))]);
    scored.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    out.set(
      ref,
      scored.slice(0, K).map(([id]) => id),
    );
  }
  return out;
}

/** Exact nearest neighbours of each reference among the candidates, by the vectors of `vectors`. */
const exactNeighbours = (references: readonly string[], vectors: Map<string, ArrayLike<number>>) =>
  rankedBy(references, vectors, (_ref, _id, cosine) => cosine);

function normalized(vector: ArrayLike<number>): number[] {
  const n = Math.sqrt(dot(vector, vector));
  return Array.from(vector, (x) => (n > 0 ? x / n : 0));
}

/** The model's vector of each topic ID the posts carry, read as words (domain/lookalike.ts, topicText). */
let topicVectors: Map<string, ArrayLike<number>> = new Map();

/** Every candidate's lookalike vector under `weights`, from the posts' stored vectors. */
function lookalikes(data: Held, weights: LookalikeWeights): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const [id, own] of data.candidates) {
    const vector = lookalikeVector(data.posts.get(id) ?? [], own, weights, topicVectors);
    if (vector) out.set(id, vector);
  }
  return out;
}

/** The service's first page for each reference (null: it answered 503, the reference has no vector yet). */
async function askService(baseUrl: string, key: string, references: readonly string[]) {
  const out = new Map<string, string[]>();
  const latencies: number[] = [];
  let unavailable = 0;
  for (const ref of references) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/social/accounts/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account: { similar_to: ref }, limit: K }),
    });
    const body = (await response.json()) as { data: Array<{ id: string }> };
    latencies.push(performance.now() - started);
    if (response.status === 503) {
      unavailable++;
      continue;
    }
    if (response.status !== 200) throw new Error(`${ref}: ${response.status} ${JSON.stringify(body).slice(0, 500)}`);
    out.set(
      ref,
      body.data.map((a) => a.id),
    );
  }
  return { answers: out, unavailable, latencies: latencies.sort((a, b) => a - b) };
}

/**
 * Precision@10 of each label over `answers` (fewer than ten answers count the missing as misses),
 * and the niche precision over the first min(10, candidates sharing the reference's niche) — on a
 * small corpus a niche may have fewer than ten other accounts — for every reference, for English
 * references and for references in the other languages.
 */
function precision(
  answers: Map<string, string[]>,
  labels: Map<string, SeedAccountLabel>,
  sharing: ReadonlyMap<string, number>,
) {
  const per = { niche: [] as number[], style: [] as number[], language: [] as number[], returned: [] as number[] };
  const shared = { all: [] as number[], en: [] as number[], other: [] as number[] };
  for (const [ref, ids] of answers) {
    const r = labels.get(ref)!;
    const found = ids.map((id) => labels.get(id)).filter((l): l is SeedAccountLabel => l !== undefined);
    per.niche.push(found.filter((l) => l.niche === r.niche).length / K);
    per.style.push(found.filter((l) => l.niche === r.niche && l.style === r.style).length / K);
    per.language.push(found.filter((l) => l.language === r.language).length / K);
    per.returned.push(ids.length);
    const k = Math.min(K, sharing.get(ref) ?? 0);
    if (k > 0) {
      const p = found.slice(0, k).filter((l) => l.niche === r.niche).length / k;
      shared.all.push(p);
      shared[r.language === 'en' ? 'en' : 'other'].push(p);
    }
  }
  const mean = (xs: number[]) => +(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)).toFixed(3);
  return {
    niche_p_at_10: mean(per.niche),
    style_p_at_10: mean(per.style),
    language_p_at_10: mean(per.language),
    niche_p_at_shared: mean(shared.all),
    niche_p_at_shared_en: mean(shared.en),
    niche_p_at_shared_other: mean(shared.other),
    references_en: shared.en.length,
    references_other: shared.other.length,
    mean_returned: mean(per.returned),
    references: answers.size,
  };
}

/** Ten random candidates of the reference's primary niche (seeded). */
function sameNicheRandom(
  references: readonly string[],
  candidates: Iterable<string>,
  labels: Map<string, SeedAccountLabel>,
) {
  const rng = new Rng(size.seed ^ 0x1a5e);
  const byNiche = new Map<string, string[]>();
  for (const id of candidates) {
    const niche = labels.get(id)?.niche;
    if (niche) byNiche.set(niche, [...(byNiche.get(niche) ?? []), id]);
  }
  return new Map(
    references.map((ref) => {
      const pool = (byNiche.get(labels.get(ref)!.niche) ?? []).filter((id) => id !== ref);
      for (let i = pool.length - 1; i > 0; i--) {
        const j = Math.floor(rng.next() * (i + 1));
        [pool[i], pool[j]] = [pool[j]!, pool[i]!];
      }
      return [ref, pool.slice(0, K)];
    }),
  );
}

async function measure(base: Runtime): Promise<void> {
  await base.indexAdmin.apply();
  const created = await base.keys.create({
    owner: 'bench@example.com',
    name: 'lookalikes',
    scopes: ['ingest', 'search'],
  });
  try {
    const started = Date.now();
    // Unless the posts are all there; the vectors of a run stopped midway are still queued.
    const reload = args.reingest || (await countPosts(base)).total < size.posts;
    if (reload) say(`loading ${size.posts} posts of ${size.accounts} accounts (seed ${size.seed}) under ${prefix}`);
    await loadObservations(base, logger, created.key, reload ? generateObservations(size) : null, {
      requireModel: true,
    });
    say(`loaded and embedded in ${((Date.now() - started) / 60_000).toFixed(1)} min`);
    await base.es.indices.refresh({ index: `${prefix}-*` });
    const counts = await countPosts(base);
    say(`posts: ${counts.total} (servable ${counts.servable}, with vectors ${counts.withVectors})`);

    const labels = new Map(seedAccountLabels(size).map((l) => [mintId('account', l.id), l]));
    const data = await held(base);
    const topicIds = [...new Set([...data.topics.values()].flatMap((m) => [...m.keys()]))].sort();
    // The loader closed the runtime's own model thread: a thread of its own for the topics.
    const embedder = createEmbedder(base.config);
    const embedded = await embedder.embedDocuments(topicIds.map(topicText)).finally(() => embedder.close());
    topicVectors = new Map(topicIds.map((t, i) => [t, embedded[i]!]));
    const eligible = [...labels].filter(
      ([id, l]) => !l.isPrivate && l.active && l.posts >= MIN_REFERENCE_POSTS && data.candidates.has(id),
    );
    const rng = new Rng(size.seed ^ 0x4ef);
    for (let i = eligible.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [eligible[i], eligible[j]] = [eligible[j]!, eligible[i]!];
    }
    const references = eligible.slice(0, args.references).map(([id]) => id);
    say(
      `candidates ${data.candidates.size}, judged references ${references.length} (of ${eligible.length} with ≥ ${MIN_REFERENCE_POSTS} posts)`,
    );

    const node = await startApiNode(base);
    let service;
    try {
      service = await askService(node.baseUrl, created.key, references);
    } finally {
      await node.close();
    }
    const own = new Map<string, number[]>();
    for (const [id, v] of data.candidates) if (v) own.set(id, normalized(v));
    const variants: Record<string, LookalikeWeights> = {
      'exact, service weights': LOOKALIKE_WEIGHTS,
      'exact, posts only (text share 0)': { ...LOOKALIKE_WEIGHTS, textShare: 0 },
      'exact, text share 0.5': { ...LOOKALIKE_WEIGHTS, textShare: 0.5 },
      'exact, no recency weighting': { ...LOOKALIKE_WEIGHTS, halfLifeDays: Number.POSITIVE_INFINITY },
      'exact, no topics (topic share 0)': { ...LOOKALIKE_WEIGHTS, topicShare: 0 },
      'exact, topic share 0.3': { ...LOOKALIKE_WEIGHTS, topicShare: 0.3 },
      'exact, topic share 0.7': { ...LOOKALIKE_WEIGHTS, topicShare: 0.7 },
    };
    // Candidates other than the reference that share its primary niche.
    const sharing = new Map(
      references.map((ref) => {
        const niche = labels.get(ref)!.niche;
        return [ref, [...data.candidates.keys()].filter((id) => id !== ref && labels.get(id)?.niche === niche).length];
      }),
    );
    const judge = (answers: Map<string, string[]>) => precision(answers, labels, sharing);
    const rows: Record<string, ReturnType<typeof precision>> = {
      'service (account.similar_to)': judge(service.answers),
      'baseline: same-niche random': judge(sameNicheRandom(references, data.candidates.keys(), labels)),
      'baseline: biography vector alone': judge(exactNeighbours(references, own)),
    };
    for (const [name, weights] of Object.entries(variants))
      rows[name] = judge(exactNeighbours(references, lookalikes(data, weights)));
    const serviceVectors = lookalikes(data, { ...LOOKALIKE_WEIGHTS, topicShare: 0 });
    for (const [name, score] of Object.entries(likeness(data)))
      rows[name] = judge(rankedBy(references, serviceVectors, score));

    say(`\n| method | niche P@10 | style P@10 | language P@10 | niche P@min(10, sharing): all; en; other | results |`);
    say(`|---|---:|---:|---:|---:|---:|`);
    for (const [name, r] of Object.entries(rows))
      say(
        `| ${name} | ${r.niche_p_at_10} | ${r.style_p_at_10} | ${r.language_p_at_10} | ${r.niche_p_at_shared}; ${r.niche_p_at_shared_en} (${r.references_en}); ${r.niche_p_at_shared_other} (${r.references_other}) | ${r.mean_returned} |`,
      );
    const p = (q: number) => +service.latencies[Math.floor(q * (service.latencies.length - 1))]!.toFixed(1);
    say(
      `\nservice answered 503 for ${service.unavailable}; latency p50 ${p(0.5)} ms, p99 ${p(0.99)} ms (small index, not the latency bench)`,
    );
    const out = path.join(REPO_ROOT, 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      path.join(out, process.env['LOOKALIKE_RESULTS'] ?? 'relevance-lookalikes.json'),
      JSON.stringify(
        {
          date: new Date().toISOString(),
          dataset: { ...size, prefix, posts_indexed: counts, candidates: data.candidates.size },
          references: references.length,
          min_reference_posts: MIN_REFERENCE_POSTS,
          service_unavailable: service.unavailable,
          rows,
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    await base.keys.revoke(created.id).catch(() => undefined);
  }
}

const base = harnessRuntime(env, logger);
try {
  // A reload starts from empty indices: observations sent again change no record, so the accounts
  // would keep the lookalike vectors an earlier version of the service made.
  if (args.reingest) await destroyPrefix(base);
  await measure(base);
  if (args.drop) await destroyPrefix(base);
} finally {
  await base.close();
}
