import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { Pool } from 'undici';
import { startInProcessApi } from './lib/in-process-api.ts';
import { generateObservations } from '../src/seed/generator.ts';
const node = await startInProcessApi({ name: 'evl', defaults: { RATE_LIMIT_READ_PER_MINUTE: '10000000', RATE_LIMIT_SEARCH_PER_MINUTE: '10000000' }, scopes: ['search', 'ingest'] });
const lines: string[] = [];
for (const o of generateObservations({ posts: 7000, accounts: 700, seed: 9 })) { lines.push(JSON.stringify(o)); if (lines.length >= 7000) break; }
const bodies = Array.from({ length: 7 }, (_, i) => lines.slice(i * 1000, (i + 1) * 1000).join('\n') + '\n');
const pool = new Pool(node.address, { connections: 8 });
const auth = { authorization: `Bearer ${node.key}` };
const lat: number[] = [];
let stop = false;
const searches = (async () => {
  while (!stop) {
    const t = performance.now();
    const r = await pool.request({ method: 'POST', path: '/v1/social/posts/search', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'skincare routine', limit: 20 }) });
    await r.body.text();
    lat.push(performance.now() - t);
    await new Promise((res) => setTimeout(res, 20));
  }
})();
await new Promise((r) => setTimeout(r, 2000));
lat.length = 0;
const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.setSamplingInterval', { interval: 200 }); await s.post('Profiler.start');
const t0 = performance.now();
let next = 0;
await Promise.all(Array.from({ length: 3 }, async () => {
  while (next < bodies.length) {
    const b = bodies[next++]!;
    const r = await pool.request({ method: 'POST', path: '/internal/v1/social/observations', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: b });
    const txt = await r.body.text();
    if (r.statusCode >= 300) console.log(r.statusCode, txt.slice(0, 200));
  }
}));
const sendMs = performance.now() - t0;
const { profile } = await s.post('Profiler.stop'); h.disable();
writeFileSync('/tmp/prof-evl/p.cpuprofile', JSON.stringify(profile));
stop = true; await searches;
lat.sort((a, b) => a - b);
console.log(`sent in ${sendMs.toFixed(0)} ms; searches during: n=${lat.length} p50 ${lat[Math.floor(lat.length / 2)]?.toFixed(1)} max ${lat.at(-1)?.toFixed(1)}; loop delay p50 ${(h.percentile(50) / 1e6).toFixed(1)} p99 ${(h.percentile(99) / 1e6).toFixed(1)} max ${(h.max / 1e6).toFixed(1)} ms`);
await pool.close(); process.exit(0);
