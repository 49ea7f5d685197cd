/**
 * Two embedding models side by side (bench/relevance.md, "Other models: e5-small-v2 and bge-small-en-v1.5"): the same
 * SciFact abstracts as documents and the same claims as queries (no query cache), through the
 * service's own Embedder, interleaved in rounds so the machine's noise hits both alike. Reports
 * documents per second, query latency p50 / p90 and the ratio of each to the first model.
 *
 *   npx tsx bench/embedding/models.ts --models ../shared/models/all-MiniLM-L6-v2,.services/models/e5-small-v2 \
 *     [--docs 200] [--queries 200] [--rounds 4]
 *
 * Run it under `flock /tmp/bench.lock`: it measures time.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEmbedder, type Embedder } from '../../src/embedding/embedder.ts';
import { REPO_ROOT, scifactDir } from '../relevance/beir.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    models: { type: 'string' },
    docs: { type: 'int', default: 200, min: 1 },
    queries: { type: 'int', default: 200, min: 1 },
    rounds: { type: 'int', default: 4, min: 1 },
  },
});
if (!args.models) throw new Error('--models: two or more model folders, comma-separated');
const folders = args.models.split(',').map((f) => path.resolve(REPO_ROOT, f.trim()));

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { title?: string; text: string });
const corpus = lines(path.join(scifactDir(), 'corpus.jsonl'));
const claims = lines(path.join(scifactDir(), 'queries.jsonl'));
const rounds = args.rounds;
const docsPerRound = Math.ceil(args.docs / rounds);
const queriesPerRound = Math.ceil(args.queries / rounds);

const embedders: Embedder[] = folders.map((dir) =>
  createEmbedder({
    MODEL_DIR: dir,
    EMBEDDINGS: 'on',
    EMBEDDING_DTYPE: 'q8',
    EMBEDDING_THREADS: 0,
    EMBEDDING_QUERY_CACHE_MB: 0,
  }),
);
await Promise.all(embedders.map((e) => e.ready()));
const documentSeconds = folders.map(() => 0);
const documents = folders.map(() => 0);
const queryMs: number[][] = folders.map(() => []);
try {
  for (let round = 0; round < rounds; round++) {
    const docs = corpus
      .slice(round * docsPerRound, (round + 1) * docsPerRound)
      .map((d) => `${d.title ?? ''}\n\n${d.text}`);
    const queries = claims.slice(round * queriesPerRound, (round + 1) * queriesPerRound).map((q) => q.text);
    // Alternate which model goes first in each round.
    const order = folders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const started = performance.now();
      await embedders[i]!.embedDocuments(docs);
      documentSeconds[i]! += (performance.now() - started) / 1000;
      documents[i]! += docs.length;
      for (const q of queries) {
        const t = performance.now();
        await embedders[i]!.embedQuery(q);
        queryMs[i]!.push(performance.now() - t);
      }
    }
  }
} finally {
  await Promise.all(embedders.map((e) => e.close()));
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const rows = folders.map((dir, i) => {
  const perSecond = documents[i]! / documentSeconds[i]!;
  const p50 = quantile(queryMs[i]!, 0.5);
  return {
    model: path.basename(dir),
    documents: documents[i],
    documents_per_second: +perSecond.toFixed(1),
    documents_ratio: +(perSecond / (documents[0]! / documentSeconds[0]!)).toFixed(2),
    query_p50_ms: +p50.toFixed(2),
    query_p90_ms: +quantile(queryMs[i]!, 0.9).toFixed(2),
    query_ratio: +(p50 / quantile(queryMs[0]!, 0.5)).toFixed(2),
  };
});
console.table(rows);
