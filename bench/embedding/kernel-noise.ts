/**
 * Kernel noise (bench/embeddings.md, "Kernel noise"): how far the same texts' vectors move between
 * the onnxruntime kernels and settings this machine can reach, and what that does to what the
 * service decides with them: query–document cosines (the relevance floor, the semantic half of a
 * fused score) and a question's word weights (src/text/question-weights.ts). The same measures
 * under EMBEDDING_NOISE's perturbation, for choosing the distance the tests run under.
 *
 *   npx tsx bench/embedding/kernel-noise.ts [--claims 100] [--abstracts 100]
 *                                           [--qemu Haswell,Nehalem] [--qemu-texts 40]
 *
 * Each setting is a child process of kernel-vectors.mjs (plain JavaScript): natively, threads 1
 * and 2, every graph optimization level, fp32, the q8 weights at eight bits (as loaded before the
 * seven-bit weights) and as the service loads them; under QEMU's user-mode emulation
 * (`qemu-x86_64 -cpu <model>`, Debian's qemu-user) with other CPU models, so that onnxruntime
 * picks their kernels: Haswell for AVX2 without VNNI, Nehalem for SSE4.1 (QEMU 7.2 emulates no
 * AVX-512). The emulated runs take the first `--qemu-texts` claims and abstracts and the crochet
 * question's texts (minutes per setting). Texts: SciFact claims and abstracts (every n-th), and
 * the social set's English questions with the texts their word weights embed. Writes
 * bench/results/kernel-noise.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cosine } from '../../src/domain/lookalike.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { readQuestion, weightableTerms } from '../../src/text/question-weights.ts';
import { REPO_ROOT, scifactDir } from '../relevance/beir.ts';
import { socialQuerySet } from '../relevance/social-set.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    claims: { type: 'int', default: 100, min: 1 },
    abstracts: { type: 'int', default: 100, min: 1 },
    qemu: { type: 'string', default: 'Haswell,Nehalem' },
    'qemu-texts': { type: 'int', default: 40, min: 1 },
  },
});
const MODEL = process.env['MODEL_DIR'] ?? path.resolve(REPO_ROOT, '../shared/models/all-MiniLM-L6-v2');
const say = (line: string) => process.stdout.write(`${line}\n`);
const readJsonl = <T>(file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
const every = <T>(items: T[], count: number) =>
  items.filter((_, i) => i % Math.max(1, Math.floor(items.length / count)) === 0).slice(0, count);

// ---------------------------------------------------------------------------------------------
// Texts

const claims = every(
  readJsonl<{ text: string }>(path.join(scifactDir(), 'queries.jsonl')).map((q) => q.text),
  args.claims,
);
const abstracts = every(
  readJsonl<{ title: string; text: string }>(path.join(scifactDir(), 'corpus.jsonl')).map(
    (d) => `${d.title}\n\n${d.text}`,
  ),
  args.abstracts,
);
const CROCHET = 'how can I get better at crochet without expensive stuff?';
const questions = [
  CROCHET,
  ...socialQuerySet([...generateObservations({ posts: 1500, accounts: 150, seed: 5 })], new Set())
    .filter((q) => q.kind === 'question')
    .map((q) => q.text),
].filter((q) => weightableTerms(q) !== null);
/** A question's texts: itself, then its content words without each one in turn (readQuestion). */
const weightTexts = (q: string) => {
  const words = weightableTerms(q)!;
  return [q, ...words.map((_, i) => words.filter((__, j) => j !== i).join(' '))];
};
const all = [...new Set([...claims, ...abstracts, ...questions.flatMap(weightTexts)])];
const emulated = [
  ...new Set([
    ...claims.slice(0, args['qemu-texts']),
    ...abstracts.slice(0, args['qemu-texts']),
    ...weightTexts(CROCHET),
  ]),
];

// ---------------------------------------------------------------------------------------------
// Vectors under each setting

interface Setting {
  name: string;
  dtype: 'q8' | 'fp32';
  weights: 'service' | 'eight-bit';
  threads: number;
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
  cpu?: string;
}
type Vectors = Map<string, Float32Array>;

const scratch = mkdtempSync(path.join(tmpdir(), 'kernel-noise-'));
const script = path.join(REPO_ROOT, 'bench/embedding/kernel-vectors.mjs');
const qemu = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v qemu-x86_64'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
})();

function vectorsOf(setting: Setting, texts: string[]): { vectors: Vectors; ms: number } {
  const input = path.join(scratch, 'texts.json');
  const output = path.join(scratch, `${setting.name}.json`);
  writeFileSync(input, JSON.stringify(texts));
  const json = JSON.stringify({ model: MODEL, ...setting, check: setting.name === 'reference' });
  const [command, ...rest] = setting.cpu
    ? [qemu!, '-cpu', setting.cpu, process.execPath, script, json, input, output]
    : [process.execPath, script, json, input, output];
  const started = Date.now();
  // QEMU warns about each host feature its CPU model lacks; only failures matter.
  execFileSync(command, rest, { stdio: ['ignore', 'inherit', 'pipe'], maxBuffer: 64 * 2 ** 20 });
  const { vectors } = JSON.parse(readFileSync(output, 'utf8')) as { vectors: string[] };
  const decoded = vectors.map((v) => {
    const bytes = Buffer.from(v, 'base64');
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  });
  return { vectors: new Map(texts.map((t, i) => [t, decoded[i]!])), ms: Date.now() - started };
}

const native: Setting[] = [
  { name: 'reference', dtype: 'q8', weights: 'service', threads: 1 },
  { name: 'threads 2', dtype: 'q8', weights: 'service', threads: 2 },
  ...(['disabled', 'basic', 'extended'] as const).map((level): Setting => ({
    name: `graph ${level}`,
    dtype: 'q8',
    weights: 'service',
    threads: 1,
    graphOptimizationLevel: level,
  })),
  { name: 'eight-bit', dtype: 'q8', weights: 'eight-bit', threads: 1 },
  { name: 'fp32', dtype: 'fp32', weights: 'service', threads: 1 },
];
const cpus = qemu ? args.qemu.split(',').filter(Boolean) : [];
const foreign: Setting[] = cpus.flatMap((cpu) => [
  { name: `service on ${cpu}`, dtype: 'q8', weights: 'service', threads: 1, cpu },
  { name: `eight-bit on ${cpu}`, dtype: 'q8', weights: 'eight-bit', threads: 1, cpu },
]);
if (!qemu) say("qemu-x86_64 not found (apt-get install qemu-user): only this CPU's kernels are measured");

const runs = new Map<string, { vectors: Vectors; ms: number }>();
for (const setting of [...native, ...foreign]) {
  say(`${setting.name}…`);
  runs.set(setting.name, vectorsOf(setting, setting.cpu ? emulated : all));
}
rmSync(scratch, { recursive: true, force: true });

// ---------------------------------------------------------------------------------------------
// Measures of one pair of vector sets over the texts both have

function quantiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return { mean: +mean.toPrecision(3), p95: +at(0.95).toPrecision(3), max: +at(1).toPrecision(3) };
}

/** Min–max normalised cosines of a claim's 50 nearest abstracts: the semantic half of a fused score. */
function semanticWindow(claim: Float32Array, docs: Float32Array[]): Map<number, number> {
  const scored = docs.map((d, i) => ({ i, c: cosine(claim, d) })).sort((a, b) => b.c - a.c);
  const window = scored.slice(0, 50);
  const max = window[0]!.c;
  const min = window.at(-1)!.c;
  return new Map(window.map(({ i, c }) => [i, max > min ? (c - min) / (max - min) : 1]));
}

async function weightsOf(vectors: Vectors, question: string): Promise<number[] | null> {
  const read = await readQuestion(question, (texts) =>
    Promise.resolve(
      texts.map((text) => {
        const v = vectors.get(text);
        if (!v) throw new Error(`no vector for ${text}`);
        return v;
      }),
    ),
  );
  return read?.weights ?? null;
}

async function compare(a: Vectors, b: Vectors) {
  const texts = [...a.keys()].filter((t) => b.has(t));
  const distance = texts.map((t) => 1 - cosine(a.get(t)!, b.get(t)!));
  const maxAbs = Math.max(...texts.map((t) => Math.max(...a.get(t)!.map((x, j) => Math.abs(x - b.get(t)![j]!)))));
  const shared = (list: string[]) => list.filter((t) => a.has(t) && b.has(t));
  const [c, d] = [shared(claims), shared(abstracts)];
  const cosines: number[] = [];
  const fused: number[] = [];
  for (const claim of c) {
    for (const doc of d)
      cosines.push(Math.abs(cosine(a.get(claim)!, a.get(doc)!) - cosine(b.get(claim)!, b.get(doc)!)));
    const [wa, wb] = [a, b].map((v) =>
      semanticWindow(
        v.get(claim)!,
        d.map((t) => v.get(t)!),
      ),
    );
    // Half of a fused score is the semantic side (equal weights); a document out of one window scores 0 there.
    for (const i of new Set([...wa!.keys(), ...wb!.keys()]))
      fused.push(0.5 * Math.abs((wa!.get(i) ?? 0) - (wb!.get(i) ?? 0)));
  }
  const weightDeltas: number[] = [];
  for (const q of questions.filter((q) => weightTexts(q).every((t) => a.has(t) && b.has(t)))) {
    const [wa, wb] = await Promise.all([weightsOf(a, q), weightsOf(b, q)]);
    if (wa && wb) wa.forEach((w, i) => weightDeltas.push(Math.abs(w - wb[i]!)));
  }
  return {
    texts: texts.length,
    identical: texts.filter((t) => a.get(t)!.every((x, j) => x === b.get(t)![j])).length,
    one_minus_cosine: quantiles(distance),
    max_abs_component: +maxAbs.toPrecision(3),
    query_document_cosine_change: quantiles(cosines),
    fused_semantic_half_change: quantiles(fused),
    question_weight_change: weightDeltas.length > 0 ? quantiles(weightDeltas) : null,
  };
}

/** EMBEDDING_NOISE's perturbation (src/embedding/embedding-thread.mjs), seeded here by position. */
function perturbed(vectors: Vectors, distance: number, seed: number): Vectors {
  let state = seed * 2654435761;
  const uniform = () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return (state + 0.5) / 2 ** 32;
  };
  const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  const t = Math.sqrt(1 / (1 - distance) ** 2 - 1);
  return new Map(
    [...vectors].map(([text, v]) => {
      const n = Array.from(v, normal);
      const along = n.reduce((s, x, j) => s + x * v[j]!, 0);
      const orthogonal = n.map((x, j) => x - along * v[j]!);
      const length = Math.hypot(...orthogonal);
      const moved = Array.from(v, (x, j) => x + (t * orthogonal[j]!) / length);
      const norm = Math.hypot(...moved);
      return [text, Float32Array.from(moved, (x) => x / norm)];
    }),
  );
}

const reference = runs.get('reference')!.vectors;
const eightBit = runs.get('eight-bit')!.vectors;
const pairs: Record<string, Awaited<ReturnType<typeof compare>>> = {};
const record = async (name: string, a: Vectors, b: Vectors) => {
  pairs[name] = await compare(a, b);
  const p = pairs[name];
  say(
    `${name.padEnd(44)} ${String(p.texts).padStart(4)} texts, ${String(p.identical).padStart(4)} identical; ` +
      `1−cos mean ${p.one_minus_cosine.mean} max ${p.one_minus_cosine.max}; max |Δ| ${p.max_abs_component}; ` +
      `Δcos(q,d) mean ${p.query_document_cosine_change.mean} p95 ${p.query_document_cosine_change.p95} max ${p.query_document_cosine_change.max}; ` +
      `Δfused p95 ${p.fused_semantic_half_change.p95}` +
      (p.question_weight_change
        ? `; Δweight mean ${p.question_weight_change.mean} max ${p.question_weight_change.max}`
        : ''),
  );
};
for (const cpu of cpus) {
  await record(`eight-bit: this CPU / ${cpu}`, eightBit, runs.get(`eight-bit on ${cpu}`)!.vectors);
  await record(`seven-bit (service): this CPU / ${cpu}`, reference, runs.get(`service on ${cpu}`)!.vectors);
}
for (const name of ['threads 2', 'graph disabled', 'graph basic', 'graph extended', 'eight-bit', 'fp32'])
  await record(`service / ${name}`, reference, runs.get(name)!.vectors);
await record('eight-bit / fp32', eightBit, runs.get('fp32')!.vectors);
for (const distance of [0.005, 0.01, 0.015, 0.02])
  await record(`EMBEDDING_NOISE ${distance} / unperturbed`, reference, perturbed(reference, distance, 1));

const file = path.join(REPO_ROOT, 'bench/results/kernel-noise.json');
if (!existsSync(path.dirname(file))) mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim(),
      texts: {
        claims: claims.length,
        abstracts: abstracts.length,
        questions: questions.length,
        emulated: emulated.length,
      },
      seconds: Object.fromEntries([...runs].map(([name, r]) => [name, Math.round(r.ms / 1000)])),
      pairs,
    },
    null,
    2,
  )}\n`,
);
say(`wrote ${path.relative(REPO_ROOT, file)}`);
