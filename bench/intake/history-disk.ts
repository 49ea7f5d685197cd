/**
 * Disk and engine CPU per metric history point, one month of points in one index (bench/intake.md,
 * "Metric history: cost and disk per point"): the history's own template (a time series index,
 * index-templates/metrics.index.json) against the plain index it replaced (sorted by record and
 * time, no `_source`, a 22-character hashed `_id` for idempotence). The same points, in bulk
 * requests of 1,000 with a refresh every 10, then force-merged to one segment.
 *
 *   npx tsx bench/intake/history-disk.ts [--points 200000] [--records 20000]
 *
 * Needs the local Elasticsearch (ELASTICSEARCH_URL). Deletes its indices afterwards.
 */
import { Client } from '@elastic/elasticsearch';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../lib/service-stack.ts';
import { engineCpuMs } from '../lib/engine-cpu.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: { points: { type: 'string', default: '200000' }, records: { type: 'string', default: '20000' } },
});
const POINTS = Number(args.points);
const RECORDS = Number(args.records);
const es = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200', requestTimeout: 600_000 });
const START = Date.parse('2026-06-01T00:00:00Z');

interface Point {
  id: string;
  at: string;
  followers_count: number;
  following_count: number;
  posts_count: number;
}

/** Each record observed in turn, round after round, through one month. */
function* points(): Generator<Point> {
  for (let k = 0; k < POINTS; k++) {
    const record = k % RECORDS;
    const round = Math.floor(k / RECORDS);
    yield {
      id: `social_account_${String(record).padStart(26, '0')}`,
      at: new Date(START + round * 36 * 3_600_000 + (record % 1000) * 60_000).toISOString(),
      followers_count: 1000 + round * 7 + record,
      following_count: 300,
      posts_count: 400 + round,
    };
  }
}

async function measure(
  name: string,
  body: { settings: Record<string, unknown>; mappings: Record<string, unknown> },
  write: (index: string, p: Point) => [object, object],
) {
  await es.indices.delete({ index: name, ignore_unavailable: true });
  await es.indices.create({
    index: name,
    settings: { ...body.settings, number_of_replicas: 0 },
    mappings: body.mappings,
  });
  const cpuBefore = await engineCpuMs(es);
  const started = performance.now();
  let operations: object[] = [];
  let requests = 0;
  const flush = async () => {
    if (operations.length === 0) return;
    const result = await es.bulk({ operations, filter_path: 'errors,items.*.error' });
    if (result.errors) throw new Error(`${name}: bulk failed: ${JSON.stringify(result.items).slice(0, 300)}`);
    operations = [];
    if (++requests % 10 === 0) await es.indices.refresh({ index: name });
  };
  for (const p of points()) {
    operations.push(...write(name, p));
    if (operations.length >= 2000) await flush();
  }
  await flush();
  await es.indices.refresh({ index: name });
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = (await engineCpuMs(es)) - cpuBefore;
  await es.indices.forcemerge({ index: name, max_num_segments: 1 });
  await es.indices.refresh({ index: name });
  const stats = await es.indices.stats({ index: name, metric: ['store', 'docs'] });
  const docs = stats._all.primaries?.docs?.count ?? 0;
  const bytes = stats._all.primaries?.store?.size_in_bytes ?? 0;
  await es.indices.delete({ index: name });
  return {
    index: name,
    points: docs,
    seconds: Math.round(seconds * 10) / 10,
    engine_cpu_us_per_point: Math.round((cpuMs * 1000) / docs),
    bytes_per_point: Math.round((bytes / docs) * 10) / 10,
  };
}

const template = JSON.parse(readFileSync(path.join(REPO_ROOT, 'index-templates/metrics.index.json'), 'utf8')) as {
  template: { settings: Record<string, unknown>; mappings: Record<string, unknown> };
};
const counters = { type: 'long', index: false };
try {
  const results = [
    await measure('bench-history-disk-series', template.template, (index, p) => [
      { create: { _index: index } },
      {
        id: p.id,
        '@timestamp': p.at,
        followers_count: p.followers_count,
        following_count: p.following_count,
        posts_count: p.posts_count,
      },
    ]),
    await measure(
      'bench-history-disk-plain',
      {
        settings: { 'index.sort.field': ['id', 'at'], 'index.sort.order': ['asc', 'asc'] },
        mappings: {
          dynamic: 'strict',
          _source: { enabled: false },
          properties: {
            id: { type: 'keyword' },
            at: { type: 'date' },
            followers_count: counters,
            following_count: counters,
            posts_count: counters,
          },
        },
      },
      (index, p) => [
        {
          create: {
            _index: index,
            _id: createHash('sha256').update(`${p.id}@${p.at}`).digest('base64url').slice(0, 22),
          },
        },
        p,
      ],
    ),
  ];
  console.log(JSON.stringify({ points: POINTS, records: RECORDS, results }, null, 2));
} finally {
  await es.close();
}
