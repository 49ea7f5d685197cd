/**
 * Long texts through the intake (issue 32, part 2): posts whose captions are SciFact abstracts
 * (title and abstract, ~250 words), sent in one waited request of `--posts` posts to an API and a
 * worker in this process, timed from the request to its answer. Reports the seconds, milliseconds
 * per post and microseconds of process CPU per word; `--embeddings` loads the model (`--wait
 * vectors` then waits for the vectors too; `true`, the default, lets them follow). For a profile,
 * run it under `node --cpu-prof`:
 *
 *   npx tsx bench/intake/long-text.ts [--posts 1000] [--embeddings] [--wait true|vectors]
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/intake/long-text.ts
 */
import path from 'node:path';
import { loadCorpus, REPO_ROOT, scifactDir } from '../relevance/beir.ts';
import { authorObservations, postObservation } from '../relevance/beir-observations.ts';
import {
  destroyPrefix,
  harnessRuntime,
  sendObservations,
  startLoader,
  benchLogger,
  harnessEnv,
} from '../lib/in-process-service.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 1000, min: 1 },
    embeddings: { type: 'boolean' },
    wait: { type: 'string', default: 'true' },
  },
});
if (!['true', 'vectors'].includes(args.wait)) throw new Error('--wait is true or vectors');
const POSTS = args.posts;
const prefix = `bench-long-text-${process.pid}`;
const modelDir = path.resolve(REPO_ROOT, '../shared/models/all-MiniLM-L6-v2');
const env = harnessEnv(prefix, {}, args.embeddings ? { MODEL_DIR: modelDir } : { EMBEDDINGS: 'off' });
const logger = benchLogger();
const say = (line: string) => process.stdout.write(`${line}\n`);

const collection = `longtext${process.pid}`;
const docs = (await loadCorpus(scifactDir())).slice(0, POSTS);
const posts = docs.map((d) => postObservation(d, { collection }));
const words = posts.reduce((n, p) => n + String(p['caption']).split(/\s+/).length, 0);

const runtime = harnessRuntime(env, logger);
try {
  await runtime.indexAdmin.apply();
  const { key } = await runtime.keys.create({ owner: 'bench@example.com', name: 'long text', scopes: ['ingest'] });
  const loader = await startLoader(runtime, logger, { holdEmbeddings: false });
  try {
    await sendObservations(loader.node, key, authorObservations({ collection }), { wait: true });
    const started = performance.now();
    const cpu = process.cpuUsage();
    const response = await fetch(`${loader.node.baseUrl}/internal/v1/social/observations?wait=${args.wait}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
      body: posts.map((o) => JSON.stringify(o)).join('\n'),
    });
    const seconds = (performance.now() - started) / 1000;
    if (response.status !== 200) throw new Error(`intake answered ${response.status}: ${await response.text()}`);
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    say(
      JSON.stringify({
        posts: posts.length,
        words,
        words_per_post: Math.round(words / posts.length),
        embeddings: args.embeddings,
        wait: args.wait,
        seconds: +seconds.toFixed(2),
        ms_per_post: +((seconds * 1000) / posts.length).toFixed(2),
        process_cpu_ms_per_post: +(cpuMs / posts.length).toFixed(2),
        process_cpu_us_per_word: +((cpuMs * 1000) / words).toFixed(2),
      }),
    );
  } finally {
    await loader.close();
  }
} finally {
  await destroyPrefix(runtime);
  await runtime.close();
}
