/**
 * What a model costs a process's memory (bench/memory.md, "The default model's memory"): for each
 * model folder, a fresh Node process loads the service's Embedder and reports its RSS before the
 * model, once loaded, after 400 short texts (a post's caption) and after one long text (as many
 * tokens as the service lets a run read: onnxruntime's arena keeps the peak of the largest run).
 * Each model runs `--repeats` times, alternating, in processes of their own.
 *
 *   npx tsx bench/embedding/model-memory.ts [--models FOLDER,FOLDER] [--repeats 2]
 *
 * `--models` defaults to the two default model folders (src/internal/paths.ts): all-MiniLM-L6-v2,
 * then bge-small-en-v1.5.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../lib/service-snapshot.ts';
import { cli } from '../lib/args.ts';
import { defaultModelDirs } from '../../src/internal/paths.ts';

const args = cli({
  options: {
    models: { type: 'string' },
    repeats: { type: 'int', default: 2, min: 1 },
    child: { type: 'string' },
  },
});

const mib = () => Math.round(process.memoryUsage().rss / 1048576);

/** One model in this process: RSS at each stage, MiB. */
async function measure(dir: string): Promise<Record<string, number | string>> {
  const [{ createEmbedder }, { loadConfig }] = await Promise.all([
    import('../../src/embedding/embedder.ts'),
    import('../../src/internal/config.ts'),
  ]);
  const before = mib();
  const embedder = createEmbedder(loadConfig({ ...process.env, MODEL_DIR: dir, EMBEDDING_THREADS: '2' }));
  await embedder.ready();
  const loaded = mib();
  const captions = Array.from(
    { length: 400 },
    (_, i) =>
      `post ${i}: feeding my sourdough starter, then a night-time skincare routine ${'and more '.repeat(i % 40)}`,
  );
  const started = performance.now();
  await embedder.embedDocuments(captions);
  const ms = Math.round(performance.now() - started);
  const short = mib();
  await embedder.embedDocuments(['the car needs a new tyre and an oil change '.repeat(120)]);
  const long = mib();
  await embedder.close();
  return { model: path.basename(dir), before, loaded, short, long, short_ms: ms };
}

if (args.child) {
  process.stdout.write(`${JSON.stringify(await measure(args.child))}\n`);
} else {
  const folders = args.models
    ? args.models.split(',').map((f) => path.resolve(REPO_ROOT, f.trim()))
    : [...defaultModelDirs()].reverse();
  const rows: Array<Record<string, number | string>> = [];
  for (let r = 0; r < args.repeats; r++)
    for (const dir of folders) {
      const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1]!, '--child', dir], {
        encoding: 'utf8',
        env: { ...process.env, LOG_LEVEL: 'silent' },
      });
      const row = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number | string>;
      rows.push(row);
      console.log(
        `${String(row.model).padEnd(22)} RSS before ${row.before} MiB, loaded +${Number(row.loaded) - Number(row.before)}, ` +
          `400 captions +${Number(row.short) - Number(row.loaded)} (${row.short_ms} ms), a long text +${Number(row.long) - Number(row.short)}`,
      );
    }
}
