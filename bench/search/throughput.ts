/**
 * Search throughput at scale (bench/search.md, "Search throughput through two API nodes"):
 * requests/s through two API nodes against the same searches sent straight to Elasticsearch, in
 * the same run, at the same fixed concurrency.
 *
 *   npm run bench:throughput -- [--posts 20000] [--connections 16] [--seconds 20] [--rounds 3]
 *
 * 1. Two `social-search serve` processes and a worker (children, fresh prefix, production mode,
 *    BM25 ranking: no model), a dataset seeded through the intake; the worker then stops.
 * 2. A fixed list of search bodies (post queries, filters-only post searches, account searches)
 *    is sent once through an in-process API node on the same prefix while the Elasticsearch
 *    client's diagnostics record every request it makes: the raw side replays exactly those
 *    `_search` bodies, on points in time of its own over the same indices.
 * 3. Rounds of `--seconds` each, alternating which side goes first: autocannon with
 *    `--connections` keep-alive connections cycling through the bodies, round-robin over the two
 *    API nodes, then over the Elasticsearch node(s) (ELASTICSEARCH_URLS or ELASTICSEARCH_URL).
 *    CPU seconds of the API processes, Elasticsearch and the load generator are read per phase.
 *
 * `--engine-cpus 0 --service-cpus 1` (taskset lists) models the deployment the ratio is about, API
 * nodes on machines of their own: every Elasticsearch process is pinned to the engine CPUs, the API
 * processes, Redis and the load generator to the service CPUs, for both sides alike (affinities
 * restored at the end). Without them everything shares every CPU, and the API's own CPU is taken
 * from the engine.
 *
 * Writes bench/results/search-throughput[-LABEL].json; prints a table. Deletes what it made.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { generateObservations } from '../../src/seed/generator.ts';
import { Rng } from '../../src/seed/random.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { cpuSeconds, machineBusySeconds } from '../lib/processes.ts';
import { localRedisPid, pinEngineAndService } from '../lib/cpu-pinning.ts';
import { startLoad, type LoadRequest, type LoadResult } from '../lib/load.ts';
import { elasticsearchUrls, log, REPO_ROOT, startStack, type ServiceStack } from '../lib/service-stack.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';
import { seedThroughIntake } from '../lib/stack-data.ts';
import { snapshotService } from '../lib/service-snapshot.ts';
import { queryTexts } from '../soak/mix.ts';
import { cli } from '../lib/args.ts';
import { writeResult } from '../lib/measure.ts';

const args = cli({
  options: {
    posts: { type: 'int', default: 20000, min: 1 },
    connections: { type: 'int', default: 16, min: 1 },
    seconds: { type: 'int', default: 20, min: 1 },
    rounds: { type: 'int', default: 3, min: 1 },
    bodies: { type: 'int', default: 150, min: 1 },
    seed: { type: 'int', default: 3, min: 0 },
    'node-arg': { type: 'list' },
    'service-commit': { type: 'string' },
    launcher: { type: 'string' },
    'engine-cpus': { type: 'string' },
    'service-cpus': { type: 'string' },
    label: { type: 'string' },
  },
});
if (Boolean(args['engine-cpus']) !== Boolean(args['service-cpus']))
  throw new Error('--engine-cpus and --service-cpus go together');
const POSTS = args.posts;
const CONNECTIONS = args.connections;
const SECONDS = args.seconds;
const ROUNDS = args.rounds;
const BODIES = args.bodies;
const SEED = args.seed;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The service environment of both API nodes and of the in-process node that records the engine requests. */
const SERVICE_ENV = {
  NODE_ENV: 'production',
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  // Counts every search (its Redis cost is the service's) but never trips.
  RATE_LIMIT_SEARCH_PER_MINUTE: '100000000',
  // One key stands for every customer: no per-key share of the node either.
  SEARCH_IN_FLIGHT_PER_KEY: '0',
  EMBEDDINGS: 'off',
  SEARCH_RANKING: 'lexical',
};

interface Search {
  kind: 'post_query' | 'post_filters' | 'account_filters';
  path: string;
  body: unknown;
}

/** A fixed, seeded list of searches: a third each of post queries (with filters half the time), filters-only post searches, account searches. */
function searches(count: number): Search[] {
  const rng = new Rng(SEED);
  const texts = queryTexts();
  const out: Search[] = [];
  for (let i = 0; i < count; i++) {
    const kind = (['post_query', 'post_filters', 'account_filters'] as const)[i % 3]!;
    if (kind === 'post_query') {
      const post: Record<string, unknown> = { query: rng.pick(texts) };
      if (rng.chance(0.5)) post['filters'] = { views: { gte: rng.pick([100, 1000, 10_000]) } };
      out.push({ kind, path: '/v1/social/posts/search', body: { post, limit: 20 } });
    } else if (kind === 'post_filters') {
      out.push({
        kind,
        path: '/v1/social/posts/search',
        body: {
          post: {
            filters: { format: { in: [rng.pick(['reel', 'image', 'carousel'])] }, views: { gte: rng.int(0, 20_000) } },
          },
          sort: { by: rng.pick(['views', 'posted_at', 'likes']), order: 'desc' },
          limit: 20,
        },
      });
    } else {
      out.push({
        kind,
        path: '/v1/social/accounts/search',
        body: {
          account: {
            filters: { niches: { contains_any: [rng.pick(NICHES).id] }, followers_count: { gte: rng.int(0, 50_000) } },
          },
          sort: { by: 'followers_count', order: 'desc' },
          limit: 20,
        },
      });
    }
  }
  return out;
}

/** What the service sent Elasticsearch for one search: its `_search` requests, and the index set of each point in time. */
interface Recorded {
  search: Search;
  engine: Array<{ path: string; body: Record<string, unknown> }>;
}

/**
 * Sends each search once through an in-process API node on the stack's prefix and records the
 * Elasticsearch requests it makes (the client's diagnostic events see each request as sent).
 * Returns the searches with exactly one `_search` each (all of these kinds today) and, per point
 * in time the node opened, the index expression it was opened on.
 */
async function record(
  stack: ServiceStack,
  list: Search[],
): Promise<{ recorded: Recorded[]; pitIndex: Map<string, string> }> {
  const node = await startInProcessApi({
    name: 'throughput recorder',
    overrides: {
      ...SERVICE_ENV,
      ELASTICSEARCH_URL: elasticsearchUrls()[0]!,
      INDEX_PREFIX: stack.prefix,
      REDIS_PREFIX: stack.prefix,
      LOG_LEVEL: 'silent',
    },
    listen: false,
    scopes: [],
  });
  const api = node.api!;
  const client = node.service.connections.elasticsearch();
  let current: Array<{ path: string; body: Record<string, unknown> }> = [];
  const pitIndex = new Map<string, string>();
  client.diagnostic.on('request', (_error, event) => {
    const params = event?.meta.request.params;
    if (params?.path.endsWith('/_search') && typeof params.body === 'string')
      current.push({ path: params.path, body: JSON.parse(params.body) as Record<string, unknown> });
  });
  client.diagnostic.on('response', (_error, event) => {
    const params = event?.meta.request.params;
    const id = (event?.body as { id?: string } | undefined)?.id;
    if (params?.path.endsWith('/_pit') && id)
      pitIndex.set(id, decodeURIComponent(params.path.slice(1, -'/_pit'.length)));
  });
  const recorded: Recorded[] = [];
  let dropped = 0;
  for (const search of list) {
    current = [];
    const response = await api.app.inject({
      method: 'POST',
      url: search.path,
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(search.body),
    });
    if (response.statusCode !== 200)
      throw new Error(
        `${search.path} ${JSON.stringify(search.body)} answered ${response.statusCode}: ${response.body}`,
      );
    if (current.length === 1) recorded.push({ search, engine: current });
    else dropped++;
  }
  if (dropped > 0) log(`note: ${dropped} searches made more than one engine search and are left out`);
  await node.close();
  return { recorded, pitIndex };
}

/** The raw side's bodies: the recorded ones on points in time the bench opens over the same index sets. */
async function rawBodies(
  stack: ServiceStack,
  recorded: Recorded[],
  pitIndex: Map<string, string>,
): Promise<{ bodies: string[]; pits: string[] }> {
  const ours = new Map<string, string>();
  const out: string[] = [];
  for (const { engine } of recorded) {
    const body = structuredClone(engine[0]!.body) as { pit?: { id: string; keep_alive?: string } };
    if (body.pit) {
      const index = pitIndex.get(body.pit.id);
      if (!index) throw new Error('a recorded search ran on a point in time whose index is unknown');
      let id = ours.get(index);
      if (!id) ours.set(index, (id = (await stack.es.openPointInTime({ index, keep_alive: '10m' })).id));
      body.pit = { ...body.pit, id };
    }
    out.push(JSON.stringify(body));
  }
  return { bodies: out, pits: [...ours.values()] };
}

/** What every node of the cluster counted so far: CPU seconds, shard queries and fetches with their time, HTTP connections opened. */
interface EngineCounters {
  cpu_s: number;
  queries: number;
  query_ms: number;
  fetches: number;
  fetch_ms: number;
  connections: number;
}

async function engineCounters(stack: ServiceStack): Promise<EngineCounters> {
  const stats = await stack.es.nodes.stats({ metric: ['process', 'indices', 'http'], index_metric: ['search'] });
  const out: EngineCounters = { cpu_s: 0, queries: 0, query_ms: 0, fetches: 0, fetch_ms: 0, connections: 0 };
  for (const node of Object.values(stats.nodes)) {
    out.cpu_s += (node.process?.cpu?.total_in_millis ?? 0) / 1000;
    out.queries += node.indices?.search?.query_total ?? 0;
    out.query_ms += node.indices?.search?.query_time_in_millis ?? 0;
    out.fetches += node.indices?.search?.fetch_total ?? 0;
    out.fetch_ms += node.indices?.search?.fetch_time_in_millis ?? 0;
    out.connections += node.http?.total_opened ?? 0;
  }
  return out;
}

interface Phase {
  side: 'api' | 'raw';
  round: number;
  result: LoadResult;
  /** CPU seconds during the phase; `other`: the rest of the machine (other people's work, the kernel's network stack). */
  cpu: { api_s: number; redis_s: number; elasticsearch_s: number; load_generator_s: number; other_s: number };
  /** Per request answered: shard queries and fetches Elasticsearch ran, their time (ms), HTTP connections it accepted. */
  engine: { queries: number; query_ms: number; fetches: number; fetch_ms: number; connections: number };
}

/** One timed phase of one side, with the CPU each party spent during it. */
async function phase(
  stack: ServiceStack,
  side: 'api' | 'raw',
  roundNo: number,
  seconds: number,
  requests: LoadRequest[],
  headers: Record<string, string>,
): Promise<Phase> {
  const apiCpu = () => stack.apis.reduce((sum, a) => sum + (cpuSeconds(a.child.pid) ?? 0), 0);
  const ownCpu = () => (process.cpuUsage().user + process.cpuUsage().system) / 1e6;
  const redis = await localRedisPid(stack.redis);
  const redisCpu = () => (redis === null ? 0 : (cpuSeconds(redis) ?? 0));
  const before = {
    api: apiCpu(),
    redis: redisCpu(),
    es: await engineCounters(stack),
    own: ownCpu(),
    busy: machineBusySeconds(),
  };
  let next = 0;
  const load = startLoad({
    urls: side === 'api' ? stack.apis.map((a) => a.url) : elasticsearchUrls(),
    connections: CONNECTIONS,
    rate: null,
    durationS: seconds,
    headers,
    next: () => requests[next++ % requests.length]!,
  });
  const result = await Promise.race([load.done, stack.failure]);
  const after = {
    api: apiCpu(),
    redis: redisCpu(),
    es: await engineCounters(stack),
    own: ownCpu(),
    busy: machineBusySeconds(),
  };
  const cpu = {
    api_s: round(after.api - before.api, 1),
    redis_s: round(after.redis - before.redis, 1),
    elasticsearch_s: round(after.es.cpu_s - before.es.cpu_s, 1),
    load_generator_s: round(after.own - before.own, 1),
    other_s: 0,
  };
  const perRequest = (key: keyof EngineCounters) =>
    round((after.es[key] - before.es[key]) / Math.max(1, result.requests), 3);
  const engine = {
    queries: perRequest('queries'),
    query_ms: perRequest('query_ms'),
    fetches: perRequest('fetches'),
    fetch_ms: perRequest('fetch_ms'),
    connections: perRequest('connections'),
  };
  cpu.other_s = round(
    after.busy - before.busy - cpu.api_s - cpu.redis_s - cpu.elasticsearch_s - cpu.load_generator_s,
    1,
  );
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(
      `${side} phase: ${result.non2xx} non-2xx answers, ${result.errors} errors: ${JSON.stringify(result.kinds)}`,
    );
  log(
    `round ${roundNo} ${side}: ${result.requests_per_s} req/s, p50 ${result.latency.p50_ms} ms, p99 ${result.latency.p99_ms} ms; CPU s api ${cpu.api_s}, Redis ${cpu.redis_s}, ES ${cpu.elasticsearch_s}, load ${cpu.load_generator_s}, other ${cpu.other_s}; per request: ES shard queries ${engine.queries} (${engine.query_ms} ms), fetches ${engine.fetches} (${engine.fetch_ms} ms), connections ${engine.connections}`,
  );
  return { side, round: roundNo, result, cpu, engine };
}

async function main(): Promise<void> {
  const root = args['service-commit'] ? snapshotService(args['service-commit']).dir : REPO_ROOT;
  process.once('exit', () => root !== REPO_ROOT && rmSync(root, { recursive: true, force: true }));
  const stack = await startStack({
    label: 'throughput',
    apis: 2,
    worker: true,
    env: SERVICE_ENV,
    nodeArgs: args['node-arg'],
    root,
    ...(args.launcher === 'node' || args.launcher === 'bin' ? { launcher: args.launcher } : {}),
  });
  try {
    const t = performance.now();
    const seeded = await seedThroughIntake(
      stack,
      generateObservations({ posts: POSTS, accounts: Math.max(1, Math.round(POSTS / 10)), seed: SEED }),
      POSTS,
    );
    log(
      `seeded ${seeded.observations} observations (${seeded.posts} posts) in ${round((performance.now() - t) / 1000, 1)} s; stopping the worker`,
    );
    await stack.stop(stack.worker!);
    const { recorded, pitIndex } = await record(stack, searches(BODIES));
    const raw = await rawBodies(stack, recorded, pitIndex);
    const apiRequests: LoadRequest[] = recorded.map((r) => ({
      kind: r.search.kind,
      method: 'POST',
      path: r.search.path,
      body: JSON.stringify(r.search.body),
      contentType: 'application/json',
    }));
    const rawRequests: LoadRequest[] = recorded.map((r, i) => ({
      kind: r.search.kind,
      method: 'POST',
      path: '/_search',
      body: raw.bodies[i]!,
      contentType: 'application/json',
    }));
    const apiHeaders = { authorization: `Bearer ${stack.key}` };
    let unpin = () => undefined as void;
    if (args['engine-cpus']) {
      const redis = await localRedisPid(stack.redis);
      const pinned = await pinEngineAndService(stack.es, args['engine-cpus'], args['service-cpus']!, [
        ...stack.apis.map((a) => a.child.pid),
        ...(redis === null ? [] : [redis]),
        process.pid,
      ]);
      log(`pinned ${pinned.description}`);
      unpin = pinned.unpin;
      process.once('exit', unpin);
    }
    log(`${recorded.length} searches recorded; warming up both sides`);
    await phase(stack, 'api', 0, 5, apiRequests, apiHeaders);
    await phase(stack, 'raw', 0, 5, rawRequests, {});
    const phases: Phase[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const order = r % 2 === 1 ? (['api', 'raw'] as const) : (['raw', 'api'] as const);
      for (const side of order)
        phases.push(
          await phase(
            stack,
            side,
            r,
            SECONDS,
            side === 'api' ? apiRequests : rawRequests,
            side === 'api' ? apiHeaders : {},
          ),
        );
    }
    unpin();
    for (const id of raw.pits) await stack.es.closePointInTime({ id }).catch(() => undefined);
    const sum = (side: 'api' | 'raw', f: (p: Phase) => number) =>
      phases.filter((p) => p.side === side).reduce((s, p) => s + f(p), 0);
    const rps = (side: 'api' | 'raw') => sum(side, (p) => p.result.requests) / sum(side, (p) => p.result.duration_s);
    const perRequestMs = (side: 'api' | 'raw', f: (p: Phase) => number) =>
      round((1000 * sum(side, f)) / sum(side, (p) => p.result.requests), 3);
    const roundRatios = Array.from({ length: ROUNDS }, (_, i) => {
      const of = (side: 'api' | 'raw') =>
        phases.find((p) => p.side === side && p.round === i + 1)!.result.requests_per_s;
      return round(of('api') / of('raw'));
    });
    const summary = {
      date: new Date().toISOString(),
      options: {
        posts: POSTS,
        connections: CONNECTIONS,
        seconds: SECONDS,
        rounds: ROUNDS,
        searches: recorded.length,
        elasticsearch: elasticsearchUrls(),
        engine_cpus: args['engine-cpus'] ?? null,
        service_cpus: args['service-cpus'] ?? null,
        index_shards: process.env['INDEX_SHARDS'] ?? null,
        index_replicas: process.env['INDEX_REPLICAS'] ?? null,
      },
      api_requests_per_s: round(rps('api'), 1),
      raw_requests_per_s: round(rps('raw'), 1),
      ratio: round(rps('api') / rps('raw')),
      round_ratios: roundRatios,
      cpu_ms_per_request: {
        api: {
          api_processes: perRequestMs('api', (p) => p.cpu.api_s),
          redis: perRequestMs('api', (p) => p.cpu.redis_s),
          elasticsearch: perRequestMs('api', (p) => p.cpu.elasticsearch_s),
          load_generator: perRequestMs('api', (p) => p.cpu.load_generator_s),
          other: perRequestMs('api', (p) => p.cpu.other_s),
        },
        raw: {
          redis: perRequestMs('raw', (p) => p.cpu.redis_s),
          elasticsearch: perRequestMs('raw', (p) => p.cpu.elasticsearch_s),
          load_generator: perRequestMs('raw', (p) => p.cpu.load_generator_s),
          other: perRequestMs('raw', (p) => p.cpu.other_s),
        },
      },
      phases: phases.map((p) => ({
        side: p.side,
        round: p.round,
        requests_per_s: p.result.requests_per_s,
        latency: p.result.latency,
        kinds: p.result.kinds,
        cpu: p.cpu,
        engine: p.engine,
      })),
    };
    writeResult(`search-throughput${args.label ? `-${args.label}` : ''}.json`, summary);
    console.table(
      phases.map((p) => ({
        round: p.round,
        side: p.side,
        'req/s': p.result.requests_per_s,
        'p50 ms': p.result.latency.p50_ms,
        'p99 ms': p.result.latency.p99_ms,
        ...p.cpu,
      })),
    );
    process.stdout.write(
      `${JSON.stringify({ api_requests_per_s: summary.api_requests_per_s, raw_requests_per_s: summary.raw_requests_per_s, ratio: summary.ratio, round_ratios: roundRatios, cpu_ms_per_request: summary.cpu_ms_per_request })}\n`,
    );
  } finally {
    await stack.cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`throughput bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
