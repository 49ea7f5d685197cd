/**
 * What many intake requests at once cost an API node's memory: one API node (no worker; the
 * observations wait in the queue) started as `npx social-search serve` starts it (the launcher's
 * heap settings), and rounds of `--in-flight` requests of `--per-request` observations sent at
 * once, each round `--rounds` times over. Prints, per concurrency, the node's RSS peak, the answers
 * by status and the slowest answer; stops at the first round the node does not survive.
 *
 *   npx tsx bench/intake/concurrent-bodies.ts [--in-flight 1,4,8,16,32] [--per-request 5000] [--rounds 2]
 */
import path from 'node:path';
import { Pool } from 'undici';
import { openSync, readSync } from 'node:fs';
import { cli } from '../lib/args.ts';
import { generateLoad } from '../lib/intake-load.ts';
import { log, startStack } from '../lib/service-stack.ts';

const args = cli({
  options: {
    'in-flight': { type: 'string', default: '1,4,8,16,32' },
    'per-request': { type: 'int', default: 5000, min: 1 },
    rounds: { type: 'int', default: 2, min: 1 },
  },
});
const levels = args['in-flight'].split(',').map(Number);
const most = Math.max(...levels);
const stack = await startStack({ label: 'bodies', apis: 1, worker: false, env: {}, rssIntervalMs: 50 });
try {
  const load = generateLoad(
    {
      posts: Math.ceil((most * args['per-request']) / 2),
      accounts: Math.ceil((most * args['per-request']) / 20),
      seed: 3,
    },
    args['per-request'],
    path.join(stack.scratch, 'bodies.ndjson'),
  );
  const fd = openSync(load.file, 'r');
  const bodies = load.requests.slice(0, most).map((slice) => {
    const buffer = Buffer.allocUnsafe(slice.bytes);
    readSync(fd, buffer, 0, slice.bytes, slice.offset);
    return buffer;
  });
  const mib = (bodies.reduce((a, b) => a + b.length, 0) / bodies.length / 2 ** 20).toFixed(1);
  log(`${bodies.length} bodies of ${args['per-request']} observations, ${mib} MiB each`);
  const api = stack.apis[0]!;
  const pool = new Pool(api.url, { connections: most, pipelining: 1, headersTimeout: 600_000, bodyTimeout: 600_000 });
  const rows: Array<Record<string, unknown>> = [];
  for (const level of levels) {
    stack.rss!.resetWindow();
    const statuses: Record<number, number> = {};
    let slowest = 0;
    for (let round = 0; round < args.rounds; round++) {
      await Promise.all(
        bodies.slice(0, level).map(async (body) => {
          const sent = performance.now();
          const response = await pool.request({
            method: 'POST',
            path: '/internal/v1/social/observations',
            headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
            body,
          });
          await response.body.text();
          slowest = Math.max(slowest, performance.now() - sent);
          statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
        }),
      );
    }
    rows.push({
      'in flight': level,
      'API RSS peak MiB': Math.round(stack.rss!.windowPeak(api.child.pid) ?? 0),
      answers: JSON.stringify(statuses),
      'slowest ms': Math.round(slowest),
    });
    log(JSON.stringify(rows.at(-1)));
  }
  console.table(rows);
  await pool.close();
} finally {
  await stack.cleanup();
}
