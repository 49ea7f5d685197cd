/**
 * One key's burst and another key's search (bench/search.md, "One key's burst and another's
 * search"): against a running API node (`npm start`), key B's hybrid searches one at a time, alone
 * and then while key A keeps `--burst` searches in flight; B's p50 and p90 each way, and A's answers
 * by status. Give A a budget its burst does not exhaust (`npx social-search keys limit <id>
 * --search 1000000`) to measure the share, or a spent one (`--search 5`) to measure a key that
 * ignores its 429s (bench/search.md, "A key that ignores its 429s"). `--rotate-a` makes A present
 * a new key each request (a counter as the last 8 characters of A's secret: a well-formed key of
 * A's ID that is not A's), as a client guessing keys or minting them wrongly does (bench/search.md,
 * "A client presenting a new key each time").
 *
 *   npx tsx bench/search/key-burst.ts --key-a KEY --key-b KEY [--url http://127.0.0.1:8080] [--burst 32] [--searches 40] [--rotate-a]
 */
import { Pool } from 'undici';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';

const args = cli({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    'key-a': { type: 'string', default: '' },
    'key-b': { type: 'string', default: '' },
    burst: { type: 'int', default: 32, min: 1 },
    searches: { type: 'int', default: 40, min: 1 },
    'rotate-a': { type: 'boolean' },
  },
});
if (!args['key-a'] || !args['key-b']) throw new Error('--key-a and --key-b: two API keys with the search scope');
const pool = new Pool(args.url, { connections: args.burst + 1 });
const TOPICS = [
  'skincare routine for oily skin',
  'budget travel tips',
  'home workout without equipment',
  'sourdough bread starter',
  'gaming pc build',
  'candle making soy wax',
  'dog training tips',
  'vegan meal prep',
  'photography for beginners',
  'minimalist home decor',
];

/** One hybrid search (distinct texts, so no query vector comes from a cache): its time and status. */
async function search(key: string, i: number): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await pool.request({
    method: 'POST',
    path: '/v1/social/posts/search',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ post: { query: `${TOPICS[i % TOPICS.length]} ${i}` }, limit: 20 }),
  });
  await response.body.text();
  return { ms: performance.now() - started, status: response.statusCode };
}

async function steadyB(from: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < args.searches; i++) times.push((await search(args['key-b'], from + i)).ms);
  return times;
}

const alone = await steadyB(100_000);
let stop = false;
let next = 0;
const answers: Record<number, number> = {};
const burst = Array.from({ length: args.burst }, async () => {
  while (!stop) {
    const i = next++;
    const { status } = await search(
      args['rotate-a'] ? `${args['key-a'].slice(0, -8)}${String(i).padStart(8, '0')}` : args['key-a'],
      i,
    );
    answers[status] = (answers[status] ?? 0) + 1;
  }
});
await new Promise((resolve) => setTimeout(resolve, 300));
const during = await steadyB(200_000);
stop = true;
await Promise.all(burst);
await pool.close();
const p = (xs: number[], q: number) => Math.round(quantile(xs, q) * 10) / 10;
console.table([
  { 'key B': 'alone', 'p50 ms': p(alone, 0.5), 'p90 ms': p(alone, 0.9) },
  { 'key B': `during A's ${args.burst} in flight`, 'p50 ms': p(during, 0.5), 'p90 ms': p(during, 0.9) },
]);
console.log(`key A's answers meanwhile: ${JSON.stringify(answers)}`);
