/**
 * The matching side alone (reading the posts, as the recovery pass does, and matching them; no
 * events): 1,000 saved
 * searches shaped like match-lag.ts's against batches of random posts of an existing index (the
 * 1M-post bench index by default; `match-lag.ts --keep` leaves one), several rounds; reports time,
 * CPU per 1,000 posts (this process's and the engine's) and the pairs found.
 *
 *   INDEX_PREFIX=bench npx tsx bench/alerts/pass-cost.ts [--searches 1000] [--posts 1000] [--rounds 3]
 */
import { Client } from '@elastic/elasticsearch';
import type { AlertQuery } from '../../src/engine/alerts.ts';
import type { PostRecord } from '../../src/domain/records.ts';
import { createAlertMatching } from '../../src/engine/elasticsearch/writes/alert-matching.ts';
import { createWrittenProjections } from '../../src/engine/elasticsearch/documents/written-projections.ts';
import { indexNames, postVectorNames } from '../../src/engine/elasticsearch/names.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { savedSearchShapes } from './saved-search-shapes.ts';
import { engineCpuMs } from '../lib/engine-cpu.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    searches: { type: 'int', default: 1000, min: 1 },
    posts: { type: 'int', default: 1000, min: 1 },
    rounds: { type: 'int', default: 3, min: 1 },
  },
});
const prefix = process.env['INDEX_PREFIX'] ?? 'bench';
const client = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' });
const say = (line: string) => process.stdout.write(`${line}\n`);

const posts = [...generateObservations({ posts: 20_000, accounts: 1_000, seed: 5 })].filter(
  (o) => o['kind'] === 'post',
);
const shapes = savedSearchShapes(posts);
const queries: AlertQuery[] = Array.from({ length: args.searches }, (_, i) => {
  const post = shapes.post(i);
  const request = parsePostSearchRequest({ post });
  if (request.kind !== 'initial') throw new Error('unreachable');
  return { id: `s${i}`, search: request.search, vector: null };
});

const postsIndex = indexNames(prefix, 'posts').read;
const matching = createAlertMatching({
  client,
  postsIndex,
  accountsIndex: indexNames(prefix, 'accounts').read,
  similarityFloor: null,
  projections: createWrittenProjections(),
  postVectorsIndex: postVectorNames(prefix).read,
});
for (let round = 0; round < args.rounds; round++) {
  const sample = await client.search({
    index: postsIndex,
    size: args.posts,
    _source: false,
    query: { function_score: { functions: [{ random_score: { seed: round, field: '_seq_no' } }] } },
  });
  const ids = sample.hits.hits.map((h) => h._id!);
  const started = performance.now();
  const cpuAtStart = { engine: await engineCpuMs(client), process: process.cpuUsage() };
  const read = await client.mget<{ record: PostRecord }>({ index: postsIndex, ids, realtime: true });
  const records = read.docs.flatMap((doc) => ('found' in doc && doc.found && doc._source ? [doc._source.record] : []));
  const found = await matching.match(records, queries);
  const ms = performance.now() - started;
  const engineS = ((await engineCpuMs(client)) - cpuAtStart.engine) / 1000;
  const used = process.cpuUsage(cpuAtStart.process);
  const processS = (used.user + used.system) / 1e6;
  const per1000 = (s: number) => ((s * 1000) / ids.length).toFixed(3);
  let pairs = 0;
  for (const set of found.values()) pairs += set.size;
  say(
    `round ${round}: ${ids.length} posts × ${queries.length} searches: ${ms.toFixed(0)} ms, ` +
      `CPU-s per 1,000 posts: engine ${per1000(engineS)} + process ${per1000(processS)}, ${pairs} pairs`,
  );
}
